-- pushq 0.4.0's whole schema, for an empty database: `pushq migrate` runs this file in one
-- transaction instead of 001-011 and the release files 100-104, records their versions (then
-- applies the migrations after 104, if any), so that the database is the one an upgrade from
-- 0.3.0 gives (MigrationHistoryTests compares their `pg_dump --schema-only`). What each table,
-- column and function is for: the release files, and docs/producers.md. Written in pg_dump's order
-- and spelling (functions first, their bodies checked when called), except three checks of
-- pushq.devices, written as their migrations wrote them (with BETWEEN, which PostgreSQL keeps as a
-- nesting that its dump does not spell). It never changes: a change to the schema is a new
-- migration.
SET LOCAL check_function_bodies = false;

ALTER TABLE pushq.schema_migrations ADD COLUMN workers_know integer;

CREATE FUNCTION pushq.activity_payload(event text, content_state json DEFAULT NULL::json, generated_at timestamp with time zone DEFAULT now(), stale_date timestamp with time zone DEFAULT NULL::timestamp with time zone, dismissal_date timestamp with time zone DEFAULT NULL::timestamp with time zone, alert json DEFAULT NULL::json, relevance_score double precision DEFAULT NULL::double precision, attributes_type text DEFAULT NULL::text, attributes json DEFAULT NULL::json, input_push_token boolean DEFAULT false, input_push_channel text DEFAULT NULL::text) RETURNS json
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT json_build_object('aps',
               jsonb_build_object('timestamp', floor(extract(epoch FROM COALESCE(generated_at, now())))::bigint, 'event', event)
            || CASE WHEN content_state IS NULL THEN '{}' ELSE jsonb_build_object('content-state', content_state) END
            || CASE WHEN stale_date IS NULL THEN '{}' ELSE jsonb_build_object('stale-date', floor(extract(epoch FROM stale_date))::bigint) END
            || CASE WHEN dismissal_date IS NULL THEN '{}'
                    ELSE jsonb_build_object('dismissal-date', floor(extract(epoch FROM dismissal_date))::bigint) END
            || CASE WHEN alert IS NULL THEN '{}' ELSE jsonb_build_object('alert', alert) END
            || CASE WHEN relevance_score IS NULL THEN '{}' ELSE jsonb_build_object('relevance-score', relevance_score) END
            || CASE WHEN attributes_type IS NULL THEN '{}' ELSE jsonb_build_object('attributes-type', attributes_type) END
            || CASE WHEN attributes IS NULL THEN '{}' ELSE jsonb_build_object('attributes', attributes) END
            || CASE WHEN input_push_token THEN '{"input-push-token": 1}'::jsonb ELSE '{}' END
            || CASE WHEN input_push_channel IS NULL THEN '{}' ELSE jsonb_build_object('input-push-channel', input_push_channel) END)
$$;

CREATE FUNCTION pushq.activity_rows(activity_id text, payload json, priority integer, expires_at timestamp with time zone, credential text, lane text, notify_channel text, metadata jsonb) RETURNS TABLE(id bigint, device_token text, environment text)
    LANGUAGE sql
    AS $$
    INSERT INTO pushq.notifications AS n
        (device_token, payload, topic, push_type, priority, expires_at, environment, credential, lane, notify_channel, metadata)
    SELECT d.device_token, activity_rows.payload, d.topic || pushq.topic_suffix('liveactivity'), 'liveactivity',
           activity_rows.priority::smallint, activity_rows.expires_at, d.environment, activity_rows.credential,
           COALESCE(activity_rows.lane, 'default'), activity_rows.notify_channel, activity_rows.metadata
      FROM pushq.devices d
     WHERE d.kind = 'live_activity'
       AND COALESCE(d.activity_id, d.installation_id) = activity_rows.activity_id
       AND d.invalidated_at IS NULL
       AND d.ended_at IS NULL
     ORDER BY d.device_token, d.environment
    RETURNING n.id, n.device_token, n.environment
$$;

CREATE FUNCTION pushq.broadcast(channel text, payload json, priority integer DEFAULT NULL::integer, expires_at timestamp with time zone DEFAULT NULL::timestamp with time zone, scheduled_at timestamp with time zone DEFAULT now(), max_attempts integer DEFAULT 10, metadata jsonb DEFAULT NULL::jsonb, lane text DEFAULT 'default'::text, dedupe_key text DEFAULT NULL::text, notify_channel text DEFAULT NULL::text) RETURNS bigint
    LANGUAGE sql
    AS $$
    INSERT INTO pushq.notifications
        (channel, payload, push_type, priority, expires_at, scheduled_at, max_attempts, metadata, lane, dedupe_key, notify_channel)
    VALUES (broadcast.channel, broadcast.payload, 'liveactivity', broadcast.priority::smallint, broadcast.expires_at,
            COALESCE(broadcast.scheduled_at, now()), broadcast.max_attempts::smallint, broadcast.metadata,
            COALESCE(broadcast.lane, 'default'), broadcast.dedupe_key, broadcast.notify_channel)
    RETURNING id
$$;

CREATE FUNCTION pushq.channel_active(name text) RETURNS boolean
    LANGUAGE plpgsql STABLE COST 1 PARALLEL SAFE
    AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM pushq.channels c WHERE c.name = channel_active.name AND c.status = 'active');
