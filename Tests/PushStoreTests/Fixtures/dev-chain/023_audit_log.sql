-- pushq schema, version 23: who changed what through `pushq serve` and `pushq api-key`.
--
-- One row per action that changes rows on someone's behalf: cancelling a notification (API or
-- dashboard), the dashboard's lane and hold actions, unregistering a device, creating and
-- revoking keys. Enqueueing and registering devices are not logged here (producers' traffic; the
-- rows themselves carry created_at and registered_at). Nothing deletes these rows: keep or prune
-- them as your own policy says (the index on `at` serves `DELETE ... WHERE at < ...`).
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

    CONSTRAINT audit_log_pkey PRIMARY KEY (id),
    CONSTRAINT audit_log_action_shape CHECK (action ~ '^[a-z_]+\.[a-z_]+$'),
    CONSTRAINT audit_log_via_known CHECK (via IN ('api', 'dashboard', 'cli'))
);

CREATE INDEX audit_log_at ON pushq.audit_log (at);
CREATE INDEX audit_log_actor_at ON pushq.audit_log (actor, at);
