-- pushq:no-transaction
-- pushq schema, version 17: the valid Live Activity tokens, by kind, then activity id (a
-- live_activity token) or installation id (a push_to_start token), then registration time.
-- pushq.update_activity and pushq.end_activity find an activity's tokens through it, the trigger
-- of schema 16 a push-to-start token's installation, and the pruner the live_activity tokens
-- older than Apple's limits (the kind's part of the index, registered_at read in the index).
-- Partial: ordinary devices and retired tokens are not in it. Built CONCURRENTLY: producers and
-- workers go on while it builds; no row has another kind yet, so it is one pass over the table
-- that indexes nothing.
CREATE INDEX CONCURRENTLY IF NOT EXISTS devices_activity_key ON pushq.devices (kind, (COALESCE(activity_id, installation_id)), registered_at)
    WHERE kind <> 'device' AND invalidated_at IS NULL
