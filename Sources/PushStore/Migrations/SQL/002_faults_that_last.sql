-- pushq schema, version 2: faults that last.
-- Every change keeps existing rows and existing producers' INSERTs working; the only
-- table rewritten in place is credential_pauses (a handful of rows). notifications gets
-- no new column: nothing here touches its rows.

-- Holds: a pause is now one of three kinds, each lifted by a probe that succeeds.
--   credential  APNs rejected the credential (bad key, revoked certificate, wrong clock)
--   burst       most answers were BadDeviceToken / DeviceTokenNotForTopic (wrong environment)
--   outage      APNs unreachable or answering 5xx
ALTER TABLE pushq.credential_pauses
    ADD COLUMN kind text NOT NULL DEFAULT 'credential',
    ADD CONSTRAINT credential_pauses_kind_known CHECK (kind IN ('credential', 'burst', 'outage'));
UPDATE pushq.credential_pauses SET kind = 'burst' WHERE reason LIKE '%Burst';

-- Live workers: each one registers at start, beats every few seconds, and removes itself
-- when it stops cleanly. `pushq status` lists the live ones and the credentials they serve.
CREATE TABLE pushq.workers (
    id            text        NOT NULL,
    host          text        NOT NULL,
    pid           integer     NOT NULL,
    version       text        NOT NULL,
    started_at    timestamptz NOT NULL DEFAULT now(),
    heartbeat_at  timestamptz NOT NULL DEFAULT now(),
    -- [{"name": "default", "environment": "production", "topic": "com.example.app"}, ...]
    credentials   jsonb       NOT NULL DEFAULT '[]',

    CONSTRAINT workers_pkey PRIMARY KEY (id)
);

-- Tokens APNs throttled (429 TooManyRequests): other rows for the same token and
-- environment wait until `until`; other tokens are not slowed. Rows past `until` are
-- ignored and deleted by the workers.
CREATE TABLE pushq.token_throttles (
    device_token  text        NOT NULL,
    environment   text        NOT NULL,
    until         timestamptz NOT NULL,

    CONSTRAINT token_throttles_pkey PRIMARY KEY (device_token, environment)
);
