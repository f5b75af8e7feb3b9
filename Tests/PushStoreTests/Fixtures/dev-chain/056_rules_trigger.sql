-- pushq:lock-retry lock_timeout=200ms tries=100
-- pushq schema, version 56: a row's rules are checked when its producer writes it, not again at
-- every claim and answer.
--
-- PostgreSQL evaluates every CHECK constraint of a table on every UPDATE, whatever columns the
-- UPDATE sets. 29 of pushq.notifications' 31 checks read only columns that producers write, yet
-- each claim and each write-back paid for all of them: ~1.5 us of PostgreSQL's CPU per row
-- update, ~3 us per notification (docs/performance.md). They become one trigger function,
-- pushq.notifications_rules(), which raises what the constraint raised: SQLSTATE 23514 (check
-- violation) with the constraint's name in the error's constraint field and the same message,
-- `new row for relation "notifications" violates check constraint "<name>"`. When a row breaks
-- several, the first by name is reported, as PostgreSQL does. It runs
--   * before an INSERT (COPY included): notifications_rules;
--   * after an UPDATE that sets a column a rule reads: notifications_rules_update;
--   * after an UPDATE that changes `status` so that a rule relaxed for the old status applies
--     again: to queued or retrying from any other status, or out of a final one
--     (notifications_rules_waiting). Five rules are not checked on final rows, the three
--     live-activity rules only on waiting ones (queued, retrying), as their constraints said.
-- The claim and the write-back set neither such a column nor such a status (a retry does, and is
-- checked). The two checks that read a column the worker writes stay constraints:
-- notifications_scheduled_at_finite and notifications_status_known.
--
-- The UPDATE triggers run AFTER the row: a refusal fails the statement all the same, and a
-- BEFORE UPDATE row trigger, even one that does not fire, makes PostgreSQL lock every row an
-- UPDATE writes before it writes it, a WAL record per row that the write-back would pay. The
-- INSERT trigger runs BEFORE, as constraints do, so that a refused row is never written (and an
-- INSERT … ON CONFLICT checks the row it proposes). Its name sorts after notifications_channel,
-- whose BEFORE INSERT fills a broadcast row's credential, environment and topic: PostgreSQL runs
-- BEFORE triggers in name order, so the row is checked as it will be stored. A BEFORE INSERT
-- trigger of your own whose name sorts after notifications_rules is not checked.
--
-- One transaction: the rules are never off. No row is read or rewritten. DROP CONSTRAINT takes
-- ACCESS EXCLUSIVE on pushq.notifications for an instant, before anything else locks the table,
-- waiting at most 200 ms at a time (lock-retry). Workers of earlier releases are not
-- affected: they write no column a rule reads, and what producers see is unchanged.
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
    IF broken IS NOT NULL THEN
        RAISE EXCEPTION 'new row for relation "notifications" violates check constraint "%"', broken
            USING ERRCODE = 'check_violation', CONSTRAINT = broken, TABLE = 'notifications', SCHEMA = 'pushq';
    END IF;
    RETURN NEW;  -- (an AFTER trigger's result is ignored)
END
$$;

-- The constraints go first: DROP CONSTRAINT takes ACCESS EXCLUSIVE, which covers the CREATE
-- TRIGGERs' SHARE ROW EXCLUSIVE. In the other order the migration held SHARE ROW EXCLUSIVE and
-- asked for more, while a worker's claim that had locked rows (ROW SHARE) asked for ROW EXCLUSIVE
-- to update them: each waited for the other, and PostgreSQL ended the claim as a deadlock.
ALTER TABLE pushq.notifications
    DROP CONSTRAINT notifications_background_priority,
    DROP CONSTRAINT notifications_broadcast_payload_size,
    DROP CONSTRAINT notifications_broadcast_push_type,
    DROP CONSTRAINT notifications_collapse_id_length,
    DROP CONSTRAINT notifications_collapse_id_printable,
    DROP CONSTRAINT notifications_credential_printable,
    DROP CONSTRAINT notifications_dedupe_key_length,
    DROP CONSTRAINT notifications_device_token_hex,
    DROP CONSTRAINT notifications_device_token_length,
    DROP CONSTRAINT notifications_environment_known,
    DROP CONSTRAINT notifications_expires_at_finite,
    DROP CONSTRAINT notifications_fcm_no_apns_columns,
    DROP CONSTRAINT notifications_fcm_payload_target,
    DROP CONSTRAINT notifications_fcm_token_charset,
    DROP CONSTRAINT notifications_fcm_token_length,
    DROP CONSTRAINT notifications_lane_name,
    DROP CONSTRAINT notifications_liveactivity_content_state,
    DROP CONSTRAINT notifications_liveactivity_event,
    DROP CONSTRAINT notifications_liveactivity_start,
    DROP CONSTRAINT notifications_max_attempts_positive,
    DROP CONSTRAINT notifications_metadata_size,
    DROP CONSTRAINT notifications_notify_channel_name,
    DROP CONSTRAINT notifications_payload_object,
    DROP CONSTRAINT notifications_payload_size,
    DROP CONSTRAINT notifications_priority_valid,
    DROP CONSTRAINT notifications_provider_known,
    DROP CONSTRAINT notifications_push_type_known,
    DROP CONSTRAINT notifications_target,
    DROP CONSTRAINT notifications_topic_shape;

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
