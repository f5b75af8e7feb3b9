-- pushq:lock-retry lock_timeout=200ms tries=100
-- Web Push (issue 47): the third provider in the schema, catalog-only.
--
-- * pushq.notifications: `provider = 'webpush'` allowed; `webpush_keys jsonb` (the subscription's
--   PushSubscription.toJSON().keys: NOT NULL for Web Push rows, NULL for the others) and
--   `webpush_location text` (the push service's Location, written back from a 201). The rules of a
--   Web Push row are pushq.notifications_rules()'s, each refused as SQLSTATE 23514 under its name:
--   notifications_webpush_endpoint (https://host[:port]/path, no userinfo, no fragment, a port
--   without leading zeros, ≤ 2 048 visible ASCII bytes; the host's addresses are the worker's to
--   check, at send time),
--   notifications_webpush_keys (p256dh the base64url of a 65-byte point starting 0x04, auth of
--   16 bytes), notifications_webpush_keys_provider, notifications_webpush_no_apns_columns (topic,
--   environment, push_type as for FCM), notifications_webpush_payload_size (3 993 bytes, RFC 8291
--   §4) and notifications_webpush_topic (collapse_id is the Topic: 1–32 of A-Z a-z 0-9 - _).
-- * pushq.devices: Web Push subscriptions (the endpoint as device_token, byte for byte, and
--   webpush_keys). Its CHECKs devices_provider_known and devices_invalid_reason_known become rules
--   of a trigger, pushq.devices_rules(), under the same names and SQLSTATE (as 0.4.0 did for the
--   notifications' checks): a CHECK changed would have to be validated, reading the whole registry,
--   in a transaction of its own. The trigger reads only the row written.
-- * pushq.enqueue_for_user gains `webpush_payload` (what a user's browsers get, as fcm_payload is
--   what their Android devices get) and copies each subscription's keys into its row.
--
-- Nothing reads or rewrites a row: the columns have no default, the constraints are dropped, not
-- added. ALTER TABLE takes ACCESS EXCLUSIVE on both tables for an instant, waited for at most
-- 200 ms at a time (lock-retry). Workers of 0.4.0 claim only the providers they know
-- (ClaimRouting: `n.provider = 'apns' … OR n.provider = 'fcm' …`), so a Web Push row waits for a
-- worker that knows it; their INSERTs and write-backs name none of the new columns.

ALTER TABLE pushq.notifications
    ADD COLUMN webpush_keys jsonb,
    ADD COLUMN webpush_location text;

ALTER TABLE pushq.devices
    ADD COLUMN webpush_keys jsonb,
    DROP CONSTRAINT devices_provider_known,
    DROP CONSTRAINT devices_invalid_reason_known;

-- The rules of pushq.notifications, with Web Push's (the function of 0.4.0 and six rules more).
CREATE OR REPLACE FUNCTION pushq.notifications_rules() RETURNS trigger
    LANGUAGE plpgsql
    AS $_$
DECLARE
    broken text;
BEGIN
    -- One expression, so that a row that breaks nothing costs one evaluation. A rule breaks only
    -- when it is false (NULL passes, as in a CHECK constraint).
    broken := CASE
        WHEN ((NEW.push_type <> 'background') OR (NEW.priority IS NULL) OR (NEW.priority <> 10)) IS FALSE
            THEN 'notifications_background_priority'
        WHEN ((NEW.channel IS NULL) OR (octet_length((NEW.payload)::text) <= 5120)) IS FALSE
            THEN 'notifications_broadcast_payload_size'
        WHEN ((NEW.channel IS NULL) OR ((NEW.provider = 'apns') AND (NEW.push_type = 'liveactivity'))) IS FALSE
            THEN 'notifications_broadcast_push_type'
        WHEN (octet_length(NEW.collapse_id) <= 64) IS FALSE
            THEN 'notifications_collapse_id_length'
        WHEN ((NEW.collapse_id IS NULL) OR (NEW.collapse_id !~ '[\x01-\x1f\x7f]') OR (NEW.status = ANY (ARRAY['sent', 'failed', 'expired', 'cancelled']))) IS FALSE
            THEN 'notifications_collapse_id_printable'
        WHEN ((NEW.credential IS NULL) OR (NEW.credential !~ '[\x01-\x1f\x7f]') OR (NEW.status = ANY (ARRAY['sent', 'failed', 'expired', 'cancelled']))) IS FALSE
            THEN 'notifications_credential_printable'
        WHEN ((char_length(NEW.dedupe_key) >= 1) AND (char_length(NEW.dedupe_key) <= 200)) IS FALSE
            THEN 'notifications_dedupe_key_length'
        WHEN ((NEW.provider <> 'apns') OR (NEW.device_token ~ '^[0-9A-Fa-f]*$')) IS FALSE
            THEN 'notifications_device_token_hex'
        WHEN ((NEW.provider <> 'apns') OR (((length(NEW.device_token) >= 64) AND (length(NEW.device_token) <= 200)) AND ((length(NEW.device_token) % 2) = 0))) IS FALSE
            THEN 'notifications_device_token_length'
        WHEN (NEW.environment = ANY (ARRAY['production', 'development'])) IS FALSE
            THEN 'notifications_environment_known'
        WHEN ((NEW.expires_at IS NULL) OR isfinite(NEW.expires_at) OR (NEW.status = ANY (ARRAY['sent', 'failed', 'expired', 'cancelled']))) IS FALSE
            THEN 'notifications_expires_at_finite'
        WHEN ((NEW.provider <> 'fcm') OR ((NEW.topic IS NULL) AND (NEW.priority IS NULL) AND (NEW.collapse_id IS NULL) AND (NEW.environment IS NULL) AND (NEW.push_type = 'alert'))) IS FALSE
            THEN 'notifications_fcm_no_apns_columns'
        WHEN ((NEW.provider <> 'fcm') OR (NOT ((NEW.payload)::jsonb ?| ARRAY['token', 'topic', 'condition']))) IS FALSE
            THEN 'notifications_fcm_payload_target'
        WHEN ((NEW.provider <> 'fcm') OR (NEW.device_token ~ '^[A-Za-z0-9_:-]*$')) IS FALSE
            THEN 'notifications_fcm_token_charset'
        WHEN ((NEW.provider <> 'fcm') OR ((length(NEW.device_token) >= 1) AND (length(NEW.device_token) <= 4096))) IS FALSE
            THEN 'notifications_fcm_token_length'
        WHEN ((NEW.lane = 'default') OR (((octet_length(NEW.lane) >= 1) AND (octet_length(NEW.lane) <= 64)) AND (NEW.lane ~ '^[A-Za-z0-9_.:-]+$'))) IS FALSE
            THEN 'notifications_lane_name'
        WHEN ((NEW.push_type <> 'liveactivity') OR (NEW.status <> ALL (ARRAY['queued', 'retrying'])) OR COALESCE((json_typeof(((NEW.payload -> 'aps') -> 'content-state')) = 'object'), (((NEW.payload -> 'aps') ->> 'event') = 'end'))) IS FALSE
            THEN 'notifications_liveactivity_content_state'
        WHEN ((NEW.push_type <> 'liveactivity') OR (NEW.status <> ALL (ARRAY['queued', 'retrying'])) OR COALESCE(((((NEW.payload -> 'aps') ->> 'event') = ANY (ARRAY['start', 'update', 'end'])) AND (json_typeof(((NEW.payload -> 'aps') -> 'timestamp')) = 'number')), false)) IS FALSE
            THEN 'notifications_liveactivity_event'
        WHEN ((NEW.push_type <> 'liveactivity') OR (NEW.status <> ALL (ARRAY['queued', 'retrying'])) OR (COALESCE(((NEW.payload -> 'aps') ->> 'event'), '') <> 'start') OR COALESCE(((json_typeof(((NEW.payload -> 'aps') -> 'attributes-type')) = 'string') AND (json_typeof(((NEW.payload -> 'aps') -> 'attributes')) = 'object') AND (json_typeof(((NEW.payload -> 'aps') -> 'alert')) = ANY (ARRAY['object', 'string']))), false)) IS FALSE
            THEN 'notifications_liveactivity_start'
        WHEN (NEW.max_attempts >= 1) IS FALSE
            THEN 'notifications_max_attempts_positive'
        WHEN ((NEW.metadata IS NULL) OR (octet_length((NEW.metadata)::text) <= 65536) OR (NEW.status = ANY (ARRAY['sent', 'failed', 'expired', 'cancelled']))) IS FALSE
            THEN 'notifications_metadata_size'
        WHEN ((NEW.notify_channel IS NULL) OR ((octet_length(NEW.notify_channel) <= 63) AND (NEW.notify_channel ~ '^[a-z_][a-z0-9_]*$'))) IS FALSE
            THEN 'notifications_notify_channel_name'
        WHEN ((NEW.notify_channel IS NULL) OR (left(NEW.notify_channel, 6) <> 'pushq_')
              OR (TG_OP = 'UPDATE' AND NEW.notify_channel IS NOT DISTINCT FROM OLD.notify_channel)) IS FALSE
            THEN 'notifications_notify_channel_reserved'
        WHEN (json_typeof(NEW.payload) = 'object') IS FALSE
            THEN 'notifications_payload_object'
        WHEN ((NEW.channel IS NOT NULL) OR (octet_length((NEW.payload)::text) <= CASE WHEN NEW.provider = 'apns' AND NEW.push_type = 'voip' THEN 5120 ELSE 4096 END)) IS FALSE
            THEN 'notifications_payload_size'
        WHEN (NEW.priority = ANY (ARRAY[10, 5, 1])) IS FALSE
            THEN 'notifications_priority_valid'
        WHEN (NEW.provider = ANY (ARRAY['apns', 'fcm', 'webpush'])) IS FALSE
            THEN 'notifications_provider_known'
        WHEN (NEW.push_type = ANY (ARRAY['alert', 'background', 'location', 'voip', 'complication', 'fileprovider', 'mdm', 'liveactivity', 'pushtotalk', 'widgets', 'controls'])) IS FALSE
            THEN 'notifications_push_type_known'
        WHEN ((NEW.device_token IS NULL) <> (NEW.channel IS NULL)) IS FALSE
            THEN 'notifications_target'
        WHEN ((NEW.topic IS NULL) OR (NEW.status = ANY (ARRAY['sent', 'failed', 'expired', 'cancelled'])) OR (((octet_length(NEW.topic) >= 1) AND (octet_length(NEW.topic) <= 255)) AND (NEW.topic ~ '^[A-Za-z0-9._-]+$'))) IS FALSE
            THEN 'notifications_topic_shape'
        WHEN ((NEW.provider <> 'webpush') OR ((octet_length(NEW.device_token) <= 2048) AND (NEW.device_token ~ '^[Hh][Tt][Tt][Pp][Ss]://[A-Za-z0-9._~:\[\]-]+/[!-~]*$') AND (strpos(NEW.device_token, '#') = 0) AND (strpos(NEW.device_token, '\') = 0) AND (NEW.device_token !~ '^[^/]*//[^/?]*:0[0-9]*/'))) IS FALSE
            THEN 'notifications_webpush_endpoint'
        WHEN ((NEW.provider <> 'webpush') OR COALESCE((jsonb_typeof(NEW.webpush_keys) = 'object') AND (jsonb_typeof(NEW.webpush_keys -> 'p256dh') = 'string') AND (jsonb_typeof(NEW.webpush_keys -> 'auth') = 'string') AND ((NEW.webpush_keys ->> 'p256dh') ~ '^B[A-P][A-Za-z0-9_-]*=*$') AND (length(rtrim(NEW.webpush_keys ->> 'p256dh', '=')) = 87) AND ((NEW.webpush_keys ->> 'auth') ~ '^[A-Za-z0-9_-]*=*$') AND (length(rtrim(NEW.webpush_keys ->> 'auth', '=')) = 22), false)) IS FALSE
            THEN 'notifications_webpush_keys'
        WHEN ((NEW.provider = 'webpush') OR (NEW.webpush_keys IS NULL)) IS FALSE
            THEN 'notifications_webpush_keys_provider'
        WHEN ((NEW.provider <> 'webpush') OR ((NEW.topic IS NULL) AND (NEW.environment IS NULL) AND (NEW.push_type = 'alert'))) IS FALSE
            THEN 'notifications_webpush_no_apns_columns'
        WHEN ((NEW.provider <> 'webpush') OR (octet_length((NEW.payload)::text) <= 3993)) IS FALSE
            THEN 'notifications_webpush_payload_size'
        WHEN ((NEW.provider <> 'webpush') OR (NEW.collapse_id IS NULL) OR ((octet_length(NEW.collapse_id) <= 32) AND (NEW.collapse_id ~ '^[A-Za-z0-9_-]+$'))) IS FALSE
            THEN 'notifications_webpush_topic'
    END;
    IF broken = 'notifications_notify_channel_reserved' THEN
        RAISE EXCEPTION 'new row for relation "notifications" violates check constraint "%"', broken
            USING ERRCODE = 'check_violation', CONSTRAINT = broken, TABLE = 'notifications', SCHEMA = 'pushq',
                  DETAIL = format('notify_channel %L starts with pushq_, a prefix reserved for the channels of pushq''s own workers (pushq_enqueued)', NEW.notify_channel);
    ELSIF broken IS NOT NULL THEN
        RAISE EXCEPTION 'new row for relation "notifications" violates check constraint "%"', broken
            USING ERRCODE = 'check_violation', CONSTRAINT = broken, TABLE = 'notifications', SCHEMA = 'pushq';
    END IF;
    RETURN NEW;  -- (an AFTER trigger's result is ignored)
END
$_$;

-- The registry's rules that know the providers: one expression, so that a registration that breaks
-- nothing costs one evaluation; a rule breaks only when it is false (NULL passes, as in a CHECK).
-- A Web Push subscription has its keys, except a row that only records an endpoint found invalid
-- (the worker's write-back after a 404/410 to an endpoint never registered): without keys it
-- stays invalid, so that enqueue_for_user never makes a row of it.
CREATE FUNCTION pushq.devices_rules() RETURNS trigger
LANGUAGE plpgsql AS $_$
DECLARE
    broken text;
BEGIN
    broken := CASE
        WHEN (NEW.invalid_reason = ANY (ARRAY['Unregistered', 'ExpiredToken', 'BadDeviceToken', 'UNREGISTERED', 'INVALID_ARGUMENT',
                                               'Replaced', 'ActivityEnded', 'AgeLimit', 'NotFound', 'Gone'])) IS FALSE
            THEN 'devices_invalid_reason_known'
        WHEN (NEW.provider = ANY (ARRAY['apns', 'fcm', 'webpush'])) IS FALSE
            THEN 'devices_provider_known'
        WHEN ((NEW.provider <> 'webpush') OR ((octet_length(NEW.device_token) <= 2048) AND (NEW.device_token ~ '^[Hh][Tt][Tt][Pp][Ss]://[A-Za-z0-9._~:\[\]-]+/[!-~]*$') AND (strpos(NEW.device_token, '#') = 0) AND (strpos(NEW.device_token, '\') = 0) AND (NEW.device_token !~ '^[^/]*//[^/?]*:0[0-9]*/'))) IS FALSE
            THEN 'devices_webpush_endpoint'
        WHEN ((NEW.provider <> 'webpush') OR (NEW.environment = 'production')) IS FALSE
            THEN 'devices_webpush_environment_default'
        WHEN ((NEW.provider <> 'webpush')
              OR ((NEW.webpush_keys IS NULL) AND (NEW.invalidated_at IS NOT NULL) AND ((NEW.registered_at IS NULL) OR (NEW.registered_at < NEW.invalidated_at)))
              OR COALESCE((jsonb_typeof(NEW.webpush_keys) = 'object') AND (jsonb_typeof(NEW.webpush_keys -> 'p256dh') = 'string') AND (jsonb_typeof(NEW.webpush_keys -> 'auth') = 'string') AND ((NEW.webpush_keys ->> 'p256dh') ~ '^B[A-P][A-Za-z0-9_-]*=*$') AND (length(rtrim(NEW.webpush_keys ->> 'p256dh', '=')) = 87) AND ((NEW.webpush_keys ->> 'auth') ~ '^[A-Za-z0-9_-]*=*$') AND (length(rtrim(NEW.webpush_keys ->> 'auth', '=')) = 22), false)) IS FALSE
            THEN 'devices_webpush_keys'
        WHEN ((NEW.provider = 'webpush') OR (NEW.webpush_keys IS NULL)) IS FALSE
            THEN 'devices_webpush_keys_provider'
    END;
    IF broken IS NOT NULL THEN
        RAISE EXCEPTION 'new row for relation "devices" violates check constraint "%"', broken
            USING ERRCODE = 'check_violation', CONSTRAINT = broken, TABLE = 'devices', SCHEMA = 'pushq';
    END IF;
    RETURN NEW;
END
$_$;

CREATE TRIGGER devices_rules
    BEFORE INSERT OR UPDATE OF device_token, environment, provider, registered_at, invalidated_at, invalid_reason, webpush_keys ON pushq.devices
    FOR EACH ROW EXECUTE FUNCTION pushq.devices_rules();

-- A Web Push row's keys are among the columns whose change is checked again.
DROP TRIGGER notifications_rules_update ON pushq.notifications;
CREATE TRIGGER notifications_rules_update
    AFTER UPDATE OF payload, device_token, provider, push_type, topic, priority, collapse_id, environment,
                    lane, notify_channel, dedupe_key, channel, credential, max_attempts, expires_at, metadata, webpush_keys
    ON pushq.notifications
    FOR EACH ROW
    EXECUTE FUNCTION pushq.notifications_rules();

-- enqueue_for_user: a user's Web Push subscriptions get webpush_payload (left out: none of them
-- gets a row), with their keys, the Urgency of `priority`, no APNs columns and no Topic. The
-- privileges on 0.4.0's function are granted on this one (a producer's role that may EXECUTE it
-- still may).
CREATE TEMPORARY TABLE enqueue_for_user_acl_0_4_0 ON COMMIT DROP AS
SELECT proacl AS acl FROM pg_proc WHERE oid = 'pushq.enqueue_for_user(text, json, text, text, integer, timestamptz, text, text, timestamptz, integer, jsonb, json, text, text, text)'::regprocedure;

DROP FUNCTION pushq.enqueue_for_user(text, json, text, text, integer, timestamptz, text, text, timestamptz, integer, jsonb, json, text, text, text);

CREATE FUNCTION pushq.enqueue_for_user(
    user_ref        text,
    payload         json,
    topic           text        DEFAULT NULL,
    push_type       text        DEFAULT 'alert',
    priority        integer     DEFAULT NULL,
    expires_at      timestamptz DEFAULT NULL,
    collapse_id     text        DEFAULT NULL,
    credential      text        DEFAULT NULL,
    scheduled_at    timestamptz DEFAULT now(),
    max_attempts    integer     DEFAULT 10,
    metadata        jsonb       DEFAULT NULL,
    fcm_payload     json        DEFAULT NULL,
    lane            text        DEFAULT 'default',
    dedupe_key      text        DEFAULT NULL,
    notify_channel  text        DEFAULT NULL,
    webpush_payload json        DEFAULT NULL
) RETURNS SETOF bigint
LANGUAGE plpgsql VOLATILE AS $$
-- The arguments are named like the columns: in ON CONFLICT (dedupe_key) the name is the column's;
-- every argument below is qualified (enqueue_for_user.x).
#variable_conflict use_column
BEGIN
    IF char_length(enqueue_for_user.dedupe_key) NOT BETWEEN 1 AND 160 THEN
        RAISE EXCEPTION 'pushq.enqueue_for_user: dedupe_key must be 1 to 160 characters, not %', char_length(enqueue_for_user.dedupe_key)
            USING ERRCODE = 'check_violation', CONSTRAINT = 'enqueue_for_user_dedupe_key_length',
                  DETAIL = 'Each row''s key is dedupe_key || '':'' || provider || '':'' || 32 hex digits of its token, at most 200 characters.';
    END IF;
    RETURN QUERY
    INSERT INTO pushq.notifications
        (provider, device_token, payload, topic, push_type, priority, expires_at, collapse_id,
         environment, credential, scheduled_at, max_attempts, metadata, lane, dedupe_key, notify_channel, webpush_keys)
    SELECT d.provider,
           d.device_token,
           CASE d.provider WHEN 'fcm' THEN enqueue_for_user.fcm_payload
                           WHEN 'webpush' THEN enqueue_for_user.webpush_payload
                           ELSE enqueue_for_user.payload END,
           CASE WHEN d.provider = 'apns'
                THEN COALESCE(enqueue_for_user.topic, d.topic || pushq.topic_suffix(enqueue_for_user.push_type)) END,
           CASE WHEN d.provider = 'apns' THEN enqueue_for_user.push_type ELSE 'alert' END,
           CASE WHEN d.provider IN ('apns', 'webpush') THEN enqueue_for_user.priority::smallint END,
           enqueue_for_user.expires_at,
           CASE WHEN d.provider = 'apns' THEN enqueue_for_user.collapse_id END,
           CASE WHEN d.provider = 'apns' THEN d.environment END,
           enqueue_for_user.credential,
           COALESCE(enqueue_for_user.scheduled_at, now()),
           enqueue_for_user.max_attempts::smallint,
           enqueue_for_user.metadata,
           COALESCE(enqueue_for_user.lane, 'default'),
           enqueue_for_user.dedupe_key || ':' || d.provider || ':'
               || left(encode(sha256(convert_to(d.environment || ':' || d.device_token, 'UTF8')), 'hex'), 32),
           enqueue_for_user.notify_channel,
           CASE WHEN d.provider = 'webpush' THEN d.webpush_keys END
      FROM pushq.devices d
     WHERE d.user_ref = enqueue_for_user.user_ref
       AND d.kind = 'device'
       AND NOT pushq.token_is_invalid(d.registered_at, d.invalidated_at)
       AND CASE d.provider WHEN 'fcm' THEN enqueue_for_user.fcm_payload IS NOT NULL
                           WHEN 'webpush' THEN enqueue_for_user.webpush_payload IS NOT NULL
                           ELSE enqueue_for_user.payload IS NOT NULL END
     ORDER BY d.provider, d.device_token, d.environment
    ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
    RETURNING id;
END
$$;

-- A function replaced by one with another signature keeps who may EXECUTE it: this grants the
-- new one what the old one's ACL granted (a NULL ACL is the default, as the new function's: the
-- owner and PUBLIC). Used again by every migration that changes a producer's function's arguments.
CREATE FUNCTION pushq.carry_execute_grants(acl aclitem[], fn regprocedure) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    grant_ record;
BEGIN
    IF acl IS NULL THEN
        RETURN;
    END IF;
    EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', fn);
    FOR grant_ IN SELECT e.grantee, e.is_grantable FROM aclexplode(acl) e WHERE e.privilege_type = 'EXECUTE' LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %s%s', fn,
                       CASE WHEN grant_.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(grant_.grantee)) END,
                       CASE WHEN grant_.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION pushq.carry_execute_grants(aclitem[], regprocedure) FROM PUBLIC;

SELECT pushq.carry_execute_grants((SELECT a.acl FROM enqueue_for_user_acl_0_4_0 a),
    'pushq.enqueue_for_user(text, json, text, text, integer, timestamptz, text, text, timestamptz, integer, jsonb, json, text, text, text, json)'::regprocedure);
