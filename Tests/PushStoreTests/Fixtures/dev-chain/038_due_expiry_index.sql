-- pushq:no-transaction
-- pushq schema, version 38: the entries of pushq.due by expiry, for the workers' expiry of rows no
-- worker claims (a paused lane, a held endpoint, a credential no live worker has). Only entries
-- whose row has an expiry; written when a row starts waiting, as its entry is. Built
-- CONCURRENTLY.
CREATE INDEX CONCURRENTLY IF NOT EXISTS due_expiry ON pushq.due (expires_at) WHERE expires_at IS NOT NULL
