-- pushq:no-transaction
-- pushq schema, version 10: the index of the registry's new key (device_token, environment,
-- provider), built CONCURRENTLY; migration 11 makes it the primary key.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS devices_provider_key ON pushq.devices (device_token, environment, provider)
