-- pushq:lock-retry lock_timeout=200ms tries=100
-- pushq 0.4.0, part 1 of 5 (from 0.3.0, schema 11): the new tables, columns, functions and
-- triggers, in one transaction.
--
-- Nothing here reads or rewrites a row: every column added to a table that holds rows has a
-- constant default or none; checks on pushq.devices are added NOT VALID (validated by part 3
-- without blocking anyone). The table's rules of pushq.notifications become one trigger function,
-- pushq.notifications_rules(), checked when a producer writes a row instead of at every claim and
-- answer: its 20 CHECK constraints of 0.3.0 are dropped (scheduled_at_finite and status_known,
-- which read columns the worker writes, stay constraints), and what producers see is unchanged:
-- SQLSTATE 23514 with the constraint's name. ALTER TABLE takes ACCESS EXCLUSIVE on
-- pushq.notifications and pushq.devices for an instant, first, before anything else locks them;
-- a lock not granted within 200 ms rolls the whole file back so that the producers and 0.3.0
-- workers queued behind it go on, and it is tried again (lock-retry).
--
-- 0.3.0 workers keep working beside it: they name none of the new columns, claim every lane in
-- one order, and leave the entries of pushq.due that their claims pass (the upkeep of 0.4.0
-- workers deletes them). The indexes are part 2, the data part 3, what 0.3.0 workers read is
-- dropped by parts 4 and 5 once none runs.

-- pushq.notifications: lanes, idempotent enqueue, completion signals, broadcasts (a row of a
-- broadcast channel has no device token).
ALTER TABLE pushq.notifications
    ADD COLUMN lane text NOT NULL DEFAULT 'default',
    ADD COLUMN dedupe_key text,
    ADD COLUMN notify_channel text,
    ADD COLUMN channel text,
    ALTER COLUMN device_token DROP NOT NULL,
    ALTER COLUMN lane SET (n_distinct = 10),
    DROP CONSTRAINT notifications_background_priority,
    DROP CONSTRAINT notifications_collapse_id_length,
    DROP CONSTRAINT notifications_collapse_id_printable,
    DROP CONSTRAINT notifications_credential_printable,
    DROP CONSTRAINT notifications_device_token_hex,
    DROP CONSTRAINT notifications_device_token_length,
    DROP CONSTRAINT notifications_environment_known,
    DROP CONSTRAINT notifications_expires_at_finite,
    DROP CONSTRAINT notifications_fcm_no_apns_columns,
    DROP CONSTRAINT notifications_fcm_payload_target,
    DROP CONSTRAINT notifications_fcm_token_charset,
    DROP CONSTRAINT notifications_fcm_token_length,
    DROP CONSTRAINT notifications_max_attempts_positive,
    DROP CONSTRAINT notifications_metadata_size,
    DROP CONSTRAINT notifications_payload_object,
    DROP CONSTRAINT notifications_payload_size,
    DROP CONSTRAINT notifications_priority_valid,
    DROP CONSTRAINT notifications_provider_known,
    DROP CONSTRAINT notifications_push_type_known,
    DROP CONSTRAINT notifications_topic_shape;

-- pushq.devices: Live Activity tokens (kind, activity_id, installation_id, ended_at, ended_by).
ALTER TABLE pushq.devices
    ADD COLUMN kind text NOT NULL DEFAULT 'device',
    ADD COLUMN activity_id text,
    ADD COLUMN installation_id text,
    ADD COLUMN ended_at timestamptz,
    ADD COLUMN ended_by bigint,
    ADD CONSTRAINT devices_kind_known
        CHECK (kind IN ('device', 'push_to_start', 'live_activity')) NOT VALID,
    ADD CONSTRAINT devices_kind_apns
        CHECK (kind = 'device' OR provider = 'apns') NOT VALID,
    ADD CONSTRAINT devices_activity_id_kind
        CHECK (CASE WHEN kind = 'live_activity' THEN activity_id IS NOT NULL ELSE activity_id IS NULL END) NOT VALID,
    ADD CONSTRAINT devices_activity_id_shape
        CHECK (activity_id IS NULL OR (char_length(activity_id) BETWEEN 1 AND 200 AND activity_id !~ '[\x01-\x1f\x7f]')) NOT VALID,
    ADD CONSTRAINT devices_installation_id_shape
        CHECK (installation_id IS NULL OR (char_length(installation_id) BETWEEN 1 AND 200 AND installation_id !~ '[\x01-\x1f\x7f]')) NOT VALID,
    DROP CONSTRAINT devices_invalid_reason_known,
    ADD CONSTRAINT devices_invalid_reason_known
        CHECK (invalid_reason IN ('Unregistered', 'ExpiredToken', 'BadDeviceToken', 'UNREGISTERED', 'INVALID_ARGUMENT',
                                  'Replaced', 'ActivityEnded', 'AgeLimit')) NOT VALID;

