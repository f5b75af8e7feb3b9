-- pushq:no-transaction
-- pushq schema, version 32: an index of the registry's invalidated tokens only.
--
-- Every claim asks, for each row it takes, whether the row's token is invalid in
-- `pushq.devices` (`pushq.token_is_invalid`, which holds only when `invalidated_at` is set). It
-- asked through the registry's primary key, a descent of an index of every registered device:
-- on a registry of 1 000 000 devices with random tokens, ~7 µs of PostgreSQL's CPU per
-- notification more than through this index, which holds only the invalidated ones
-- (docs/performance.md, "The invalid-token probe"). PostgreSQL uses it for the probe because the
-- probe's condition implies the index's predicate. Written only when a token is invalidated or
-- registered again. Built CONCURRENTLY.
CREATE INDEX CONCURRENTLY IF NOT EXISTS devices_invalidated ON pushq.devices (device_token, environment, provider)
    WHERE invalidated_at IS NOT NULL
