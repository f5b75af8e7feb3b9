-- pushq:no-transaction
-- pushq schema, version 29: the index of schema 24 goes; schema 28's replaces it. Dropped
-- CONCURRENTLY: it waits for the statements using it to end, and blocks none. A `pushq serve`
-- older than schema 28 still running searches by token without an index until it is replaced.
DROP INDEX CONCURRENTLY IF EXISTS pushq.notifications_device_token