ALTER TABLE pushq.workers ADD COLUMN schema_known integer;
ALTER TABLE pushq.schema_migrations ADD COLUMN workers_know integer;

-- Lanes: rank, cap and pause of a kind of traffic (a lane with no row is like 'default').
CREATE TABLE pushq.lanes (
    name            text             NOT NULL,
    -- Lower goes first: among due rows, every row of a lower rank is claimed before any row of
    -- a higher rank; lanes of the same rank share.
    rank            integer          NOT NULL DEFAULT 100,
    -- Sends per second of the whole fleet together; NULL: no cap.
    max_per_second  double precision,
    -- No claims of the lane's rows while true (rows in flight finish; expiry still applies).
    paused          boolean          NOT NULL DEFAULT false,
    note            text,
    updated_at      timestamptz      NOT NULL DEFAULT now(),
    created_by_pause boolean         NOT NULL DEFAULT false,

    CONSTRAINT lanes_pkey PRIMARY KEY (name),
    CONSTRAINT lanes_name_shape CHECK (name ~ '^[A-Za-z0-9_.:-]{1,64}$'),
    CONSTRAINT lanes_max_per_second_positive CHECK (max_per_second > 0)
);

INSERT INTO pushq.lanes (name, rank, note) VALUES ('default', 100, 'rows that name no lane, and lanes with no row here');

-- The fleet's shared rate budgets (token buckets): one row per capped lane ('lane:' || name)
-- and per capped credential ('credential:' || provider || ':' || name). Written by the claim
-- statement only; operators set the caps in pushq.lanes and the credentials file.
CREATE TABLE pushq.rate_budgets (
    key          text             NOT NULL,
    tokens       double precision NOT NULL DEFAULT 0,
    refilled_at  timestamptz      NOT NULL DEFAULT now(),

    CONSTRAINT rate_budgets_pkey PRIMARY KEY (key)
);

-- A capped lane gets its budget row when its cap is set; it starts empty (no burst at start).
CREATE FUNCTION pushq.lanes_budget() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.updated_at := now();
    IF NEW.max_per_second IS NOT NULL THEN
        INSERT INTO pushq.rate_budgets (key) VALUES ('lane:' || NEW.name) ON CONFLICT (key) DO NOTHING;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER lanes_budget
    BEFORE INSERT OR UPDATE ON pushq.lanes
    FOR EACH ROW EXECUTE FUNCTION pushq.lanes_budget();

-- Completion signals: when a row with a notify_channel becomes final, whichever worker, upkeep
-- or producer ends it, the same transaction notifies the channel. The WHEN clause is all a row
-- without a channel pays. The payload stays far below PostgreSQL's 8000-byte limit: dedupe_key
-- is at most 200 characters (1200 bytes escaped), last_reason is cut to 200 characters, the
-- rest is short and bounded.
CREATE FUNCTION pushq.notify_final() RETURNS trigger
LANGUAGE plpgsql AS $$
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

