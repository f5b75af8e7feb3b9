-- pushq:lock-retry
-- pushq schema, version 16: Live Activity tokens in the registry, and the payload checks of
-- ActivityKit pushes.
--
-- pushq.devices gains five columns, each with a constant default or none (no row rewritten):
--   kind             'device' (every token before this version, and the default), 'push_to_start'
--                    (one per app per device: Activity<…>.pushToStartTokenUpdates), or 'live_activity'
--                    (one per running activity: activity.pushTokenUpdates);
--   activity_id      the producer's name for the activity a 'live_activity' token belongs to (the
--                    app sends it with the token); required for that kind, NULL for the others;
--   installation_id  the app's own id for its installation, sent with its tokens: a newer
--                    push-to-start token of the same installation (topic, environment) replaces
--                    the older one, retired with invalid_reason 'Replaced';
--   ended_at         when the producer ended the activity (pushq.end_activity, schema 18);
--   ended_by         the id of the `end` notification for this token: the token is retired
--                    ('ActivityEnded') when that row becomes final, not before, so that the claim
--                    (which ends rows whose token is invalid) still sends it.
-- A 'live_activity' token is retired too when APNs answers 410 or BadDeviceToken for it (the
-- worker's invalidation, unchanged: that row only) and when it is older than Apple's limits
-- allow ('AgeLimit', by the pruner, PushCore LiveActivityLimits).
--
-- pushq.notifications gains no column: three checks of an ActivityKit payload (push_type
-- 'liveactivity'), each stopping at `push_type <> 'liveactivity'` for every other row and
-- checking only rows that wait to be sent (queued, retrying): an INSERT and a retry parse the
-- payload, the claim (to sending) and the write-back (to a final status) do not.
--
-- Every check is added NOT VALID (an instant of ACCESS EXCLUSIVE, rows not read) and validated
-- by migration 18 without blocking anyone; the index that the functions and the pruner walk is
-- migration 17's. The triggers are created here because CREATE TRIGGER takes a lock that
-- queues behind producers' transactions: under `-- pushq:lock-retry` it gives way after 1 s.
ALTER TABLE pushq.devices
    ADD COLUMN kind text NOT NULL DEFAULT 'device',
    ADD COLUMN activity_id text,
    ADD COLUMN installation_id text,
    ADD COLUMN ended_at timestamptz,
    ADD COLUMN ended_by bigint,
    ADD CONSTRAINT devices_kind_known
        CHECK (kind IN ('device', 'push_to_start', 'live_activity')) NOT VALID,
    -- Live Activity tokens are APNs tokens; FCM carries one inside its payload
    -- (apns.live_activity_token), not in the registry.
    ADD CONSTRAINT devices_kind_apns
        CHECK (kind = 'device' OR provider = 'apns') NOT VALID,
    ADD CONSTRAINT devices_activity_id_kind
        CHECK (CASE WHEN kind = 'live_activity' THEN activity_id IS NOT NULL ELSE activity_id IS NULL END) NOT VALID,
    -- Printable, 1 to 200 characters: the producer's key, never a header.
    ADD CONSTRAINT devices_activity_id_shape
        CHECK (activity_id IS NULL OR (char_length(activity_id) BETWEEN 1 AND 200 AND activity_id !~ '[\x01-\x1f\x7f]')) NOT VALID,
    ADD CONSTRAINT devices_installation_id_shape
        CHECK (installation_id IS NULL OR (char_length(installation_id) BETWEEN 1 AND 200 AND installation_id !~ '[\x01-\x1f\x7f]')) NOT VALID,
    -- The reasons of version 7, and pushq's own retirements of Live Activity tokens.
    DROP CONSTRAINT devices_invalid_reason_known,
    ADD CONSTRAINT devices_invalid_reason_known
        CHECK (invalid_reason IN ('Unregistered', 'ExpiredToken', 'BadDeviceToken', 'UNREGISTERED', 'INVALID_ARGUMENT',
                                  'Replaced', 'ActivityEnded', 'AgeLimit')) NOT VALID;

-- The keys Apple's ActivityKit push needs in `aps`, per event ("Starting and updating Live
-- Activities with ActivityKit push notifications"): every event a numeric `timestamp` (seconds)
-- and an `event` of start, update or end; `content-state` an object, required for start and
-- update (an end may leave it out and keep the last content); start also `attributes-type` (a
-- string), `attributes` (an object) and an `alert`. The device, not APNs, reads these keys: a
-- payload without them is accepted by APNs with a 200 and then ignored by the device, so they
-- are refused here, where the producer sees the error. Only waiting rows are checked.
ALTER TABLE pushq.notifications
    ADD CONSTRAINT notifications_liveactivity_event
        CHECK (push_type <> 'liveactivity' OR status NOT IN ('queued', 'retrying')
               OR COALESCE(payload -> 'aps' ->> 'event' IN ('start', 'update', 'end')
                           AND json_typeof(payload -> 'aps' -> 'timestamp') = 'number', false)) NOT VALID,
    ADD CONSTRAINT notifications_liveactivity_content_state
        CHECK (push_type <> 'liveactivity' OR status NOT IN ('queued', 'retrying')
               OR COALESCE(json_typeof(payload -> 'aps' -> 'content-state') = 'object',
                           payload -> 'aps' ->> 'event' = 'end')) NOT VALID,
    ADD CONSTRAINT notifications_liveactivity_start
        CHECK (push_type <> 'liveactivity' OR status NOT IN ('queued', 'retrying')
               OR COALESCE(payload -> 'aps' ->> 'event', '') <> 'start'
               OR COALESCE(json_typeof(payload -> 'aps' -> 'attributes-type') = 'string'
                           AND json_typeof(payload -> 'aps' -> 'attributes') = 'object'
                           AND json_typeof(payload -> 'aps' -> 'alert') IN ('object', 'string'), false)) NOT VALID;

-- Live Activity tokens, before each write: a token registered again after it was retired
-- (registered_at later than invalidated_at, which pushq.token_is_invalid already counts as valid)
-- has its retirement cleared, so that `invalidated_at IS NULL` means valid for these kinds (the
-- partial index of schema 17); and a push-to-start token with an installation id replaces the
-- others of that installation (same topic and environment): the one registered last stays valid,
-- the others are retired 'Replaced'. The WHEN clause is all an ordinary device pays.
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
