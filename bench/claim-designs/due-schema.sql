-- What the due-* designs share (not a design itself): what waits moves to a narrow pushq.due
-- table, filled by a statement-level trigger on INSERT, and pushq.notifications keeps only
-- indexes whose key and predicate neither the claim nor the write-back changes.
DROP INDEX pushq.notifications_due, pushq.notifications_lane_due, pushq.notifications_lease, pushq.notifications_expiry,
           pushq.notifications_finished, pushq.notifications_channel_waiting;
-- the same search by token and retention, by columns neither update changes
DROP INDEX pushq.notifications_token_hash;
CREATE INDEX notifications_token_all ON pushq.notifications (hashtext(device_token), created_at) WHERE device_token IS NOT NULL;
CREATE INDEX notifications_created ON pushq.notifications (created_at);
CREATE TABLE pushq.due (id bigint PRIMARY KEY, lane text NOT NULL, due_at timestamptz NOT NULL);
CREATE INDEX due_order ON pushq.due (lane, due_at, id);
CREATE FUNCTION pushq.due_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO pushq.due (id, lane, due_at) SELECT id, lane, scheduled_at FROM new_rows WHERE status IN ('queued','retrying'); RETURN NULL; END $$;
CREATE TRIGGER notifications_due_enqueue AFTER INSERT ON pushq.notifications REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pushq.due_enqueue();
