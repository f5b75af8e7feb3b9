-- pushq:lock-retry lock_timeout=200ms tries=100
-- pushq schema, version 36: a lease whose rows the upkeep gave back stays listed until they are
-- claimed again or written back; pushq.due learns each waiting row's expiry.
--
-- Workers of this release find the rows in flight (for `pushq status`, the dashboard and the
-- HTTP API) through pushq.leases, not through the row's status: an index of `status` is what keeps
-- the claim's and the write-back's updates from being HOT, and a later schema drops them. So the
-- upkeep no longer deletes the row of a lease that ended with rows still `sending`: it gives those
-- rows their entry in pushq.due and sets `recovered_at`; the upkeep deletes it once none of its
-- rows is still in flight under it. Workers of the previous release (schema 35) ignore the column
-- and delete such a lease row as before: its rows are then not listed in flight until claimed
-- again, for the few seconds that takes.
--
-- pushq.due.expires_at: the row's `expires_at`, kept by the triggers as they keep the lane and the
-- due time (notifications_due_waiting now also fires when an UPDATE changes a waiting row's
-- expiry). The workers' expiry of rows no worker claims reads it (schema 37 indexes it, 38 fills
-- it for the entries made before this), not the row's status through notifications_expiry. The
-- entries the upkeep makes for lapsed leases have none: the claim ends such a row `expired` when
-- it takes it.
--
-- Adding a nullable column without a default takes the table's ACCESS EXCLUSIVE lock for an
-- instant (pushq.leases, pushq.due: claims wait for it), and replacing a trigger SHARE ROW
-- EXCLUSIVE on pushq.notifications (producers wait for it), at most 200 ms at a time.
ALTER TABLE pushq.leases ADD COLUMN recovered_at timestamptz;
ALTER TABLE pushq.due ADD COLUMN expires_at timestamptz;

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

DROP TRIGGER notifications_due_waiting ON pushq.notifications;
CREATE TRIGGER notifications_due_waiting AFTER UPDATE OF status, scheduled_at, lane, expires_at ON pushq.notifications
    FOR EACH ROW
    WHEN (NEW.status IN ('queued', 'retrying')
          AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.scheduled_at IS DISTINCT FROM NEW.scheduled_at
               OR OLD.lane IS DISTINCT FROM NEW.lane OR OLD.expires_at IS DISTINCT FROM NEW.expires_at))
    EXECUTE FUNCTION pushq.due_waiting();