CREATE TRIGGER notifications_notify_final
    AFTER UPDATE OF status ON pushq.notifications
    FOR EACH ROW
    WHEN (NEW.notify_channel IS NOT NULL
          AND NEW.status IN ('sent', 'failed', 'expired', 'cancelled')
          AND OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION pushq.notify_final();

-- Live Activities: a push-to-start token replaces the older one of its installation; an
-- activity's token is retired when its `end` notification becomes final.
CREATE FUNCTION pushq.devices_activity_tokens() RETURNS trigger
LANGUAGE plpgsql AS $$
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

CREATE TRIGGER devices_activity_tokens
    BEFORE INSERT OR UPDATE ON pushq.devices
    FOR EACH ROW
    WHEN (NEW.kind <> 'device')
    EXECUTE FUNCTION pushq.devices_activity_tokens();

-- When the `end` notification of a Live Activity token becomes final (sent, failed, expired or
-- cancelled, whoever ends it), the token is retired: 'ActivityEnded'. Until then it stays valid,
-- so that the claim sends the end (and its retries). The WHEN clause is all another row pays.
CREATE FUNCTION pushq.retire_ended_activity_token() RETURNS trigger
LANGUAGE plpgsql AS $$
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

CREATE TRIGGER notifications_activity_ended
    AFTER UPDATE OF status ON pushq.notifications
    FOR EACH ROW
    WHEN (NEW.push_type = 'liveactivity'
          AND NEW.status IN ('sent', 'failed', 'expired', 'cancelled')
          AND OLD.status IS DISTINCT FROM NEW.status
          AND strpos(NEW.payload::text, '"end"') > 0)
    EXECUTE FUNCTION pushq.retire_ended_activity_token();

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
-- through devices_activity_key (part 2). Called by the two functions below.
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
-- and retired 'ActivityEnded' when that row becomes final (notifications_activity_ended, above), so that
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

-- Broadcast channels (iOS 18), managed from SQL: a worker creates each at Apple once (its
-- create recorded, fenced by its lease, before it is sent) and deletes it when asked.
CREATE TABLE pushq.channels (
    id               bigint      GENERATED BY DEFAULT AS IDENTITY,
    -- The producer's name for the channel: what notifications name in `channel`.
    name             text        NOT NULL,
    -- The APNs credential it is created with (NULL: default) and its environment (NULL: the
    -- worker's PUSHQ_APNS_ENVIRONMENT), as for notifications.
    credential       text,
    environment      text,
    -- The app's bundle id (NULL: the credential's topic, else PUSHQ_APNS_TOPIC).
    topic            text,
    -- Apple's message-storage-policy: 0 no message stored (broadcasts then go with
    -- apns-expiration 0), 1 the most recent message stored for devices that subscribe later.
    message_storage_policy smallint NOT NULL DEFAULT 1,
    -- creating  waiting for a worker to create it at Apple (the producer's INSERT)
    -- active    created: apns_channel_id is set, broadcasts go out
    -- deleting  the producer asked for deletion: a worker deletes it at Apple
    -- deleted   gone at Apple (or never created there); final
    -- failed    Apple refused it, or its attempts ran out; final (last_reason says why)
    status           text        NOT NULL DEFAULT 'creating',
    -- Apple's id for it (base64), from the apns-channel-id of the create answer.
    apns_channel_id  text,
    -- Attempts at the current operation (create, then delete): reset when one succeeds.
    attempts         smallint    NOT NULL DEFAULT 0,
    max_attempts     smallint    NOT NULL DEFAULT 10,
    -- The last answer: HTTP status (NULL: none came) and reason.
    last_status      smallint,
    last_reason      text,
    -- apns-request-id of the last management request, to quote to Apple.
    apns_request_id  text,
    -- When the next attempt is due.
    scheduled_at     timestamptz NOT NULL DEFAULT now(),
    locked_by        text,
    locked_until     timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    activated_at     timestamptz,
    deleted_at       timestamptz,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    -- The create a worker sent (recorded, fenced by its lease, before it is sent): when and with
    -- which request id; a row with one and no apns_channel_id may have a channel at Apple whose
    -- answer was lost: the next worker lists Apple's channels and adopts or deletes it.
    create_requested_at timestamptz,
    create_request_id text,

    CONSTRAINT channels_pkey PRIMARY KEY (id),
    CONSTRAINT channels_name_key UNIQUE (name),
    CONSTRAINT channels_name_length CHECK (char_length(name) BETWEEN 1 AND 200),
    CONSTRAINT channels_environment_known CHECK (environment IN ('production', 'development')),
    CONSTRAINT channels_message_storage_policy_known CHECK (message_storage_policy IN (0, 1)),
    CONSTRAINT channels_status_known CHECK (status IN ('creating', 'active', 'deleting', 'deleted', 'failed')),
    CONSTRAINT channels_active_has_id CHECK (status <> 'active' OR apns_channel_id IS NOT NULL),
    CONSTRAINT channels_max_attempts_positive CHECK (max_attempts >= 1),
    -- A header value: no control characters, and the length of a bundle id.
    CONSTRAINT channels_topic_shape CHECK (topic ~ '^[A-Za-z0-9.-]{1,200}$'),
    -- Apple's ids are base64: the id goes into the apns-channel-id header, so no CR or LF.
    CONSTRAINT channels_apns_channel_id_shape CHECK (apns_channel_id ~ '^[A-Za-z0-9+/=_-]+$' AND char_length(apns_channel_id) <= 256)
);

-- The channel loop's claim: channels with work due, by when it is due.
CREATE INDEX channels_due ON pushq.channels (scheduled_at, id) WHERE status IN ('creating', 'deleting');

-- Channels by Apple's id: the reconciliation looks up every id Apple lists.
CREATE INDEX channels_apns_channel_id ON pushq.channels (apns_channel_id) WHERE apns_channel_id IS NOT NULL;

-- The nightly reconciliation with Apple's all-channels: one row per (credential, environment,
-- bundle id) the fleet checked, written by whichever worker ran the check (one per night).
CREATE TABLE pushq.channel_reconciliations (
    credential    text        NOT NULL,
    environment   text        NOT NULL,
    topic         text        NOT NULL,
    -- When the last check began (a worker takes the next one a day later) and ended.
    started_at    timestamptz NOT NULL DEFAULT now(),
    checked_at    timestamptz,
    checked_by    text,
    -- Channels Apple lists that no row of pushq.channels has (not deleted), and how many Apple listed.
    unknown_ids   text[]      NOT NULL DEFAULT '{}',
    listed        integer     NOT NULL DEFAULT 0,
    -- The last failure of the check, NULL when it worked.
    last_reason   text,

    CONSTRAINT channel_reconciliations_pkey PRIMARY KEY (credential, environment, topic)
);

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
                         WHEN c.apns_channel_id IS NULL AND c.create_requested_at IS NULL
                              AND (c.locked_until IS NULL OR c.locked_until < now()) THEN 'deleted'
                         ELSE 'deleting' END,
           scheduled_at = CASE WHEN c.status IN ('deleting', 'deleted') THEN c.scheduled_at
                               ELSE least(c.scheduled_at, now()) END
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

