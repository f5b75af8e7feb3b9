-- pushq:no-transaction
-- pushq 0.4.0, part 2 of 5: the new indexes of pushq.notifications and pushq.devices, each built
-- CONCURRENTLY, one statement at a time (`pushq migrate` runs this file's statements in turn):
-- producers and workers go on while they build, however large the tables. An interrupted build
-- leaves an invalid index, which the next `pushq migrate` drops and builds again.
--   notifications_dedupe_key       one row per dedupe_key (SQLSTATE 23505 for a second, or ON
--                                  CONFLICT … DO NOTHING); partial: rows without a key cost nothing
--   notifications_created          every row by created_at: retention, `pushq status`, the
--                                  dashboard's lists and its search by metadata
--   notifications_token_created    rows by their token's hash: the dashboard's search by token
--   notifications_channel_created  broadcast rows by channel: a channel's waiting rows
--   devices_activity_key           valid Live Activity tokens by kind and activity (or
--                                  installation) id: pushq.update_activity, end_activity, the pruner
--   devices_invalidated            the registry's invalidated tokens only: the claim's probe
-- None names the row's status or a column the claim or the write-back sets, so that their
-- updates stay HOT once part 5 has dropped 0.3.0's indexes of the status.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS notifications_dedupe_key ON pushq.notifications (dedupe_key)
    WHERE dedupe_key IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS notifications_created ON pushq.notifications (created_at, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS notifications_token_created ON pushq.notifications (hashtext(device_token), created_at)
    WHERE device_token IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS notifications_channel_created ON pushq.notifications (channel, created_at)
    WHERE channel IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS devices_activity_key ON pushq.devices (kind, (COALESCE(activity_id, installation_id)), registered_at)
    WHERE kind <> 'device' AND invalidated_at IS NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS devices_invalidated ON pushq.devices (device_token, environment, provider)
    WHERE invalidated_at IS NOT NULL;
