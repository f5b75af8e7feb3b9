-- pushq:lock-retry lock_timeout=200ms tries=100
-- The recipient's time zone and local delivery time (issue 48, first increment).
--
-- * pushq.time_zones: the IANA names pushq accepts, copied from pg_timezone_names (without its
--   localtime, posixrules and Factory entries) so that a row's zone is checked by one index probe
--   instead of a walk of the zone directory (~30–200 ms). pushq.refresh_time_zones() copies it
--   again (names added, names gone removed); `pushq migrate` calls it on every run, so after a
--   PostgreSQL or tzdata upgrade running `pushq migrate` refreshes it. Readable by every role: a
--   producer's INSERT with a time_zone reads it.
-- * pushq.devices.time_zone, pushq.notifications.time_zone: an IANA name or NULL (NULL: UTC). An
--   unknown name is refused at INSERT and at UPDATE of the column by the trigger function
--   pushq.time_zone_known(), SQLSTATE 23514 under devices_time_zone_known or
--   notifications_time_zone_known, its message naming the column and the value. Rows without a
--   zone do not call it (the triggers' WHEN).
-- * pushq.notifications.user_ref: the recipient, set by pushq.enqueue_for_user.
-- * pushq.enqueue_for_user takes `local_time` (timestamp without time zone): each device's row is
--   scheduled at local_time in the device's zone (UTC without one, whatever the session's
--   TimeZone), now if that instant is past; with scheduled_at too it is refused
--   (enqueue_for_user_local_time). scheduled_at's default becomes NULL (still: now). It copies each
--   device's time_zone and sets user_ref. Its privileges are carried over to the new signature.
--
-- Nothing reads or rewrites a row: the columns are nullable without a default (catalog only).
-- ALTER TABLE and CREATE TRIGGER take ACCESS EXCLUSIVE / SHARE ROW EXCLUSIVE on both tables for an
-- instant, waited for at most 200 ms at a time (lock-retry). Workers of 0.4.0 name none of the new
-- columns: their claim, write-back and expiry are unchanged, and so are producers' INSERTs.

CREATE TABLE pushq.time_zones (
    name text PRIMARY KEY
);
GRANT SELECT ON pushq.time_zones TO PUBLIC;

-- Copies pg_timezone_names into pushq.time_zones: the names it lists that are new are added, the
-- names it no longer lists are removed (rows that already carry one keep it). Returns
-- {"added": <count>, "removed": [<names>]}.
CREATE FUNCTION pushq.refresh_time_zones() RETURNS jsonb
LANGUAGE sql VOLATILE AS $$
    WITH listed AS (
        SELECT name FROM pg_timezone_names WHERE name NOT IN ('localtime', 'posixrules', 'Factory')
    ), inserted AS (
        INSERT INTO pushq.time_zones (name) SELECT name FROM listed ON CONFLICT (name) DO NOTHING RETURNING name
    ), deleted AS (
        DELETE FROM pushq.time_zones z WHERE NOT EXISTS (SELECT FROM listed l WHERE l.name = z.name) RETURNING z.name
    )
    SELECT jsonb_build_object('added', (SELECT count(*) FROM inserted),
                              'removed', (SELECT COALESCE(jsonb_agg(name ORDER BY name), '[]') FROM deleted))
$$;

SELECT pushq.refresh_time_zones();

ALTER TABLE pushq.notifications
    ADD COLUMN time_zone text,
    ADD COLUMN user_ref text;

ALTER TABLE pushq.devices
    ADD COLUMN time_zone text;

-- The zone check of every table with a time_zone (a rule breaks only for a name not in pushq.time_zones; the
-- triggers call it only for a row that has one).
CREATE FUNCTION pushq.time_zone_known() RETURNS trigger
LANGUAGE plpgsql AS $_$
DECLARE
    spelled text;
    hint text;
BEGIN
    IF EXISTS (SELECT FROM pushq.time_zones z WHERE z.name = NEW.time_zone) THEN
        RETURN NEW;
    END IF;
    SELECT z.name INTO spelled FROM pushq.time_zones z WHERE lower(z.name) = lower(NEW.time_zone) ORDER BY z.name LIMIT 1;
    hint := CASE WHEN spelled IS NOT NULL THEN format('The name is spelled %s.', spelled)
                 ELSE 'An IANA name as pg_timezone_names lists it, e.g. Europe/Paris or Asia/Kolkata (the names are in pushq.time_zones), or NULL for UTC.' END;
    -- Named as the table's own check would be: <table>_time_zone_known, whichever table fires it.
    RAISE EXCEPTION 'new row for relation "%" violates check constraint "%": time_zone % is not a time zone pushq knows',
                    TG_TABLE_NAME, TG_TABLE_NAME || '_time_zone_known', quote_literal(left(NEW.time_zone, 100))
        USING ERRCODE = 'check_violation', CONSTRAINT = TG_TABLE_NAME || '_time_zone_known', TABLE = TG_TABLE_NAME, SCHEMA = 'pushq',
              COLUMN = 'time_zone', HINT = hint;
END
$_$;

CREATE TRIGGER devices_time_zone
    BEFORE INSERT OR UPDATE OF time_zone ON pushq.devices
    FOR EACH ROW WHEN (NEW.time_zone IS NOT NULL) EXECUTE FUNCTION pushq.time_zone_known();

CREATE TRIGGER notifications_time_zone
    BEFORE INSERT OR UPDATE OF time_zone ON pushq.notifications
    FOR EACH ROW WHEN (NEW.time_zone IS NOT NULL) EXECUTE FUNCTION pushq.time_zone_known();

-- enqueue_for_user: `local_time` (each device's row at that local time in its zone: UTC without
-- one, or with a zone the server no longer lists), each device's time_zone copied, user_ref set.
-- scheduled_at's default becomes NULL (still meaning now) so that a call giving both is told so.
-- The privileges on the function of 105 are granted on this one (a producer's role that may
-- EXECUTE it still may).
CREATE TEMPORARY TABLE enqueue_for_user_acl ON COMMIT DROP AS
SELECT proacl AS acl FROM pg_proc
 WHERE oid = 'pushq.enqueue_for_user(text, json, text, text, integer, timestamptz, text, text, timestamptz, integer, jsonb, json, text, text, text, json)'::regprocedure;

DROP FUNCTION pushq.enqueue_for_user(text, json, text, text, integer, timestamptz, text, text, timestamptz, integer, jsonb, json, text, text, text, json);

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
    local_time      timestamp   DEFAULT NULL
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
         time_zone, user_ref)
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
           enqueue_for_user.user_ref
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
    'pushq.enqueue_for_user(text, json, text, text, integer, timestamptz, text, text, timestamptz, integer, jsonb, json, text, text, text, json, timestamp)'::regprocedure);