-- The keys of `pushq serve` (its HTTP API and dashboard; only their SHA-256 is kept) and the
-- dashboard's login sessions.
CREATE TABLE pushq.api_keys (
    id            bigint      GENERATED ALWAYS AS IDENTITY,
    name          text        NOT NULL,
    -- read, enqueue, devices or admin (docs/api.md, "Keys").
    scope         text        NOT NULL,
    key_hash      text        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    -- Written at most once a minute per key, so a busy producer does not rewrite the row per request.
    last_used_at  timestamptz,
    revoked_at    timestamptz,

    CONSTRAINT api_keys_pkey PRIMARY KEY (id),
    CONSTRAINT api_keys_name_key UNIQUE (name),
    CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash),
    CONSTRAINT api_keys_name_shape CHECK (name ~ '^[A-Za-z0-9_.-]{1,64}$'),
    CONSTRAINT api_keys_scope_known CHECK (scope IN ('read', 'enqueue', 'devices', 'admin')),
    CONSTRAINT api_keys_key_hash_shape CHECK (key_hash ~ '^[0-9a-f]{64}$')
);

-- A dashboard login: the cookie holds a random token, the table its SHA-256. A session ends at
-- `expires_at`, at logout, or when its key is revoked (checked on every request).
CREATE TABLE pushq.api_sessions (
    token_hash  text        NOT NULL,
    key_id      bigint      NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,

    CONSTRAINT api_sessions_pkey PRIMARY KEY (token_hash),
    CONSTRAINT api_sessions_key_id_fkey FOREIGN KEY (key_id) REFERENCES pushq.api_keys (id) ON DELETE CASCADE
);

