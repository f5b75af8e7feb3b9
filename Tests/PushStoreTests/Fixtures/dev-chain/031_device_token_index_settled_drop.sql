-- pushq:no-transaction
-- pushq schema, version 31: schema 28's index goes; schema 30's replaces it. Dropped
-- CONCURRENTLY, as schema 29. A `pushq serve` older than schema 30 still running searches by
-- token without an index until it is replaced.
DROP INDEX CONCURRENTLY IF EXISTS pushq.notifications_device_token_settled
