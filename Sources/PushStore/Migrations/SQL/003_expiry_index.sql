-- pushq:no-transaction
-- pushq schema, version 3: an index for expiring rows that no worker claims (a paused or
-- down endpoint, a credential no live worker has), so that they still end `expired` at their
-- expires_at. Built CONCURRENTLY: producers keep inserting while it builds, however large
-- the table. Runs outside a transaction (`pushq migrate` drops an invalid leftover of an
-- interrupted build first). One statement per file of this kind.
CREATE INDEX CONCURRENTLY IF NOT EXISTS notifications_expiry ON pushq.notifications (expires_at)
    WHERE status IN ('queued', 'retrying') AND expires_at IS NOT NULL