-- Expired sessions are deleted by the next login, oldest first.
CREATE INDEX api_sessions_expires ON pushq.api_sessions (expires_at);
CREATE INDEX api_sessions_key_id ON pushq.api_sessions (key_id);

-- Who changed what through `pushq serve` and `pushq api-key`; `client` is the address serve
-- took the request from (NULL for `pushq api-key`).
CREATE TABLE pushq.audit_log (
    id       bigint      GENERATED ALWAYS AS IDENTITY,
    at       timestamptz NOT NULL DEFAULT now(),
    -- The key's name (API and dashboard), or the operating-system user of `pushq api-key`.
    actor    text        NOT NULL,
    -- The key's id when a key acted (names are unique, and revoked keys keep theirs).
    key_id   bigint,
    -- What was done: notification.cancel, lane.cancel, lane.pause, lane.resume, hold.lift,
    -- device.unregister, api_key.create, api_key.revoke.
    action   text        NOT NULL,
    -- On which rows: 'notification 1042', 'lane marketing', 'hold default/production'...
    target   text        NOT NULL,
    -- How many rows the action changed.
    rows     bigint      NOT NULL DEFAULT 0,
    -- api, dashboard or cli.
    via      text        NOT NULL,
    detail   jsonb,
    client   text,

    CONSTRAINT audit_log_pkey PRIMARY KEY (id),
    CONSTRAINT audit_log_action_shape CHECK (action ~ '^[a-z_]+\.[a-z_]+$'),
    CONSTRAINT audit_log_via_known CHECK (via IN ('api', 'dashboard', 'cli'))
);

CREATE INDEX audit_log_at ON pushq.audit_log (at);
CREATE INDEX audit_log_actor_at ON pushq.audit_log (actor, at);

-- What waits: one entry per waiting row (queued, retrying), its lane, due time, expiry and
-- whether it is a retry, kept in step with pushq.notifications by triggers whatever writes the
-- row. Workers claim by walking it in lane and due order, and delete the entries they take.
CREATE TABLE pushq.due (
    id          bigint      NOT NULL,
    lane        text        NOT NULL,
    due_at      timestamptz NOT NULL,
    expires_at  timestamptz,
    retrying    boolean,
    CONSTRAINT due_pkey PRIMARY KEY (id)
);

CREATE INDEX due_order ON pushq.due (lane, due_at, id);
CREATE INDEX due_expiry ON pushq.due (expires_at) WHERE expires_at IS NOT NULL;

CREATE FUNCTION pushq.due_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pushq.due (id, lane, due_at, expires_at, retrying)
    SELECT r.id, r.lane, r.scheduled_at, r.expires_at, r.status = 'retrying' FROM inserted_rows r WHERE r.status IN ('queued', 'retrying')
    ON CONFLICT (id) DO NOTHING;
    RETURN NULL;
END $$;

CREATE FUNCTION pushq.due_waiting() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pushq.due (id, lane, due_at, expires_at, retrying)
    VALUES (NEW.id, NEW.lane, NEW.scheduled_at, NEW.expires_at, NEW.status = 'retrying')
    ON CONFLICT (id) DO UPDATE
       SET lane = EXCLUDED.lane, due_at = EXCLUDED.due_at, expires_at = EXCLUDED.expires_at, retrying = EXCLUDED.retrying;
    RETURN NULL;
END $$;

CREATE FUNCTION pushq.due_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM pushq.due WHERE id = OLD.id;
    RETURN NULL;
END $$;

CREATE TRIGGER notifications_due_insert AFTER INSERT ON pushq.notifications
    REFERENCING NEW TABLE AS inserted_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pushq.due_inserted();

CREATE TRIGGER notifications_due_waiting AFTER UPDATE OF status, scheduled_at, lane ON pushq.notifications
    FOR EACH ROW
    WHEN (NEW.status IN ('queued', 'retrying')
          AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.scheduled_at IS DISTINCT FROM NEW.scheduled_at
               OR OLD.lane IS DISTINCT FROM NEW.lane))
    EXECUTE FUNCTION pushq.due_waiting();

