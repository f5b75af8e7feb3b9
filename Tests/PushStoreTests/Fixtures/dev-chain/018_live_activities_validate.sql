-- pushq:commit-lock pushq.notifications, pushq.devices
-- pushq schema, version 18: the checks of schema 16 hold for every row, and the SQL functions
-- that start, update and end Live Activities.
--
-- Its own transaction, after versions 16 and 17 committed. VALIDATE CONSTRAINT takes SHARE UPDATE
-- EXCLUSIVE (PostgreSQL 15) while it reads the table, so producers keep inserting and workers
-- keep claiming. Every device before version 16 has kind 'device' and no activity or
-- installation id, which meet the registry's checks. An open `liveactivity` row written before
-- version 16 without the keys its event needs would be ignored by the device anyway: a waiting
-- one (queued, retrying: what the checks look at) ends `failed` with last_reason 'InvalidRow',
-- its data kept (as schema 5 does); rows in flight and final rows stay as they are.
--
-- (commit-lock: the migrator takes SHARE on pushq.notifications, pushq.devices just before the commit, so that no
-- INSERT is being planned when VALIDATE changes the row descriptor: see CommitLock.swift, added
-- after these shipped; databases that applied this migration before are not affected.)
UPDATE pushq.notifications
   SET status       = 'failed',
       last_reason  = 'InvalidRow',
       locked_by    = NULL,
       locked_until = NULL,
       finished_at  = now()
 WHERE status IN ('queued', 'retrying')
   AND push_type = 'liveactivity'
   AND NOT (COALESCE(payload -> 'aps' ->> 'event' IN ('start', 'update', 'end')
                     AND json_typeof(payload -> 'aps' -> 'timestamp') = 'number', false)
            AND COALESCE(json_typeof(payload -> 'aps' -> 'content-state') = 'object',
                         payload -> 'aps' ->> 'event' = 'end', true)
            AND (COALESCE(payload -> 'aps' ->> 'event', '') <> 'start'
                 OR COALESCE(json_typeof(payload -> 'aps' -> 'attributes-type') = 'string'
                             AND json_typeof(payload -> 'aps' -> 'attributes') = 'object'
                             AND json_typeof(payload -> 'aps' -> 'alert') IN ('object', 'string'), false)));

ALTER TABLE pushq.notifications
    VALIDATE CONSTRAINT notifications_liveactivity_event,
    VALIDATE CONSTRAINT notifications_liveactivity_content_state,
    VALIDATE CONSTRAINT notifications_liveactivity_start;

ALTER TABLE pushq.devices
    VALIDATE CONSTRAINT devices_kind_known,
    VALIDATE CONSTRAINT devices_kind_apns,
    VALIDATE CONSTRAINT devices_activity_id_kind,
    VALIDATE CONSTRAINT devices_activity_id_shape,
    VALIDATE CONSTRAINT devices_installation_id_shape,
    VALIDATE CONSTRAINT devices_invalid_reason_known;