END
$$;

CREATE FUNCTION pushq.channels_changed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.status IN ('deleting', 'deleted', 'failed') THEN
        UPDATE pushq.notifications
           SET status = 'failed',
               last_reason = CASE WHEN NEW.status = 'failed' THEN 'ChannelFailed' ELSE 'ChannelDeleted' END,
               finished_at = now()
         WHERE channel = NEW.name AND status IN ('queued', 'retrying');
    END IF;
    PERFORM pg_notify('pushq_enqueued', '');
    RETURN NULL;
END
$$;

CREATE FUNCTION pushq.channels_status() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.updated_at := now();
    IF NEW.status IS DISTINCT FROM OLD.status THEN
        IF NEW.status = 'deleting' THEN
            NEW.attempts := 0;
            NEW.scheduled_at := now();
        ELSIF NEW.status = 'deleted' AND NEW.deleted_at IS NULL THEN
            NEW.deleted_at := now();
        END IF;
    END IF;
    RETURN NEW;
END
$$;

CREATE FUNCTION pushq.delete_channel(name text) RETURNS text
    LANGUAGE sql
    AS $$
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

CREATE FUNCTION pushq.devices_activity_tokens() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.invalidated_at IS NOT NULL AND NEW.registered_at > NEW.invalidated_at THEN
        NEW.invalidated_at := NULL;
        NEW.invalid_reason := NULL;
    END IF;
    IF NEW.kind = 'push_to_start' AND NEW.installation_id IS NOT NULL AND NEW.invalidated_at IS NULL THEN
        -- clock_timestamp(): later than any registered_at = now() of this transaction, so that the
        -- retired token counts as invalid even when it was registered in the same transaction.
        IF EXISTS (SELECT 1 FROM pushq.devices d
                    WHERE d.kind = 'push_to_start'
                      AND COALESCE(d.activity_id, d.installation_id) = NEW.installation_id
                      AND d.invalidated_at IS NULL
                      AND d.environment = NEW.environment
                      AND d.topic IS NOT DISTINCT FROM NEW.topic
                      AND d.device_token <> NEW.device_token
                      AND d.registered_at > NEW.registered_at) THEN
            NEW.invalidated_at := clock_timestamp();
            NEW.invalid_reason := 'Replaced';
        ELSE
            UPDATE pushq.devices d
               SET invalidated_at = clock_timestamp(), invalid_reason = 'Replaced'
             WHERE d.kind = 'push_to_start'
               AND COALESCE(d.activity_id, d.installation_id) = NEW.installation_id
               AND d.invalidated_at IS NULL
               AND d.environment = NEW.environment
               AND d.topic IS NOT DISTINCT FROM NEW.topic
               AND d.device_token <> NEW.device_token;
        END IF;
    END IF;
    RETURN NEW;
END
$$;

CREATE FUNCTION pushq.devices_lowercase_token() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.provider = 'apns' THEN
        NEW.device_token := lower(NEW.device_token);
    END IF;
    RETURN NEW;
END
$$;

CREATE FUNCTION pushq.due_ended() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    DELETE FROM pushq.due WHERE id = OLD.id;
    RETURN NULL;
END $$;

CREATE FUNCTION pushq.due_inserted() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO pushq.due (id, lane, due_at, expires_at, retrying)
    SELECT r.id, r.lane, r.scheduled_at, r.expires_at, r.status = 'retrying' FROM inserted_rows r WHERE r.status IN ('queued', 'retrying')
    ON CONFLICT (id) DO NOTHING;
    RETURN NULL;
END $$;

CREATE FUNCTION pushq.due_waiting() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO pushq.due (id, lane, due_at, expires_at, retrying)
    VALUES (NEW.id, NEW.lane, NEW.scheduled_at, NEW.expires_at, NEW.status = 'retrying')
    ON CONFLICT (id) DO UPDATE
       SET lane = EXCLUDED.lane, due_at = EXCLUDED.due_at, expires_at = EXCLUDED.expires_at, retrying = EXCLUDED.retrying;
    RETURN NULL;
END $$;

CREATE FUNCTION pushq.end_activity(activity_id text, content_state json DEFAULT NULL::json, dismissal_date timestamp with time zone DEFAULT NULL::timestamp with time zone, alert json DEFAULT NULL::json, generated_at timestamp with time zone DEFAULT now(), priority integer DEFAULT 10, expires_at timestamp with time zone DEFAULT NULL::timestamp with time zone, credential text DEFAULT NULL::text, lane text DEFAULT 'default'::text, notify_channel text DEFAULT NULL::text, metadata jsonb DEFAULT NULL::jsonb) RETURNS SETOF bigint
    LANGUAGE sql
    AS $$
    WITH sent AS (
        SELECT r.id, r.device_token, r.environment
          FROM pushq.activity_rows(end_activity.activity_id,
                                   pushq.activity_payload('end', end_activity.content_state, end_activity.generated_at,
                                                          dismissal_date => end_activity.dismissal_date, alert => end_activity.alert),
                                   end_activity.priority, end_activity.expires_at, end_activity.credential,
                                   end_activity.lane, end_activity.notify_channel, end_activity.metadata) r
    ), ended AS (
        UPDATE pushq.devices d
           SET ended_at = now(), ended_by = s.id
          FROM sent s
         WHERE d.device_token = s.device_token AND d.environment = s.environment AND d.provider = 'apns'
           AND d.ended_at IS NULL
    )
    SELECT id FROM sent ORDER BY id
