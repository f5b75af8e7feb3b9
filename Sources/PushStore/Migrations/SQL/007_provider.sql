-- pushq schema, version 7: Firebase Cloud Messaging (HTTP v1) beside APNs in the same queue.
--
-- A `provider` column on pushq.notifications and pushq.devices, 'apns' unless the producer says
-- 'fcm'. Every existing row is an APNs row and every existing producer's INSERT (which names no
-- provider) still makes one. Adding a column whose default is a constant rewrites nothing
-- (PostgreSQL 11 and later keep the default in the catalog), so this is instant however many
-- rows there are.
--
-- The constraints are added NOT VALID, here, and validated by migration 8, in a transaction of
-- its own: the pattern, the locks and the lock_timeout loop of migrations 4 and 5 (see 004).
-- A constraint that changes meaning (the APNs token rules now apply to APNs rows only, the
-- payload size depends on the provider, the invalid reasons FCM adds) is dropped and added again
-- under the same name, NOT VALID: every row met the old one, so every row meets the new one.
--
-- Each constraint stops at its first test for the rows it is not about (`provider <> 'fcm' OR
-- ...`), so an APNs row pays one comparison for each FCM one.
DO $$
DECLARE
    tries integer := 0;
    previous text := current_setting('lock_timeout');
BEGIN
    PERFORM set_config('lock_timeout', '1s', true);
    LOOP
        BEGIN
            ALTER TABLE pushq.notifications
                ADD COLUMN provider text NOT NULL DEFAULT 'apns',
                -- FCM's answer to a 200: the message's `name`, projects/<project>/messages/<id>.
                ADD COLUMN fcm_message_name text,
                ADD CONSTRAINT notifications_provider_known
                    CHECK (provider IN ('apns', 'fcm')) NOT VALID,
                -- The version 1 token rules, for APNs rows only.
                DROP CONSTRAINT notifications_device_token_hex,
                ADD CONSTRAINT notifications_device_token_hex
                    CHECK (provider <> 'apns' OR device_token ~ '^[0-9A-Fa-f]*$') NOT VALID,
                DROP CONSTRAINT notifications_device_token_length,
                ADD CONSTRAINT notifications_device_token_length
                    CHECK (provider <> 'apns' OR (length(device_token) BETWEEN 64 AND 200 AND length(device_token) % 2 = 0)) NOT VALID,
                -- An FCM registration token: 1 to 4096 characters of base64url (A-Z a-z 0-9 - _)
                -- and ':', which need no escaping in JSON (PushCore FCMMessageBody.isValidToken).
                -- Case-sensitive: stored and sent as given.
                ADD CONSTRAINT notifications_fcm_token_charset
                    CHECK (provider <> 'fcm' OR device_token ~ '^[A-Za-z0-9_:-]*$') NOT VALID,
                ADD CONSTRAINT notifications_fcm_token_length
                    CHECK (provider <> 'fcm' OR length(device_token) BETWEEN 1 AND 4096) NOT VALID,
                -- FCM's `message` object without its target: pushq adds the token.
                -- (notifications_payload_object already makes every payload an object.)
                ADD CONSTRAINT notifications_fcm_payload_target
                    CHECK (provider <> 'fcm' OR NOT (payload::jsonb ?| ARRAY['token', 'topic', 'condition'])) NOT VALID,
                -- Size on the exact bytes stored. FCM: "Maximum payload for both message types is
                -- 4096 bytes" (firebase.google.com/docs/cloud-messaging/customize-messages/set-message-type).
                -- APNs: 4096, 5120 for voip, as in version 1.
                DROP CONSTRAINT notifications_payload_size,
                ADD CONSTRAINT notifications_payload_size
                    CHECK (octet_length(payload::text) <= CASE WHEN provider = 'apns' AND push_type = 'voip' THEN 5120 ELSE 4096 END) NOT VALID,
                -- The APNs-only columns are refused on FCM rows rather than ignored: a producer
                -- who sets one expects it to do something. push_type must keep its default.
                -- (apns_id always has a default; FCM rows ignore it.)
                ADD CONSTRAINT notifications_fcm_no_apns_columns
                    CHECK (provider <> 'fcm' OR (topic IS NULL AND priority IS NULL AND collapse_id IS NULL
                                                 AND environment IS NULL AND push_type = 'alert')) NOT VALID;

            ALTER TABLE pushq.devices
                ADD COLUMN provider text NOT NULL DEFAULT 'apns',
                ADD CONSTRAINT devices_provider_known
                    CHECK (provider IN ('apns', 'fcm')) NOT VALID,
                DROP CONSTRAINT devices_device_token_hex,
                ADD CONSTRAINT devices_device_token_hex
                    CHECK (provider <> 'apns' OR device_token ~ '^[0-9a-f]*$') NOT VALID,
                DROP CONSTRAINT devices_device_token_length,
                ADD CONSTRAINT devices_device_token_length
                    CHECK (provider <> 'apns' OR (length(device_token) BETWEEN 64 AND 200 AND length(device_token) % 2 = 0)) NOT VALID,
                ADD CONSTRAINT devices_fcm_token_charset
                    CHECK (provider <> 'fcm' OR device_token ~ '^[A-Za-z0-9_:-]*$') NOT VALID,
                ADD CONSTRAINT devices_fcm_token_length
                    CHECK (provider <> 'fcm' OR length(device_token) BETWEEN 1 AND 4096) NOT VALID,
                -- FCM has no environments: an FCM device keeps environment's default, so that
                -- (device_token, 'production', 'fcm') is its one key.
                ADD CONSTRAINT devices_fcm_environment_default
                    CHECK (provider <> 'fcm' OR environment = 'production') NOT VALID,
                -- FCM's reasons: UNREGISTERED (404) and INVALID_ARGUMENT saying the token is not valid (400).
                DROP CONSTRAINT devices_invalid_reason_known,
                ADD CONSTRAINT devices_invalid_reason_known
                    CHECK (invalid_reason IN ('Unregistered', 'ExpiredToken', 'BadDeviceToken',
                                              'UNREGISTERED', 'INVALID_ARGUMENT')) NOT VALID;
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