-- The JSON of an ActivityKit push: {"aps": {...}} with `timestamp` (whole seconds of
-- generated_at), `event`, and each other key given (not NULL): `content-state`, `stale-date`,
-- `dismissal-date` (seconds), `alert`, `relevance-score`, `attributes-type`, `attributes`,
-- `input-push-token` (1 when true) and `input-push-channel` (a broadcast channel's id). For
-- producers who write their own rows (a broadcast row, a payload with keys beside `aps`), and
-- for the three functions below.
CREATE FUNCTION pushq.activity_payload(
    event              text,
    content_state      json             DEFAULT NULL,
    generated_at       timestamptz      DEFAULT now(),
    stale_date         timestamptz      DEFAULT NULL,
    dismissal_date     timestamptz      DEFAULT NULL,
    alert              json             DEFAULT NULL,
    relevance_score    double precision DEFAULT NULL,
    attributes_type    text             DEFAULT NULL,
    attributes         json             DEFAULT NULL,
    input_push_token   boolean          DEFAULT false,
    input_push_channel text             DEFAULT NULL
) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE AS $$
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

-- Starts a Live Activity on every device of a user: one `start` row per valid push-to-start
-- token of user_ref, push type liveactivity, topic the device's bundle id + .push-type.liveactivity
-- (the worker's default topic when the device has none), priority 10 unless given. Returns the
-- new ids. Ask for update tokens with input_push_token (iOS 18: the app then receives the new
-- activity's token and registers it as kind 'live_activity' with your activity id), or subscribe
-- the activity to a broadcast channel with input_push_channel.
CREATE FUNCTION pushq.start_activity(
    user_ref           text,
    attributes_type    text,
    attributes         json,
    content_state      json,
    alert              json,
    input_push_token   boolean          DEFAULT false,
    input_push_channel text             DEFAULT NULL,
    stale_date         timestamptz      DEFAULT NULL,
    relevance_score    double precision DEFAULT NULL,
    generated_at       timestamptz      DEFAULT now(),
    priority           integer          DEFAULT 10,
    expires_at         timestamptz      DEFAULT NULL,
    credential         text             DEFAULT NULL,
    lane               text             DEFAULT 'default',
    notify_channel     text             DEFAULT NULL,
    metadata           jsonb            DEFAULT NULL
) RETURNS SETOF bigint
LANGUAGE sql VOLATILE AS $$
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

-- The rows of an update or an end: one per valid live_activity token of activity_id that was not
-- ended, with `payload`, in token order; returns each row's id, token and environment. Found
-- through devices_activity_key (schema 17). Called by the two functions below.
CREATE FUNCTION pushq.activity_rows(
    activity_id     text,
    payload         json,
    priority        integer,
    expires_at      timestamptz,
    credential      text,
    lane            text,
    notify_channel  text,
    metadata        jsonb
) RETURNS TABLE (id bigint, device_token text, environment text)
LANGUAGE sql VOLATILE AS $$
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

-- Updates a Live Activity: one `update` row per valid live_activity token of activity_id that
-- was not ended, priority 5 unless given (Apple's budget: see docs/producers.md, Live Activities). Returns the new ids.
CREATE FUNCTION pushq.update_activity(
    activity_id      text,
    content_state    json,
    stale_date       timestamptz      DEFAULT NULL,
    alert            json             DEFAULT NULL,
    relevance_score  double precision DEFAULT NULL,
    generated_at     timestamptz      DEFAULT now(),
    priority         integer          DEFAULT 5,
    expires_at       timestamptz      DEFAULT NULL,
    credential       text             DEFAULT NULL,
    lane             text             DEFAULT 'default',
    notify_channel   text             DEFAULT NULL,
    metadata         jsonb            DEFAULT NULL
) RETURNS SETOF bigint
LANGUAGE sql VOLATILE AS $$
    SELECT r.id
      FROM pushq.activity_rows(update_activity.activity_id,
                               pushq.activity_payload('update', update_activity.content_state, update_activity.generated_at,
                                                      stale_date => update_activity.stale_date, alert => update_activity.alert,
                                                      relevance_score => update_activity.relevance_score),
                               update_activity.priority, update_activity.expires_at, update_activity.credential,
                               update_activity.lane, update_activity.notify_channel, update_activity.metadata) r
     ORDER BY r.id
$$;

-- Ends a Live Activity: one `end` row per valid live_activity token of activity_id that was not
-- ended yet, priority 10 unless given; each token is marked ended (ended_at, ended_by: its row)
-- and retired 'ActivityEnded' when that row becomes final (the trigger of schema 16), so that
-- the end itself is still sent and retried. Updates after this find no token. Returns the new ids.
CREATE FUNCTION pushq.end_activity(
    activity_id      text,
    content_state    json             DEFAULT NULL,
    dismissal_date   timestamptz      DEFAULT NULL,
    alert            json             DEFAULT NULL,
    generated_at     timestamptz      DEFAULT now(),
    priority         integer          DEFAULT 10,
    expires_at       timestamptz      DEFAULT NULL,
    credential       text             DEFAULT NULL,
    lane             text             DEFAULT 'default',
    notify_channel   text             DEFAULT NULL,
    metadata         jsonb            DEFAULT NULL
) RETURNS SETOF bigint
LANGUAGE sql VOLATILE AS $$
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

-- pushq.enqueue_for_user sends to a user's ordinary devices only (kind 'device'): an alert to a
-- push-to-start or Live Activity token would be refused by APNs or shown nowhere. Same
-- arguments and meaning as schema 15 otherwise.
CREATE OR REPLACE FUNCTION pushq.enqueue_for_user(
    user_ref       text,
    payload        json,
    topic          text        DEFAULT NULL,
    push_type      text        DEFAULT 'alert',
    priority       integer     DEFAULT NULL,
    expires_at     timestamptz DEFAULT NULL,
    collapse_id    text        DEFAULT NULL,
    credential     text        DEFAULT NULL,
    scheduled_at   timestamptz DEFAULT now(),
    max_attempts   integer     DEFAULT 10,
    metadata       jsonb       DEFAULT NULL,
    fcm_payload    json        DEFAULT NULL,
    lane           text        DEFAULT 'default',
    dedupe_key     text        DEFAULT NULL,
    notify_channel text        DEFAULT NULL
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