$$;

CREATE FUNCTION pushq.enqueue_for_user(user_ref text, payload json, topic text DEFAULT NULL::text, push_type text DEFAULT 'alert'::text, priority integer DEFAULT NULL::integer, expires_at timestamp with time zone DEFAULT NULL::timestamp with time zone, collapse_id text DEFAULT NULL::text, credential text DEFAULT NULL::text, scheduled_at timestamp with time zone DEFAULT now(), max_attempts integer DEFAULT 10, metadata jsonb DEFAULT NULL::jsonb, fcm_payload json DEFAULT NULL::json, lane text DEFAULT 'default'::text, dedupe_key text DEFAULT NULL::text, notify_channel text DEFAULT NULL::text) RETURNS SETOF bigint
    LANGUAGE plpgsql
    AS $$
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
         environment, credential, scheduled_at, max_attempts, metadata, lane, dedupe_key, notify_channel)
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
           enqueue_for_user.metadata,
           COALESCE(enqueue_for_user.lane, 'default'),
           enqueue_for_user.dedupe_key || ':' || d.provider || ':'
               || left(encode(sha256(convert_to(d.environment || ':' || d.device_token, 'UTF8')), 'hex'), 32),
           enqueue_for_user.notify_channel
      FROM pushq.devices d
     WHERE d.user_ref = enqueue_for_user.user_ref
       AND d.kind = 'device'
       AND NOT pushq.token_is_invalid(d.registered_at, d.invalidated_at)
       AND CASE WHEN d.provider = 'fcm' THEN enqueue_for_user.fcm_payload IS NOT NULL
                ELSE enqueue_for_user.payload IS NOT NULL END
     ORDER BY d.provider, d.device_token, d.environment
    ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
    RETURNING id;
END
$$;

CREATE FUNCTION pushq.lanes_budget() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.updated_at := now();
    IF NEW.max_per_second IS NOT NULL THEN
        INSERT INTO pushq.rate_budgets (key) VALUES ('lane:' || NEW.name) ON CONFLICT (key) DO NOTHING;
    END IF;
    RETURN NEW;
END
$$;

CREATE FUNCTION pushq.notifications_channel() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    c pushq.channels%ROWTYPE;
BEGIN
    SELECT * INTO c FROM pushq.channels WHERE name = NEW.channel FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'pushq.notifications: no channel named % in pushq.channels', NEW.channel
            USING ERRCODE = 'check_violation', CONSTRAINT = 'notifications_channel_known', TABLE = 'notifications', SCHEMA = 'pushq';
    END IF;
    IF NEW.credential IS NULL THEN
        NEW.credential := c.credential;
    END IF;
    IF NEW.environment IS NULL THEN
        NEW.environment := c.environment;
    END IF;
    IF COALESCE(NEW.credential, 'default') <> COALESCE(c.credential, 'default')
       OR NEW.environment IS DISTINCT FROM c.environment THEN
        RAISE EXCEPTION 'pushq.notifications: channel % belongs to credential % in environment %, not % in %', NEW.channel,
                COALESCE(c.credential, 'default'), COALESCE(c.environment, 'the worker''s default'),
                COALESCE(NEW.credential, 'default'), COALESCE(NEW.environment, 'the worker''s default')
            USING ERRCODE = 'check_violation', CONSTRAINT = 'notifications_channel_endpoint', TABLE = 'notifications', SCHEMA = 'pushq';
    END IF;
    IF NEW.topic IS NULL THEN
        NEW.topic := c.topic;
    END IF;
    IF c.status IN ('deleting', 'deleted', 'failed') AND NEW.status IN ('queued', 'retrying') THEN
        NEW.status := 'failed';
        NEW.last_reason := CASE WHEN c.status = 'failed' THEN 'ChannelFailed' ELSE 'ChannelDeleted' END;
        NEW.finished_at := now();
    END IF;
    RETURN NEW;
END
$$;

CREATE FUNCTION pushq.notifications_rules() RETURNS trigger
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
$_$;

CREATE FUNCTION pushq.notify_enqueued() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify('pushq_enqueued', '');
    RETURN NULL;
END
$$;

CREATE FUNCTION pushq.notify_final() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify(NEW.notify_channel, json_build_object(
        'id', NEW.id,
        'status', NEW.status,
        'last_status', NEW.last_status,
        'last_reason', left(NEW.last_reason, 200),
        'attempts', NEW.attempts,
        'dedupe_key', NEW.dedupe_key,
        'lane', NEW.lane,
        'provider', NEW.provider,
        'finished_at', NEW.finished_at)::text);
    RETURN NULL;
END
$$;

CREATE FUNCTION pushq.notify_lanes_changed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify('pushq_lanes', '');
    RETURN NULL;
END
$$;

