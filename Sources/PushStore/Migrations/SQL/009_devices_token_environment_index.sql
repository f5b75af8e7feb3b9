-- pushq:no-transaction
-- pushq schema, version 9: the unique index on (device_token, environment) that stays when the
-- registry's key gains the provider (migration 11), so that every producer's
-- `INSERT INTO pushq.devices ... ON CONFLICT (device_token, environment)` keeps working. Built
-- CONCURRENTLY, before the primary key changes, so that the table is never without it. A token
-- is unique across providers anyway: APNs tokens are hex, FCM tokens are not.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS devices_token_environment_key ON pushq.devices (device_token, environment)
