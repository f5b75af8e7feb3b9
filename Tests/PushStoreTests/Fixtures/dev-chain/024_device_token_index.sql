-- pushq:no-transaction
-- pushq schema, version 24: rows by device token, newest first, for `pushq serve`'s dashboard
-- (the search by token, a user's last notifications through the tokens of their devices).
-- Partial: broadcast rows (no token) are not in it. Built CONCURRENTLY: producers and workers
-- go on while it builds, however large the table.
CREATE INDEX CONCURRENTLY IF NOT EXISTS notifications_device_token ON pushq.notifications (device_token, created_at)
    WHERE device_token IS NOT NULL