-- APNs tokens are stored lower-case whatever case the producer used; FCM tokens are
-- case-sensitive and stored as given.
CREATE OR REPLACE FUNCTION pushq.devices_lowercase_token() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.provider = 'apns' THEN
        NEW.device_token := lower(NEW.device_token);
    END IF;
    RETURN NEW;
END
$$;

DROP TRIGGER devices_lowercase_token ON pushq.devices;
CREATE TRIGGER devices_lowercase_token
    BEFORE INSERT OR UPDATE OF device_token, provider ON pushq.devices
    FOR EACH ROW EXECUTE FUNCTION pushq.devices_lowercase_token();

-- One notification per valid device of a user, of both providers; returns the new ids.
-- APNs devices get `payload` (none when it is NULL), FCM devices get `fcm_payload` (none when
-- it is NULL), with the APNs-only columns NULL. Every call of version 1, positional or named,
-- means what it meant: `fcm_payload` comes last and defaults to NULL.
DROP FUNCTION pushq.enqueue_for_user(text, json, text, text, integer, timestamptz, text, text, timestamptz, integer, jsonb);

CREATE FUNCTION pushq.enqueue_for_user(
    user_ref     text,
    payload      json,
    topic        text        DEFAULT NULL,
    push_type    text        DEFAULT 'alert',
    priority     integer     DEFAULT NULL,
    expires_at   timestamptz DEFAULT NULL,
    collapse_id  text        DEFAULT NULL,
    credential   text        DEFAULT NULL,
    scheduled_at timestamptz DEFAULT now(),
    max_attempts integer     DEFAULT 10,
    metadata     jsonb       DEFAULT NULL,
    fcm_payload  json        DEFAULT NULL
) RETURNS SETOF bigint
LANGUAGE sql VOLATILE AS $$
    INSERT INTO pushq.notifications
        (provider, device_token, payload, topic, push_type, priority, expires_at, collapse_id,
         environment, credential, scheduled_at, max_attempts, metadata)
    SELECT d.provider,
           d.device_token,
           CASE WHEN d.provider = 'fcm' THEN enqueue_for_user.fcm_payload ELSE enqueue_for_user.payload END,
           CASE WHEN d.provider = 'apns'
                THEN COALESCE(enqueue_for_user.topic, d.topic || pushq.topic_suffix(enqueue_for_user.push_type)) END,
           CASE WHEN d.provider = 'apns' THEN enqueue_for_user.push_type ELSE 'alert' END,
           CASE WHEN d.provider = 'apns' THEN enqueue_for_user.priority::smallint END,
           enqueue_for_user.expires_at,
           CASE WHEN d.provider = 'apns' THEN enqueue_for_user.collapse_id END,
           CASE WHEN d.provider = 'apns' THEN d.environment END,
           enqueue_for_user.credential,
           COALESCE(enqueue_for_user.scheduled_at, now()),
           enqueue_for_user.max_attempts::smallint,
           enqueue_for_user.metadata
      FROM pushq.devices d
     WHERE d.user_ref = enqueue_for_user.user_ref
       AND NOT pushq.token_is_invalid(d.registered_at, d.invalidated_at)
       AND CASE WHEN d.provider = 'fcm' THEN enqueue_for_user.fcm_payload IS NOT NULL
                ELSE enqueue_for_user.payload IS NOT NULL END
     ORDER BY d.provider, d.device_token, d.environment
    RETURNING id
$$;