CREATE FUNCTION pushq.retire_ended_activity_token() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE pushq.devices d
       SET invalidated_at = clock_timestamp(), invalid_reason = 'ActivityEnded'
     WHERE d.device_token = lower(NEW.device_token)
       AND d.environment = NEW.environment
       AND d.provider = 'apns'
       AND d.ended_by = NEW.id
       AND d.invalidated_at IS NULL;
    RETURN NULL;
END
$$;

CREATE FUNCTION pushq.start_activity(user_ref text, attributes_type text, attributes json, content_state json, alert json, input_push_token boolean DEFAULT false, input_push_channel text DEFAULT NULL::text, stale_date timestamp with time zone DEFAULT NULL::timestamp with time zone, relevance_score double precision DEFAULT NULL::double precision, generated_at timestamp with time zone DEFAULT now(), priority integer DEFAULT 10, expires_at timestamp with time zone DEFAULT NULL::timestamp with time zone, credential text DEFAULT NULL::text, lane text DEFAULT 'default'::text, notify_channel text DEFAULT NULL::text, metadata jsonb DEFAULT NULL::jsonb) RETURNS SETOF bigint
    LANGUAGE sql
    AS $$
    WITH p AS (
        SELECT pushq.activity_payload('start', start_activity.content_state, start_activity.generated_at,
                                      stale_date => start_activity.stale_date, alert => start_activity.alert,
                                      relevance_score => start_activity.relevance_score,
                                      attributes_type => start_activity.attributes_type, attributes => start_activity.attributes,
                                      input_push_token => start_activity.input_push_token,
                                      input_push_channel => start_activity.input_push_channel) AS payload
    )
    INSERT INTO pushq.notifications
        (device_token, payload, topic, push_type, priority, expires_at, environment, credential, lane, notify_channel, metadata)
    SELECT d.device_token, p.payload, d.topic || pushq.topic_suffix('liveactivity'), 'liveactivity',
           start_activity.priority::smallint, start_activity.expires_at, d.environment, start_activity.credential,
           COALESCE(start_activity.lane, 'default'), start_activity.notify_channel, start_activity.metadata
      FROM pushq.devices d CROSS JOIN p
     WHERE d.user_ref = start_activity.user_ref
       AND d.kind = 'push_to_start'
       AND NOT pushq.token_is_invalid(d.registered_at, d.invalidated_at)
     ORDER BY d.device_token, d.environment
    RETURNING id
$$;

CREATE FUNCTION pushq.token_is_invalid(registered_at timestamp with time zone, invalidated_at timestamp with time zone) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT invalidated_at IS NOT NULL AND (registered_at IS NULL OR registered_at < invalidated_at)
$$;

