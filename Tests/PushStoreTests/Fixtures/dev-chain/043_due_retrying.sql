-- pushq:lock-retry lock_timeout=200ms tries=100
-- pushq schema, version 43: each entry of pushq.due says whether its row is `retrying`.
--
-- `pushq status` and the dashboard count the waiting rows, `queued` and `retrying` apart, from
-- pushq.due instead of through `notifications_due`, an index of the row's status, which a later
-- schema drops so that the claim's and the write-back's updates are HOT. `retrying` is true for a
-- retrying row's entry, false for a queued row's, NULL when not known: the entry of a row in flight
-- under a lease that ended (the upkeep's, which the claim takes as a waiting row's), and the
-- entries made before this schema until 44 fills them. Readers look at the row of an entry whose
-- `retrying` is NULL.
--
-- Adding a nullable column without a default takes pushq.due's ACCESS EXCLUSIVE lock for an
-- instant (claims wait for it), at most 200 ms at a time; CREATE OR REPLACE FUNCTION takes no
-- table lock. Nothing here locks pushq.notifications.
ALTER TABLE pushq.due ADD COLUMN retrying boolean;

CREATE OR REPLACE FUNCTION pushq.due_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pushq.due (id, lane, due_at, expires_at, retrying)
    SELECT r.id, r.lane, r.scheduled_at, r.expires_at, r.status = 'retrying' FROM inserted_rows r WHERE r.status IN ('queued', 'retrying')
    ON CONFLICT (id) DO NOTHING;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION pushq.due_waiting() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pushq.due (id, lane, due_at, expires_at, retrying)
    VALUES (NEW.id, NEW.lane, NEW.scheduled_at, NEW.expires_at, NEW.status = 'retrying')
    ON CONFLICT (id) DO UPDATE
       SET lane = EXCLUDED.lane, due_at = EXCLUDED.due_at, expires_at = EXCLUDED.expires_at, retrying = EXCLUDED.retrying;
    RETURN NULL;
END $$;
