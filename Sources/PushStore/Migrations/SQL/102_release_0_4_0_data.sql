-- pushq:commit-lock pushq.devices
-- pushq 0.4.0, part 3 of 5: the data. Its own transaction, after parts 1 and 2 committed.
--
-- * pushq.enqueue_for_user takes a lane, a dedupe_key and a notify_channel (its 0.3.0 calls mean
--   what they meant), and sends to ordinary devices only. Replaced here, once part 2's
--   notifications_dedupe_key exists: its ON CONFLICT needs that index.
-- * An open `liveactivity` row written by 0.3.0 without the keys its event needs would be ignored
--   by the device anyway: a waiting one ends `failed` with last_reason 'InvalidRow', its data
--   kept; rows in flight and final rows stay as they are.
-- * pushq.due gets an entry for each waiting row (part 1's triggers keep it in step from then on;
--   an entry they made first is kept). One INSERT of the waiting rows' ids, lanes, due times and
--   expiries: it reads them through 0.3.0's notifications_due.
-- * The planner's statistics of `lane` (n_distinct = 10, part 1) are read by ANALYZE of that
--   column, now if the table has statistics already (a sample of 30 000 rows, about a second).
-- * pushq.devices' checks of part 1 are validated: SHARE UPDATE EXCLUSIVE while the table is read,
--   so producers and workers go on. Every 0.3.0 device has kind 'device' and no activity or
--   installation id, which meet them.
-- (commit-lock: the migrator takes SHARE on pushq.devices just before the commit, so that no
-- INSERT is being planned when VALIDATE changes the row descriptor: see CommitLock.swift.)
DROP FUNCTION pushq.enqueue_for_user(text, json, text, text, integer, timestamptz, text, text, timestamptz, integer, jsonb, json);

CREATE FUNCTION pushq.enqueue_for_user(
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

INSERT INTO pushq.due (id, lane, due_at, expires_at, retrying)
SELECT n.id, n.lane, n.scheduled_at, n.expires_at, n.status = 'retrying' FROM pushq.notifications n WHERE n.status IN ('queued', 'retrying')
ON CONFLICT (id) DO NOTHING;

DO $$
BEGIN
    IF (SELECT reltuples FROM pg_class WHERE oid = 'pushq.notifications'::regclass) >= 0 THEN
        ANALYZE pushq.notifications (lane);
    END IF;
END
$$;

ALTER TABLE pushq.devices
    VALIDATE CONSTRAINT devices_kind_known,
    VALIDATE CONSTRAINT devices_kind_apns,
    VALIDATE CONSTRAINT devices_activity_id_kind,
    VALIDATE CONSTRAINT devices_activity_id_shape,
    VALIDATE CONSTRAINT devices_installation_id_shape,
    VALIDATE CONSTRAINT devices_invalid_reason_known;
