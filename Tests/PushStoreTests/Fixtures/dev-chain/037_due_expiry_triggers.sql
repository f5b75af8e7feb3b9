-- pushq:lock-retry lock_timeout=200ms tries=100
-- pushq schema, version 37: the triggers of pushq.due keep each entry's expiry (schema 36's
-- column) as they keep its lane and due time.
--
-- due_inserted and due_waiting copy the row's `expires_at`; a new trigger,
-- notifications_due_expiry, moves a waiting row's entry when an UPDATE changes only its expiry
-- (when the status, due time or lane change too, notifications_due_waiting already does). The
-- claim's and the write-back's updates do not set `expires_at`: neither trigger fires for them.
--
-- CREATE OR REPLACE FUNCTION takes no table lock; CREATE TRIGGER takes SHARE ROW EXCLUSIVE on
-- pushq.notifications for an instant (producers wait for it, readers do not), at most 200 ms at a
-- time. Nothing else is locked.
CREATE OR REPLACE FUNCTION pushq.due_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pushq.due (id, lane, due_at, expires_at)
    SELECT r.id, r.lane, r.scheduled_at, r.expires_at FROM inserted_rows r WHERE r.status IN ('queued', 'retrying')
    ON CONFLICT (id) DO NOTHING;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION pushq.due_waiting() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pushq.due (id, lane, due_at, expires_at) VALUES (NEW.id, NEW.lane, NEW.scheduled_at, NEW.expires_at)
    ON CONFLICT (id) DO UPDATE SET lane = EXCLUDED.lane, due_at = EXCLUDED.due_at, expires_at = EXCLUDED.expires_at;
    RETURN NULL;
END $$;

CREATE TRIGGER notifications_due_expiry AFTER UPDATE OF expires_at ON pushq.notifications
    FOR EACH ROW
    WHEN (NEW.status IN ('queued', 'retrying') AND OLD.expires_at IS DISTINCT FROM NEW.expires_at
          AND OLD.status IS NOT DISTINCT FROM NEW.status AND OLD.scheduled_at IS NOT DISTINCT FROM NEW.scheduled_at
          AND OLD.lane IS NOT DISTINCT FROM NEW.lane)
    EXECUTE FUNCTION pushq.due_waiting();
