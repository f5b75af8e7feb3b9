-- pushq:commit-lock pushq.notifications
-- pushq schema, version 15: the constraints of version 12 hold for every row, and
-- pushq.enqueue_for_user takes a lane, a dedupe key and a notify channel.
--
-- Its own transaction, after versions 12 to 14 committed: VALIDATE CONSTRAINT takes SHARE UPDATE
-- EXCLUSIVE (PostgreSQL 15) while it reads the table, so producers keep inserting and workers
-- keep claiming. Nothing can fail: every row before version 12 has the columns' defaults, and
-- since version 12 every INSERT and UPDATE is checked.
--
-- (commit-lock: the migrator takes SHARE on pushq.notifications just before the commit, so that no
-- INSERT is being planned when VALIDATE changes the row descriptor: see CommitLock.swift, added
-- after these shipped; databases that applied this migration before are not affected.)
ALTER TABLE pushq.notifications
    VALIDATE CONSTRAINT notifications_lane_name,
    VALIDATE CONSTRAINT notifications_dedupe_key_length,
    VALIDATE CONSTRAINT notifications_notify_channel_name;

-- One notification per valid device of a user, of both providers; returns the new ids.
-- Every call of version 7, positional or named, means what it meant: the new arguments come
-- last, with defaults that change nothing.
--   lane            the rows' lane.
--   dedupe_key      each row gets dedupe_key || ':' || provider || ':' || the first 32 hex digits
--                   of the SHA-256 of environment || ':' || token (the device's registry key: a
--                   token registered in both APNs environments gets a row for each, as without
--                   a key): a retried fan-out makes no row twice. The ids
--                   returned are those of the rows made by this call: none for devices that
--                   already had theirs. 1 to 160 characters, so that every derived key fits in
--                   the column's 200; another length is refused before any row is made, with
--                   SQLSTATE 23514 and the constraint name enqueue_for_user_dedupe_key_length
--                   (not the column's notifications_dedupe_key_length, which would name a key
--                   the caller never wrote).
--   notify_channel  the rows' notify_channel.
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
       AND NOT pushq.token_is_invalid(d.registered_at, d.invalidated_at)
       AND CASE WHEN d.provider = 'fcm' THEN enqueue_for_user.fcm_payload IS NOT NULL
                ELSE enqueue_for_user.payload IS NOT NULL END
     ORDER BY d.provider, d.device_token, d.environment
    ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
    RETURNING id;
END
$$;
