-- pushq:lock-retry lock_timeout=200ms tries=100
-- pushq schema, version 33: what waits, in a narrow table of its own (issue 23; the design is
-- docs/performance.md's "A separate due table", `due-delete-marked`).
--
-- pushq.due holds one entry per waiting row (`queued` or `retrying`): its id, lane and due time.
-- Workers of this release claim by walking pushq.due in lane and due order and delete the
-- entries of the rows they take; the row itself is still marked `sending`, `locked_by` and
-- `locked_until`, so SQL, `pushq status` and the dashboard see a row in flight as before. The
-- point: once no worker reads the row's status through an index (a later schema drops those
-- indexes), the claim and the write-back can update the row in place (HOT).
--
-- Producers change nothing: triggers keep pushq.due in step with pushq.notifications.
--   notifications_due_insert   (each INSERT statement) an entry for each waiting row inserted;
--   notifications_due_waiting  (each row an UPDATE makes waiting, or whose due time or lane an
--                              UPDATE changes while it waits: a retry, a reschedule, a row an
--                              operator queues again) its entry, added or moved;
--   notifications_due_ended    (each waiting row an UPDATE ends or cancels) its entry deleted.
-- The claim's and the write-back's updates of rows being sent fire neither row trigger (their
-- WHEN is false), so they cost no trigger call. Entries a worker of the previous release leaves
-- behind when it claims a row through the old indexes (and entries of rows deleted while waiting)
-- are skipped by the claim, which checks the row's status, and deleted by the workers' upkeep.
--
-- Schema 34 fills pushq.due with the rows already waiting, after this commits and the triggers
-- cover every new row. Adding triggers takes SHARE ROW EXCLUSIVE on pushq.notifications for an
-- instant (producers wait for it): under lock-retry, a try that waits more than 200 ms gives way.
CREATE TABLE pushq.due (
    id      bigint      NOT NULL,
    lane    text        NOT NULL,
    due_at  timestamptz NOT NULL,
    CONSTRAINT due_pkey PRIMARY KEY (id)
);
-- The claim's walk: lane after lane (a loose scan), each in due order.
CREATE INDEX due_order ON pushq.due (lane, due_at, id);

CREATE FUNCTION pushq.due_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pushq.due (id, lane, due_at)
    SELECT r.id, r.lane, r.scheduled_at FROM inserted_rows r WHERE r.status IN ('queued', 'retrying')
    ON CONFLICT (id) DO NOTHING;
    RETURN NULL;
END $$;

CREATE FUNCTION pushq.due_waiting() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pushq.due (id, lane, due_at) VALUES (NEW.id, NEW.lane, NEW.scheduled_at)
    ON CONFLICT (id) DO UPDATE SET lane = EXCLUDED.lane, due_at = EXCLUDED.due_at;
    RETURN NULL;
END $$;

CREATE FUNCTION pushq.due_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM pushq.due WHERE id = OLD.id;
    RETURN NULL;
END $$;

CREATE TRIGGER notifications_due_insert AFTER INSERT ON pushq.notifications
    REFERENCING NEW TABLE AS inserted_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pushq.due_inserted();

CREATE TRIGGER notifications_due_waiting AFTER UPDATE OF status, scheduled_at, lane ON pushq.notifications
    FOR EACH ROW
    WHEN (NEW.status IN ('queued', 'retrying')
          AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.scheduled_at IS DISTINCT FROM NEW.scheduled_at
               OR OLD.lane IS DISTINCT FROM NEW.lane))
    EXECUTE FUNCTION pushq.due_waiting();

CREATE TRIGGER notifications_due_ended AFTER UPDATE OF status ON pushq.notifications
    FOR EACH ROW
    WHEN (OLD.status IN ('queued', 'retrying') AND NEW.status NOT IN ('queued', 'retrying', 'sending'))
    EXECUTE FUNCTION pushq.due_ended();
