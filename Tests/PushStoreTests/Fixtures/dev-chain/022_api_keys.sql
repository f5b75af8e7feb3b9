-- pushq schema, version 22: the keys of `pushq serve` (its HTTP API and dashboard) and the
-- dashboard's login sessions. Two new tables: nothing that producers or workers use is touched.
--
-- A key is made by `pushq api-key create NAME --scope S`, which prints it once; the table keeps
-- its SHA-256 (hex), never the key. Keys are 32 random bytes, so a fast hash is enough: nobody can
-- guess one from its hash. A revoked key keeps its row (and its name) for the audit log; every
-- request checks `revoked_at IS NULL`, so revoking takes effect at the next request.
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
