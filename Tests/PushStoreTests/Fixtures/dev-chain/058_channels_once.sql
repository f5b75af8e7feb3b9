-- pushq:lock-retry lock_timeout=200ms tries=100
-- pushq:commit-lock pushq.channels
-- pushq schema, version 58: a broadcast channel is created once at Apple; a channel id is a
-- header value; notify_channel cannot be pushq's own; a dashboard pause keeps default's cap.
--
-- pushq.channels gets `create_requested_at` and `create_request_id`: a worker records its
-- create there (fenced by its lease) before it sends it. A row with an attempted create and no
-- `apns_channel_id` may have a channel at Apple whose answer was lost: the next worker to claim
-- it lists Apple's channels first and adopts or deletes it (docs/channels.md).
-- pushq.delete_channel now sends such a row to 'deleting' (a worker deletes what Apple
-- made) instead of ending it at once. Nullable columns without a default: no rewrite.
--
-- `apns_channel_id` must look like Apple's ids (base64, 1 to 256 characters): it goes into the
-- `apns-channel-id` header, and a CR/LF in it would inject a header. A row that holds anything
-- else (only a hand-written row can) ends 'failed'/BadChannelId without its id first, then the
-- check is added NOT VALID and validated; pushq.channels has a row per channel (thousands), so
-- the validation is a moment of SHARE UPDATE EXCLUSIVE.
--
-- pushq.lanes gets `created_by_pause`: true on a row the dashboard's pause made for a lane that
-- had none, copying default's rank and cap; the dashboard's resume deletes such a row, so the
-- lane follows 'default' again. A constant default: no rewrite.
--
-- pushq.notifications_rules() is replaced with one more rule: a producer's notify_channel may not
-- start with `pushq_` (the workers' own channels, pushq_enqueued). It is checked when a row is
-- inserted or its notify_channel is changed, not when a row already stored waits again, so rows
-- written before keep going. Every other rule is the same as in version 56.
ALTER TABLE pushq.channels
    ADD COLUMN create_requested_at timestamptz,
    ADD COLUMN create_request_id text;

UPDATE pushq.channels
   SET status = CASE WHEN status IN ('deleted', 'failed') THEN status ELSE 'failed' END,
       last_reason = 'BadChannelId', apns_channel_id = NULL, locked_by = NULL, locked_until = NULL, updated_at = now()
 WHERE NOT (apns_channel_id ~ '^[A-Za-z0-9+/=_-]+$' AND char_length(apns_channel_id) <= 256);

ALTER TABLE pushq.channels
    ADD CONSTRAINT channels_apns_channel_id_shape CHECK (apns_channel_id ~ '^[A-Za-z0-9+/=_-]+$' AND char_length(apns_channel_id) <= 256) NOT VALID;
ALTER TABLE pushq.channels VALIDATE CONSTRAINT channels_apns_channel_id_shape;

ALTER TABLE pushq.lanes ADD COLUMN created_by_pause boolean NOT NULL DEFAULT false;

-- As in version 21, except that a channel whose create was sent (create_requested_at) but
-- never answered goes to 'deleting', due now: a worker finds what Apple made and deletes it.
CREATE OR REPLACE FUNCTION pushq.delete_channel(name text) RETURNS text
LANGUAGE sql VOLATILE AS $$
    UPDATE pushq.channels c
       SET status = CASE WHEN c.status IN ('deleting', 'deleted') THEN c.status
                         WHEN c.apns_channel_id IS NULL AND c.create_requested_at IS NULL
                              AND (c.locked_until IS NULL OR c.locked_until < now()) THEN 'deleted'
                         ELSE 'deleting' END,
           scheduled_at = CASE WHEN c.status IN ('deleting', 'deleted') THEN c.scheduled_at
                               ELSE least(c.scheduled_at, now()) END
     WHERE c.name = delete_channel.name
    RETURNING c.status
$$;

CREATE OR REPLACE FUNCTION pushq.notifications_rules() RETURNS trigger
LANGUAGE plpgsql AS $$
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
        WHEN (NEW.provider = ANY (ARRAY['apns', 'fcm'])) IS FALSE
            THEN 'notifications_provider_known'
        WHEN (NEW.push_type = ANY (ARRAY['alert', 'background', 'location', 'voip', 'complication', 'fileprovider', 'mdm', 'liveactivity', 'pushtotalk', 'widgets', 'controls'])) IS FALSE
            THEN 'notifications_push_type_known'
        WHEN ((NEW.device_token IS NULL) <> (NEW.channel IS NULL)) IS FALSE
            THEN 'notifications_target'
        WHEN ((NEW.topic IS NULL) OR (NEW.status = ANY (ARRAY['sent', 'failed', 'expired', 'cancelled'])) OR (((octet_length(NEW.topic) >= 1) AND (octet_length(NEW.topic) <= 255)) AND (NEW.topic ~ '^[A-Za-z0-9._-]+$'))) IS FALSE
            THEN 'notifications_topic_shape'
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
$$;
