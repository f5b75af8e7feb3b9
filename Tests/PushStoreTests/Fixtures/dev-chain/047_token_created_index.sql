-- pushq:no-transaction
-- pushq schema, version 47: rows by their token's hash (`hashtext(device_token)`) and
-- `created_at`, whatever their status. The dashboard's search by token and its user page read it
-- instead of `notifications_token_hash` (schema 30), whose predicate names the row's status, so
-- that the claim, which sets the status, writes no entry of it. Built CONCURRENTLY.
CREATE INDEX CONCURRENTLY IF NOT EXISTS notifications_token_created ON pushq.notifications (hashtext(device_token), created_at)
    WHERE device_token IS NOT NULL