CREATE TRIGGER notifications_due_ended AFTER UPDATE OF status ON pushq.notifications
    FOR EACH ROW
    WHEN (OLD.status IN ('queued', 'retrying') AND NEW.status NOT IN ('queued', 'retrying', 'sending'))
    EXECUTE FUNCTION pushq.due_ended();

CREATE TRIGGER notifications_due_expiry AFTER UPDATE OF expires_at ON pushq.notifications
    FOR EACH ROW
    WHEN (NEW.status IN ('queued', 'retrying') AND OLD.expires_at IS DISTINCT FROM NEW.expires_at
          AND OLD.status IS NOT DISTINCT FROM NEW.status AND OLD.scheduled_at IS NOT DISTINCT FROM NEW.scheduled_at
          AND OLD.lane IS NOT DISTINCT FROM NEW.lane)
    EXECUTE FUNCTION pushq.due_waiting();

-- Leases as rows of their own: a claim writes one row with the ids it takes and the lease's end;
-- the upkeep gives the rows of an ended lease still `sending` an entry of pushq.due again. The
-- ids are stored as they are, never compressed (a claim's row is deleted within seconds).
CREATE TABLE pushq.leases (
    id           bigserial   PRIMARY KEY,
    worker       text        NOT NULL,
    lease_until  timestamptz NOT NULL,
    ids          bigint[]    NOT NULL,
    recovered_at timestamptz
);

CREATE INDEX leases_until ON pushq.leases (lease_until);
ALTER TABLE pushq.leases SET (toast_tuple_target = 8160);
ALTER TABLE pushq.leases ALTER COLUMN ids SET STORAGE EXTERNAL;

-- Sends and failures tallied per minute, lane, worker and reason, in the statement that ends
-- the rows (the dashboard's chart, `pushq status`, each lane's send rate).
CREATE TABLE pushq.outcomes (
    status  text        NOT NULL CONSTRAINT outcomes_status CHECK (status IN ('sent', 'failed')),
    minute  timestamptz NOT NULL,
    lane    text        NOT NULL,
    worker  text        NOT NULL,
    -- The row's `last_reason` when it failed; '' when it was sent (or failed without one).
    reason  text        NOT NULL,
    rows    bigint      NOT NULL,
    CONSTRAINT outcomes_pkey PRIMARY KEY (status, minute, lane, worker, reason)
);

-- The table's rules of pushq.notifications, checked when a producer writes a row: before an
-- INSERT; after an UPDATE that sets a column a rule reads; after an UPDATE that makes a row
-- wait again or takes it out of a final status. Same error as a CHECK constraint (23514, the
-- constraint's name). Its name sorts after notifications_channel, whose BEFORE INSERT fills a
-- broadcast row's credential, environment and topic (BEFORE triggers run in name order).
CREATE FUNCTION pushq.notifications_rules() RETURNS trigger
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

CREATE TRIGGER notifications_rules
    BEFORE INSERT ON pushq.notifications
    FOR EACH ROW
    EXECUTE FUNCTION pushq.notifications_rules();

CREATE TRIGGER notifications_rules_update
    AFTER UPDATE OF payload, device_token, provider, push_type, topic, priority, collapse_id, environment,
                    lane, notify_channel, dedupe_key, channel, credential, max_attempts, expires_at, metadata
    ON pushq.notifications
    FOR EACH ROW
    EXECUTE FUNCTION pushq.notifications_rules();

CREATE TRIGGER notifications_rules_waiting
    AFTER UPDATE OF status ON pushq.notifications
    FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status
          AND (NEW.status IN ('queued', 'retrying') OR OLD.status IN ('sent', 'failed', 'expired', 'cancelled')))
    EXECUTE FUNCTION pushq.notifications_rules();

-- A change to pushq.lanes notifies the workers (pushq_lanes): they read the lanes again.
CREATE FUNCTION pushq.notify_lanes_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('pushq_lanes', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER lanes_notify
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON pushq.lanes
    FOR EACH STATEMENT EXECUTE FUNCTION pushq.notify_lanes_changed();
