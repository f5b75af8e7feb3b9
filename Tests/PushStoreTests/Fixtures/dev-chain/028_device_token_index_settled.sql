-- pushq:no-transaction
-- pushq schema, version 28: the dashboard's index of rows by device token, without the rows
-- being sent.
--
-- notifications_device_token (schema 24) had an entry for every version of every row with a
-- token. No update of a notification is HOT (its status decides which partial indexes hold it),
-- so the claim and the write-back each added an entry: about 320 bytes of WAL per notification,
-- a quarter of all the WAL one notification cost, and a few microseconds of PostgreSQL's CPU
-- (docs/performance.md, "The index by token, without the rows being sent"). This index leaves
-- out `sending` versions, so the claim adds no entry to it; the dashboard finds the rows being
-- sent through notifications_lease, which holds only them. Schema 29 drops the old index.
-- Built CONCURRENTLY: producers and workers go on while it builds, however large the table.
CREATE INDEX CONCURRENTLY IF NOT EXISTS notifications_device_token_settled ON pushq.notifications (device_token, created_at)
    WHERE device_token IS NOT NULL AND status <> 'sending'
