-- pushq:no-transaction
-- pushq schema, version 13: one row per dedupe_key. A second INSERT with a key that a row
-- still has (until retention prunes it) fails with SQLSTATE 23505, or does nothing with
-- `ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING`. Partial: rows without a
-- key (all rows before version 12) are not in it and cost nothing. Built CONCURRENTLY:
-- producers and workers go on while it builds.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS notifications_dedupe_key ON pushq.notifications (dedupe_key)
    WHERE dedupe_key IS NOT NULL
