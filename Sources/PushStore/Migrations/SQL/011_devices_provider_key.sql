-- pushq schema, version 11: the registry's key includes the provider.
--
-- The indexes of migrations 9 and 10 become constraints: devices_provider_key the primary key
-- (renamed devices_pkey), devices_token_environment_key a unique constraint, which old
-- producers' `ON CONFLICT (device_token, environment)` uses. Both indexes exist already and the
-- key's columns are NOT NULL, so nothing reads the table: ACCESS EXCLUSIVE for an instant,
-- taken with the lock_timeout loop of migration 4.
DO $$
DECLARE
    tries integer := 0;
    previous text := current_setting('lock_timeout');
BEGIN
    PERFORM set_config('lock_timeout', '1s', true);
    LOOP
        BEGIN
            ALTER TABLE pushq.devices
                ADD CONSTRAINT devices_token_environment_key UNIQUE USING INDEX devices_token_environment_key,
                DROP CONSTRAINT devices_pkey;
            ALTER TABLE pushq.devices
                ADD CONSTRAINT devices_pkey PRIMARY KEY USING INDEX devices_provider_key;
            EXIT;
        EXCEPTION WHEN lock_not_available THEN
            tries := tries + 1;
            IF tries >= 60 THEN
                PERFORM set_config('lock_timeout', previous, true);
            END IF;
        END;
    END LOOP;
    PERFORM set_config('lock_timeout', previous, true);
END
$$;
