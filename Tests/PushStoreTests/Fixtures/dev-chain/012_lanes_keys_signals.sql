-- pushq:lock-retry
-- pushq schema, version 12: lanes, idempotent enqueue and completion signals.
--
-- Three columns on pushq.notifications, each with a constant default (or none), so adding them
-- rewrites nothing, however many rows there are (PostgreSQL 11 and later keep the default in
-- the catalog):
--   lane            the row's kind of traffic; 'default' unless the producer names one. Its rank,
--                   cap and pause are the row of pushq.lanes of that name (none: like 'default').
--   dedupe_key      the producer's key for the notification: a second row with the same key is
--                   refused while the first exists (the unique index of migration 13).
--   notify_channel  a channel to pg_notify when the row ends (sent, failed, expired, cancelled).
-- Their constraints are added NOT VALID here, for an instant of ACCESS EXCLUSIVE, and validated
-- by migration 15 without blocking anyone (the pattern of migrations 4 and 5). Every existing
-- row has the defaults, which meet them.
--
-- Older workers keep working beside this version: they claim every lane in one order, ignoring
-- ranks, caps and pauses, until they are upgraded (docs/upgrading.md).
ALTER TABLE pushq.notifications
    ADD COLUMN lane text NOT NULL DEFAULT 'default',
    ADD COLUMN dedupe_key text,
    ADD COLUMN notify_channel text,
    -- A lane name is a label in /metrics and pushq status: short, printable, no spaces. ('default'
    -- is tested first: every claim and write-back re-checks the row, and most rows are in it.)
    ADD CONSTRAINT notifications_lane_name
        CHECK (lane = 'default' OR lane ~ '^[A-Za-z0-9_.:-]{1,64}$') NOT VALID,
    ADD CONSTRAINT notifications_dedupe_key_length
        CHECK (char_length(dedupe_key) BETWEEN 1 AND 200) NOT VALID,
    -- What LISTEN can name without quotes: LISTEN folds an unquoted name to lower case, so a
    -- channel with capitals would never be heard. At most 63 bytes (NAMEDATALEN - 1).
    ADD CONSTRAINT notifications_notify_channel_name
        CHECK (notify_channel ~ '^[a-z_][a-z0-9_]{0,62}$') NOT VALID;

-- Lanes, edited by operators with SQL. A lane with no row here behaves like 'default'.
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
