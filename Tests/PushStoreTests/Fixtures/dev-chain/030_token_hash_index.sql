-- pushq:no-transaction
-- pushq schema, version 30: the dashboard's index of rows by device token keyed by the token's
-- 32-bit hash (`hashtext`, PostgreSQL's own hash of text, the one its hash indexes and hash
-- partitions store) rather than by the token itself.
--
-- The write-back still adds one entry to this index for every notification (the row's final
-- version). Keyed by the 64 or more characters of the token, an entry took ~90 bytes and a
-- comparison of strings at each level of the tree; keyed by its hash, 16 bytes: ~60 bytes of
-- WAL less per notification (docs/performance.md, "The index by token, without the rows being
-- sent"). A search checks the token itself on the rows the hash finds. Like schema 28's index it
-- leaves out rows being sent. Schema 31 drops schema 28's. Built CONCURRENTLY.
CREATE INDEX CONCURRENTLY IF NOT EXISTS notifications_token_hash ON pushq.notifications (hashtext(device_token), created_at)
    WHERE device_token IS NOT NULL AND status <> 'sending'
