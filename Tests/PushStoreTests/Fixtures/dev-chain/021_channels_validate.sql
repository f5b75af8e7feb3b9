-- pushq:commit-lock pushq.notifications
-- pushq schema, version 21: the checks of version 19 hold for every row; broadcast rows take
-- their channel's credential and environment; deleting a channel ends the rows that wait for it.
--
-- Its own transaction, after versions 19 and 20 committed: VALIDATE CONSTRAINT takes SHARE UPDATE
-- EXCLUSIVE while it reads the table, so producers keep inserting and workers keep claiming.
-- Nothing can fail: every row before version 19 has a device token and no channel.
--
-- (commit-lock: the migrator takes SHARE on pushq.notifications just before the commit, so that no
-- INSERT is being planned when VALIDATE changes the row descriptor: see CommitLock.swift, added
-- after these shipped; databases that applied this migration before are not affected.)
ALTER TABLE pushq.notifications
    VALIDATE CONSTRAINT notifications_target,
    VALIDATE CONSTRAINT notifications_broadcast_push_type,
    VALIDATE CONSTRAINT notifications_broadcast_payload_size,
    VALIDATE CONSTRAINT notifications_payload_size;

-- A broadcast row (one that names a `channel`), at INSERT:
--   * its channel must exist: else SQLSTATE 23514, constraint notifications_channel_known;
--   * it takes the channel's credential and environment (a row naming others is refused,
--     notifications_channel_endpoint: the channel exists at Apple for that key and environment
--     only), and its bundle id as `topic` when it names none;
--   * a row for a channel that is being deleted, deleted or failed ends at once, `failed` with
--     `last_reason` ChannelDeleted or ChannelFailed: it can never go out.
-- The channel row is locked FOR SHARE until the INSERT commits, so a deletion that commits first
-- is seen here, and one that commits later sees this row (and ends it). Rows to a device token
-- do not call it (the trigger's WHEN).
CREATE FUNCTION pushq.notifications_channel() RETURNS trigger
LANGUAGE plpgsql AS $$
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

CREATE TRIGGER notifications_channel
    BEFORE INSERT ON pushq.notifications
    FOR EACH ROW
    WHEN (NEW.channel IS NOT NULL)
    EXECUTE FUNCTION pushq.notifications_channel();

-- A channel's status, whoever changes it (the producer, pushq.delete_channel, a worker):
--   * to 'deleting': its attempts start again from 0, due now (a create's backoff no longer applies);
--   * to 'deleted': deleted_at is stamped.
CREATE FUNCTION pushq.channels_status() RETURNS trigger
LANGUAGE plpgsql AS $$
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

CREATE TRIGGER channels_status
    BEFORE UPDATE ON pushq.channels
    FOR EACH ROW EXECUTE FUNCTION pushq.channels_status();

-- After a channel's status changed:
--   * deleting, deleted or failed: its waiting rows end `failed` (ChannelDeleted, ChannelFailed),
--     through notifications_channel_waiting; rows in flight finish with Apple's answer;
--   * active: workers are woken to send the rows that waited for it.
-- A new channel, or one to delete, wakes the workers' channel loops (the same NOTIFY).
CREATE FUNCTION pushq.channels_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
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

CREATE TRIGGER channels_changed
    AFTER UPDATE OF status ON pushq.channels
    FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION pushq.channels_changed();

CREATE TRIGGER channels_inserted
    AFTER INSERT ON pushq.channels
    FOR EACH STATEMENT EXECUTE FUNCTION pushq.notify_enqueued();

-- Deletes channel `name`: at Apple by a worker when it was created there (status 'deleting'),
-- at once when it never was and no worker is creating it now ('deleted'). Its waiting rows end
-- `failed`/ChannelDeleted. Returns the channel's status afterwards; NULL when no channel has
-- that name. Calling it again changes nothing.
CREATE FUNCTION pushq.delete_channel(name text) RETURNS text
LANGUAGE sql VOLATILE AS $$
    UPDATE pushq.channels c
       SET status = CASE WHEN c.status IN ('deleting', 'deleted') THEN c.status
                         WHEN c.apns_channel_id IS NULL AND (c.locked_until IS NULL OR c.locked_until < now()) THEN 'deleted'
                         ELSE 'deleting' END
     WHERE c.name = delete_channel.name
    RETURNING c.status
$$;

-- One broadcast to channel `channel`: a row of pushq.notifications with push type liveactivity
-- (the only one Apple takes on a channel); returns its id. `payload` is the Live Activity's
-- JSON (aps.event, aps.timestamp, aps.content-state…); the other arguments mean what the
-- columns of the same name mean.
CREATE FUNCTION pushq.broadcast(
    channel        text,
    payload        json,
    priority       integer     DEFAULT NULL,
    expires_at     timestamptz DEFAULT NULL,
    scheduled_at   timestamptz DEFAULT now(),
    max_attempts   integer     DEFAULT 10,
    metadata       jsonb       DEFAULT NULL,
    lane           text        DEFAULT 'default',
    dedupe_key     text        DEFAULT NULL,
    notify_channel text        DEFAULT NULL
) RETURNS bigint
LANGUAGE sql VOLATILE AS $$
    INSERT INTO pushq.notifications
        (channel, payload, push_type, priority, expires_at, scheduled_at, max_attempts, metadata, lane, dedupe_key, notify_channel)
    VALUES (broadcast.channel, broadcast.payload, 'liveactivity', broadcast.priority::smallint, broadcast.expires_at,
            COALESCE(broadcast.scheduled_at, now()), broadcast.max_attempts::smallint, broadcast.metadata,
            COALESCE(broadcast.lane, 'default'), broadcast.dedupe_key, broadcast.notify_channel)
    RETURNING id
$$;

-- Whether channel `name` is `active` at Apple: the claim's test for a broadcast row (rows to a
-- device token never call it). PL/pgSQL, so never inlined, with COST 1: the planner prices the
-- test at one operator per row. Written inline as an EXISTS it was priced at a scan of
-- pushq.channels for every row of the due index, which lifted the claim's estimated cost over
-- jit_above_cost: 2 s of JIT compilation per claim of 500 rows, where it takes 9 ms (measured,
-- docs/performance.md).
CREATE FUNCTION pushq.channel_active(name text) RETURNS boolean
LANGUAGE plpgsql STABLE PARALLEL SAFE COST 1 AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM pushq.channels c WHERE c.name = channel_active.name AND c.status = 'active');
END
$$;