CREATE FUNCTION pushq.topic_suffix(push_type text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT CASE push_type
        WHEN 'voip'         THEN '.voip'
        WHEN 'complication' THEN '.complication'
        WHEN 'fileprovider' THEN '.pushkit.fileprovider'
        WHEN 'liveactivity' THEN '.push-type.liveactivity'
        WHEN 'widgets'      THEN '.push-type.widgets'
        WHEN 'controls'     THEN '.push-type.controls'
        WHEN 'location'     THEN '.location-query'
        WHEN 'pushtotalk'   THEN '.voip-ptt'
        ELSE ''
    END
$$;

CREATE FUNCTION pushq.update_activity(activity_id text, content_state json, stale_date timestamp with time zone DEFAULT NULL::timestamp with time zone, alert json DEFAULT NULL::json, relevance_score double precision DEFAULT NULL::double precision, generated_at timestamp with time zone DEFAULT now(), priority integer DEFAULT 5, expires_at timestamp with time zone DEFAULT NULL::timestamp with time zone, credential text DEFAULT NULL::text, lane text DEFAULT 'default'::text, notify_channel text DEFAULT NULL::text, metadata jsonb DEFAULT NULL::jsonb) RETURNS SETOF bigint
    LANGUAGE sql
    AS $$
    SELECT r.id
      FROM pushq.activity_rows(update_activity.activity_id,
                               pushq.activity_payload('update', update_activity.content_state, update_activity.generated_at,
                                                      stale_date => update_activity.stale_date, alert => update_activity.alert,
                                                      relevance_score => update_activity.relevance_score),
                               update_activity.priority, update_activity.expires_at, update_activity.credential,
                               update_activity.lane, update_activity.notify_channel, update_activity.metadata) r
     ORDER BY r.id
$$;



CREATE TABLE pushq.api_keys (
    id bigint NOT NULL,
    name text NOT NULL,
    scope text NOT NULL,
    key_hash text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_used_at timestamp with time zone,
    revoked_at timestamp with time zone,
    CONSTRAINT api_keys_key_hash_shape CHECK ((key_hash ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT api_keys_name_shape CHECK ((name ~ '^[A-Za-z0-9_.-]{1,64}$'::text)),
    CONSTRAINT api_keys_scope_known CHECK ((scope = ANY (ARRAY['read'::text, 'enqueue'::text, 'devices'::text, 'admin'::text])))
);

ALTER TABLE pushq.api_keys ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME pushq.api_keys_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE pushq.api_sessions (
    token_hash text NOT NULL,
    key_id bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL
);

CREATE TABLE pushq.audit_log (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    actor text NOT NULL,
    key_id bigint,
    action text NOT NULL,
    target text NOT NULL,
    rows bigint DEFAULT 0 NOT NULL,
    via text NOT NULL,
    detail jsonb,
    client text,
    CONSTRAINT audit_log_action_shape CHECK ((action ~ '^[a-z_]+\.[a-z_]+$'::text)),
    CONSTRAINT audit_log_via_known CHECK ((via = ANY (ARRAY['api'::text, 'dashboard'::text, 'cli'::text])))
);

ALTER TABLE pushq.audit_log ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME pushq.audit_log_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE pushq.channel_reconciliations (
    credential text NOT NULL,
    environment text NOT NULL,
    topic text NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    checked_at timestamp with time zone,
    checked_by text,
    unknown_ids text[] DEFAULT '{}'::text[] NOT NULL,
    listed integer DEFAULT 0 NOT NULL,
    last_reason text
);

CREATE TABLE pushq.channels (
    id bigint NOT NULL,
    name text NOT NULL,
    credential text,
    environment text,
    topic text,
    message_storage_policy smallint DEFAULT 1 NOT NULL,
    status text DEFAULT 'creating'::text NOT NULL,
    apns_channel_id text,
    attempts smallint DEFAULT 0 NOT NULL,
    max_attempts smallint DEFAULT 10 NOT NULL,
    last_status smallint,
    last_reason text,
    apns_request_id text,
    scheduled_at timestamp with time zone DEFAULT now() NOT NULL,
    locked_by text,
    locked_until timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    activated_at timestamp with time zone,
    deleted_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    create_requested_at timestamp with time zone,
    create_request_id text,
    CONSTRAINT channels_active_has_id CHECK (((status <> 'active'::text) OR (apns_channel_id IS NOT NULL))),
    CONSTRAINT channels_apns_channel_id_shape CHECK (((apns_channel_id ~ '^[A-Za-z0-9+/=_-]+$'::text) AND (char_length(apns_channel_id) <= 256))),
    CONSTRAINT channels_environment_known CHECK ((environment = ANY (ARRAY['production'::text, 'development'::text]))),
    CONSTRAINT channels_max_attempts_positive CHECK ((max_attempts >= 1)),
    CONSTRAINT channels_message_storage_policy_known CHECK ((message_storage_policy = ANY (ARRAY[0, 1]))),
    CONSTRAINT channels_name_length CHECK (((char_length(name) >= 1) AND (char_length(name) <= 200))),
    CONSTRAINT channels_status_known CHECK ((status = ANY (ARRAY['creating'::text, 'active'::text, 'deleting'::text, 'deleted'::text, 'failed'::text]))),
    CONSTRAINT channels_topic_shape CHECK ((topic ~ '^[A-Za-z0-9.-]{1,200}$'::text))
);

ALTER TABLE pushq.channels ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME pushq.channels_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE pushq.credential_pauses (
    credential text NOT NULL,
    environment text NOT NULL,
    reason text NOT NULL,
    message text NOT NULL,
    failures integer DEFAULT 1 NOT NULL,
    paused_at timestamp with time zone DEFAULT now() NOT NULL,
    paused_until timestamp with time zone NOT NULL,
    paused_by text,
    kind text DEFAULT 'credential'::text NOT NULL,
    CONSTRAINT credential_pauses_kind_known CHECK ((kind = ANY (ARRAY['credential'::text, 'burst'::text, 'outage'::text])))
);

CREATE TABLE pushq.devices (
    device_token text NOT NULL,
    environment text DEFAULT 'production'::text NOT NULL,
    user_ref text,
    topic text,
    registered_at timestamp with time zone DEFAULT now(),
    invalidated_at timestamp with time zone,
    invalid_reason text,
    provider text DEFAULT 'apns'::text NOT NULL,
    kind text DEFAULT 'device'::text NOT NULL,
    activity_id text,
    installation_id text,
    ended_at timestamp with time zone,
    ended_by bigint,
    CONSTRAINT devices_activity_id_kind CHECK (
CASE
    WHEN (kind = 'live_activity'::text) THEN (activity_id IS NOT NULL)
    ELSE (activity_id IS NULL)
END),
    CONSTRAINT devices_activity_id_shape CHECK (activity_id IS NULL OR (char_length(activity_id) BETWEEN 1 AND 200 AND activity_id !~ '[\x01-\x1f\x7f]')),
    CONSTRAINT devices_device_token_hex CHECK (((provider <> 'apns'::text) OR (device_token ~ '^[0-9a-f]*$'::text))),
    CONSTRAINT devices_device_token_length CHECK (provider <> 'apns' OR (length(device_token) BETWEEN 64 AND 200 AND length(device_token) % 2 = 0)),
    CONSTRAINT devices_environment_known CHECK ((environment = ANY (ARRAY['production'::text, 'development'::text]))),
    CONSTRAINT devices_fcm_environment_default CHECK (((provider <> 'fcm'::text) OR (environment = 'production'::text))),
    CONSTRAINT devices_fcm_token_charset CHECK (((provider <> 'fcm'::text) OR (device_token ~ '^[A-Za-z0-9_:-]*$'::text))),
    CONSTRAINT devices_fcm_token_length CHECK (((provider <> 'fcm'::text) OR ((length(device_token) >= 1) AND (length(device_token) <= 4096)))),
    CONSTRAINT devices_installation_id_shape CHECK (installation_id IS NULL OR (char_length(installation_id) BETWEEN 1 AND 200 AND installation_id !~ '[\x01-\x1f\x7f]')),
    CONSTRAINT devices_invalid_reason_known CHECK ((invalid_reason = ANY (ARRAY['Unregistered'::text, 'ExpiredToken'::text, 'BadDeviceToken'::text, 'UNREGISTERED'::text, 'INVALID_ARGUMENT'::text, 'Replaced'::text, 'ActivityEnded'::text, 'AgeLimit'::text]))),
    CONSTRAINT devices_kind_apns CHECK (((kind = 'device'::text) OR (provider = 'apns'::text))),
    CONSTRAINT devices_kind_known CHECK ((kind = ANY (ARRAY['device'::text, 'push_to_start'::text, 'live_activity'::text]))),
    CONSTRAINT devices_provider_known CHECK ((provider = ANY (ARRAY['apns'::text, 'fcm'::text])))
);

CREATE TABLE pushq.due (
    id bigint NOT NULL,
    lane text NOT NULL,
    due_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone,
    retrying boolean
);

CREATE TABLE pushq.lanes (
    name text NOT NULL,
    rank integer DEFAULT 100 NOT NULL,
    max_per_second double precision,
    paused boolean DEFAULT false NOT NULL,
    note text,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    created_by_pause boolean DEFAULT false NOT NULL,
    CONSTRAINT lanes_max_per_second_positive CHECK ((max_per_second > (0)::double precision)),
    CONSTRAINT lanes_name_shape CHECK ((name ~ '^[A-Za-z0-9_.:-]{1,64}$'::text))
);

CREATE TABLE pushq.leases (
    id bigint NOT NULL,
    worker text NOT NULL,
    lease_until timestamp with time zone NOT NULL,
    ids bigint[] NOT NULL,
    recovered_at timestamp with time zone
)
WITH (toast_tuple_target='8160');
ALTER TABLE ONLY pushq.leases ALTER COLUMN ids SET STORAGE EXTERNAL;

CREATE SEQUENCE pushq.leases_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE pushq.leases_id_seq OWNED BY pushq.leases.id;

CREATE TABLE pushq.notifications (
    id bigint NOT NULL,
    device_token text,
    payload json NOT NULL,
    topic text,
    push_type text DEFAULT 'alert'::text NOT NULL,
    priority smallint,
    expires_at timestamp with time zone,
    collapse_id text,
    apns_id uuid DEFAULT gen_random_uuid() NOT NULL,
    environment text,
    credential text,
    scheduled_at timestamp with time zone DEFAULT now() NOT NULL,
    max_attempts smallint DEFAULT 10 NOT NULL,
    metadata jsonb,
    status text DEFAULT 'queued'::text NOT NULL,
    attempts smallint DEFAULT 0 NOT NULL,
    locked_by text,
    locked_until timestamp with time zone,
    last_status smallint,
    last_reason text,
    apns_unique_id uuid,
    sent_at timestamp with time zone,
    finished_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    provider text DEFAULT 'apns'::text NOT NULL,
    fcm_message_name text,
    lane text DEFAULT 'default'::text NOT NULL,
    dedupe_key text,
    notify_channel text,
    channel text,
    CONSTRAINT notifications_scheduled_at_finite CHECK ((isfinite(scheduled_at) OR (status = ANY (ARRAY['sent'::text, 'failed'::text, 'expired'::text, 'cancelled'::text])))),
    CONSTRAINT notifications_status_known CHECK ((status = ANY (ARRAY['queued'::text, 'sending'::text, 'retrying'::text, 'sent'::text, 'failed'::text, 'expired'::text, 'cancelled'::text])))
)
WITH (autovacuum_vacuum_scale_factor='0.01', autovacuum_vacuum_threshold='1000', autovacuum_vacuum_insert_scale_factor='0.05', autovacuum_analyze_scale_factor='0.02', autovacuum_vacuum_cost_delay='0', fillfactor='33');
ALTER TABLE ONLY pushq.notifications ALTER COLUMN lane SET (n_distinct=10);

ALTER TABLE pushq.notifications ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME pushq.notifications_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE pushq.outcomes (
    status text NOT NULL,
    minute timestamp with time zone NOT NULL,
    lane text NOT NULL,
    worker text NOT NULL,
    reason text NOT NULL,
    rows bigint NOT NULL,
    CONSTRAINT outcomes_status CHECK ((status = ANY (ARRAY['sent'::text, 'failed'::text])))
);

CREATE TABLE pushq.rate_budgets (
    key text NOT NULL,
    tokens double precision DEFAULT 0 NOT NULL,
    refilled_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE pushq.token_throttles (
    device_token text NOT NULL,
    environment text NOT NULL,
    until timestamp with time zone NOT NULL
);

CREATE TABLE pushq.workers (
    id text NOT NULL,
    host text NOT NULL,
    pid integer NOT NULL,
    version text NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    heartbeat_at timestamp with time zone DEFAULT now() NOT NULL,
    credentials jsonb DEFAULT '[]'::jsonb NOT NULL,
    schema_known integer
);

ALTER TABLE ONLY pushq.leases ALTER COLUMN id SET DEFAULT nextval('pushq.leases_id_seq'::regclass);

ALTER TABLE ONLY pushq.api_keys
    ADD CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash);

ALTER TABLE ONLY pushq.api_keys
    ADD CONSTRAINT api_keys_name_key UNIQUE (name);

ALTER TABLE ONLY pushq.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (id);

ALTER TABLE ONLY pushq.api_sessions
    ADD CONSTRAINT api_sessions_pkey PRIMARY KEY (token_hash);

ALTER TABLE ONLY pushq.audit_log
    ADD CONSTRAINT audit_log_pkey PRIMARY KEY (id);

ALTER TABLE ONLY pushq.channel_reconciliations
    ADD CONSTRAINT channel_reconciliations_pkey PRIMARY KEY (credential, environment, topic);

ALTER TABLE ONLY pushq.channels
    ADD CONSTRAINT channels_name_key UNIQUE (name);

ALTER TABLE ONLY pushq.channels
    ADD CONSTRAINT channels_pkey PRIMARY KEY (id);

ALTER TABLE ONLY pushq.credential_pauses
    ADD CONSTRAINT credential_pauses_pkey PRIMARY KEY (credential, environment);

ALTER TABLE ONLY pushq.devices
    ADD CONSTRAINT devices_pkey PRIMARY KEY (device_token, environment, provider);

ALTER TABLE ONLY pushq.devices
    ADD CONSTRAINT devices_token_environment_key UNIQUE (device_token, environment);

ALTER TABLE ONLY pushq.due
    ADD CONSTRAINT due_pkey PRIMARY KEY (id);

ALTER TABLE ONLY pushq.lanes
    ADD CONSTRAINT lanes_pkey PRIMARY KEY (name);

ALTER TABLE ONLY pushq.leases
    ADD CONSTRAINT leases_pkey PRIMARY KEY (id);

ALTER TABLE ONLY pushq.notifications
    ADD CONSTRAINT notifications_pkey PRIMARY KEY (id);

ALTER TABLE ONLY pushq.outcomes
    ADD CONSTRAINT outcomes_pkey PRIMARY KEY (status, minute, lane, worker, reason);

ALTER TABLE ONLY pushq.rate_budgets
    ADD CONSTRAINT rate_budgets_pkey PRIMARY KEY (key);

ALTER TABLE ONLY pushq.token_throttles
    ADD CONSTRAINT token_throttles_pkey PRIMARY KEY (device_token, environment);

ALTER TABLE ONLY pushq.workers
    ADD CONSTRAINT workers_pkey PRIMARY KEY (id);

CREATE INDEX api_sessions_expires ON pushq.api_sessions USING btree (expires_at);

CREATE INDEX api_sessions_key_id ON pushq.api_sessions USING btree (key_id);

CREATE INDEX audit_log_actor_at ON pushq.audit_log USING btree (actor, at);

CREATE INDEX audit_log_at ON pushq.audit_log USING btree (at);

CREATE INDEX channels_apns_channel_id ON pushq.channels USING btree (apns_channel_id) WHERE (apns_channel_id IS NOT NULL);

CREATE INDEX channels_due ON pushq.channels USING btree (scheduled_at, id) WHERE (status = ANY (ARRAY['creating'::text, 'deleting'::text]));

CREATE INDEX devices_activity_key ON pushq.devices USING btree (kind, COALESCE(activity_id, installation_id), registered_at) WHERE ((kind <> 'device'::text) AND (invalidated_at IS NULL));

CREATE INDEX devices_invalidated ON pushq.devices USING btree (device_token, environment, provider) WHERE (invalidated_at IS NOT NULL);

CREATE INDEX devices_user_ref ON pushq.devices USING btree (user_ref) WHERE (user_ref IS NOT NULL);

CREATE INDEX due_expiry ON pushq.due USING btree (expires_at) WHERE (expires_at IS NOT NULL);

CREATE INDEX due_order ON pushq.due USING btree (lane, due_at, id);

CREATE INDEX leases_until ON pushq.leases USING btree (lease_until);

CREATE INDEX notifications_channel_created ON pushq.notifications USING btree (channel, created_at) WHERE (channel IS NOT NULL);

CREATE INDEX notifications_created ON pushq.notifications USING btree (created_at, id);

CREATE UNIQUE INDEX notifications_dedupe_key ON pushq.notifications USING btree (dedupe_key) WHERE (dedupe_key IS NOT NULL);

CREATE INDEX notifications_token_created ON pushq.notifications USING btree (hashtext(device_token), created_at) WHERE (device_token IS NOT NULL);

CREATE TRIGGER channels_changed AFTER UPDATE OF status ON pushq.channels FOR EACH ROW WHEN ((old.status IS DISTINCT FROM new.status)) EXECUTE FUNCTION pushq.channels_changed();

CREATE TRIGGER channels_inserted AFTER INSERT ON pushq.channels FOR EACH STATEMENT EXECUTE FUNCTION pushq.notify_enqueued();

CREATE TRIGGER channels_status BEFORE UPDATE ON pushq.channels FOR EACH ROW EXECUTE FUNCTION pushq.channels_status();

CREATE TRIGGER devices_activity_tokens BEFORE INSERT OR UPDATE ON pushq.devices FOR EACH ROW WHEN ((new.kind <> 'device'::text)) EXECUTE FUNCTION pushq.devices_activity_tokens();

CREATE TRIGGER devices_lowercase_token BEFORE INSERT OR UPDATE OF device_token, provider ON pushq.devices FOR EACH ROW EXECUTE FUNCTION pushq.devices_lowercase_token();

CREATE TRIGGER lanes_budget BEFORE INSERT OR UPDATE ON pushq.lanes FOR EACH ROW EXECUTE FUNCTION pushq.lanes_budget();

CREATE TRIGGER lanes_notify AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON pushq.lanes FOR EACH STATEMENT EXECUTE FUNCTION pushq.notify_lanes_changed();

CREATE TRIGGER notifications_activity_ended AFTER UPDATE OF status ON pushq.notifications FOR EACH ROW WHEN (((new.push_type = 'liveactivity'::text) AND (new.status = ANY (ARRAY['sent'::text, 'failed'::text, 'expired'::text, 'cancelled'::text])) AND (old.status IS DISTINCT FROM new.status) AND (strpos((new.payload)::text, '"end"'::text) > 0))) EXECUTE FUNCTION pushq.retire_ended_activity_token();

CREATE TRIGGER notifications_channel BEFORE INSERT ON pushq.notifications FOR EACH ROW WHEN ((new.channel IS NOT NULL)) EXECUTE FUNCTION pushq.notifications_channel();

CREATE TRIGGER notifications_due_ended AFTER UPDATE OF status ON pushq.notifications FOR EACH ROW WHEN (((old.status = ANY (ARRAY['queued'::text, 'retrying'::text])) AND (new.status <> ALL (ARRAY['queued'::text, 'retrying'::text, 'sending'::text])))) EXECUTE FUNCTION pushq.due_ended();

CREATE TRIGGER notifications_due_expiry AFTER UPDATE OF expires_at ON pushq.notifications FOR EACH ROW WHEN (((new.status = ANY (ARRAY['queued'::text, 'retrying'::text])) AND (old.expires_at IS DISTINCT FROM new.expires_at) AND (NOT (old.status IS DISTINCT FROM new.status)) AND (NOT (old.scheduled_at IS DISTINCT FROM new.scheduled_at)) AND (NOT (old.lane IS DISTINCT FROM new.lane)))) EXECUTE FUNCTION pushq.due_waiting();

CREATE TRIGGER notifications_due_insert AFTER INSERT ON pushq.notifications REFERENCING NEW TABLE AS inserted_rows FOR EACH STATEMENT EXECUTE FUNCTION pushq.due_inserted();

CREATE TRIGGER notifications_due_waiting AFTER UPDATE OF status, scheduled_at, lane ON pushq.notifications FOR EACH ROW WHEN (((new.status = ANY (ARRAY['queued'::text, 'retrying'::text])) AND ((old.status IS DISTINCT FROM new.status) OR (old.scheduled_at IS DISTINCT FROM new.scheduled_at) OR (old.lane IS DISTINCT FROM new.lane)))) EXECUTE FUNCTION pushq.due_waiting();

CREATE TRIGGER notifications_notify_enqueued AFTER INSERT ON pushq.notifications FOR EACH STATEMENT EXECUTE FUNCTION pushq.notify_enqueued();

CREATE TRIGGER notifications_notify_final AFTER UPDATE OF status ON pushq.notifications FOR EACH ROW WHEN (((new.notify_channel IS NOT NULL) AND (new.status = ANY (ARRAY['sent'::text, 'failed'::text, 'expired'::text, 'cancelled'::text])) AND (old.status IS DISTINCT FROM new.status))) EXECUTE FUNCTION pushq.notify_final();

CREATE TRIGGER notifications_rules BEFORE INSERT ON pushq.notifications FOR EACH ROW EXECUTE FUNCTION pushq.notifications_rules();

CREATE TRIGGER notifications_rules_update AFTER UPDATE OF payload, device_token, provider, push_type, topic, priority, collapse_id, environment, lane, notify_channel, dedupe_key, channel, credential, max_attempts, expires_at, metadata ON pushq.notifications FOR EACH ROW EXECUTE FUNCTION pushq.notifications_rules();

CREATE TRIGGER notifications_rules_waiting AFTER UPDATE OF status ON pushq.notifications FOR EACH ROW WHEN (((old.status IS DISTINCT FROM new.status) AND ((new.status = ANY (ARRAY['queued'::text, 'retrying'::text])) OR (old.status = ANY (ARRAY['sent'::text, 'failed'::text, 'expired'::text, 'cancelled'::text]))))) EXECUTE FUNCTION pushq.notifications_rules();

ALTER TABLE ONLY pushq.api_sessions
    ADD CONSTRAINT api_sessions_key_id_fkey FOREIGN KEY (key_id) REFERENCES pushq.api_keys(id) ON DELETE CASCADE;

--
-- PostgreSQL database dump complete
--

INSERT INTO pushq.lanes (name, rank, note) VALUES ('default', 100, 'rows that name no lane, and lanes with no row here');
