-- Fair shares between tenants (issue 48, item 5): pushq.enqueue_for_user takes `tenant`, written
-- into each row it makes (checked as any row's: notifications_tenant_shape). The function of 106
-- with one argument more, at the end (calls by position or by name keep working); its privileges
-- are carried over to the new signature. No table is locked: only the function is replaced.

CREATE TEMPORARY TABLE enqueue_for_user_acl ON COMMIT DROP AS
SELECT proacl AS acl FROM pg_proc
 WHERE oid = 'pushq.enqueue_for_user(text, json, text, text, integer, timestamptz, text, text, timestamptz, integer, jsonb, json, text, text, text, json, timestamp)'::regprocedure;

DROP FUNCTION pushq.enqueue_for_user(text, json, text, text, integer, timestamptz, text, text, timestamptz, integer, jsonb, json, text, text, text, json, timestamp);

CREATE FUNCTION pushq.enqueue_for_user(
    user_ref        text,
    payload         json,
    topic           text        DEFAULT NULL,
    push_type       text        DEFAULT 'alert',
    priority        integer     DEFAULT NULL,
    expires_at      timestamptz DEFAULT NULL,
    collapse_id     text        DEFAULT NULL,
    credential      text        DEFAULT NULL,
    scheduled_at    timestamptz DEFAULT NULL,
    max_attempts    integer     DEFAULT 10,
    metadata        jsonb       DEFAULT NULL,
    fcm_payload     json        DEFAULT NULL,
    lane            text        DEFAULT 'default',
    dedupe_key      text        DEFAULT NULL,
    notify_channel  text        DEFAULT NULL,
    webpush_payload json        DEFAULT NULL,
    local_time      timestamp   DEFAULT NULL,
    tenant          text        DEFAULT NULL
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
    IF enqueue_for_user.local_time IS NOT NULL AND enqueue_for_user.scheduled_at IS NOT NULL THEN
        RAISE EXCEPTION 'pushq.enqueue_for_user: local_time and scheduled_at given together: give one'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'enqueue_for_user_local_time',
                  DETAIL = 'local_time is read in each device''s time_zone (UTC without one); scheduled_at is one instant for every device.';
    END IF;
    IF NOT isfinite(enqueue_for_user.local_time) THEN
        RAISE EXCEPTION 'pushq.enqueue_for_user: local_time must be a finite time, not %', enqueue_for_user.local_time
            USING ERRCODE = 'check_violation', CONSTRAINT = 'enqueue_for_user_local_time';
    END IF;
    RETURN QUERY
    INSERT INTO pushq.notifications
        (provider, device_token, payload, topic, push_type, priority, expires_at, collapse_id,
         environment, credential, scheduled_at, max_attempts, metadata, lane, dedupe_key, notify_channel, webpush_keys,
         time_zone, user_ref, tenant)
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
           -- timestamp AT TIME ZONE 'UTC' is UTC whatever the session's TimeZone.
           CASE WHEN enqueue_for_user.local_time IS NULL THEN COALESCE(enqueue_for_user.scheduled_at, now())
                ELSE greatest(enqueue_for_user.local_time AT TIME ZONE COALESCE(z.name, 'UTC'), now()) END,
           enqueue_for_user.max_attempts::smallint,
           enqueue_for_user.metadata,
           COALESCE(enqueue_for_user.lane, 'default'),
           enqueue_for_user.dedupe_key || ':' || d.provider || ':'
               || left(encode(sha256(convert_to(d.environment || ':' || d.device_token, 'UTF8')), 'hex'), 32),
           enqueue_for_user.notify_channel,
           CASE WHEN d.provider = 'webpush' THEN d.webpush_keys END,
           z.name,
           enqueue_for_user.user_ref,
           enqueue_for_user.tenant
      FROM pushq.devices d
      LEFT JOIN pushq.time_zones z ON z.name = d.time_zone
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

SELECT pushq.carry_execute_grants((SELECT a.acl FROM enqueue_for_user_acl a),
    'pushq.enqueue_for_user(text, json, text, text, integer, timestamptz, text, text, timestamptz, integer, jsonb, json, text, text, text, json, timestamp, text)'::regprocedure);
