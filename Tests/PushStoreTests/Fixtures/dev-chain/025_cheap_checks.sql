-- pushq:lock-retry
-- pushq schema, version 25: the same three rules, written so that checking them costs a row
-- a fraction of a microsecond instead of up to 20.
--
-- PostgreSQL checks every CHECK constraint on every new row version: the producer's INSERT, and
-- the claim and the write-back UPDATE of every notification, whichever columns they change.
-- Three rules used a bounded repetition (`{1,255}`, `{1,64}`, `{0,62}`), which PostgreSQL's
-- regular expression engine expands into one state per repetition: on PostgreSQL 15, matching
-- 'com.example.app.topic' against '^[A-Za-z0-9._-]{1,255}$' took 20.7 µs, against
-- '^[A-Za-z0-9._-]+$' with a length test 0.3 µs (200 000 values, docs/performance.md). A row
-- with a topic paid it twice per notification, about 49 µs of PostgreSQL's CPU, more than the
-- whole of the rest of the claim and the write-back.
--
-- Each rule keeps its name and its meaning, character for character: the repetition becomes
-- `+` or `*` and the bound an octet_length test (every character the class admits is one
-- byte). The cheap tests come first, so the common rows stop at the first.
--
-- Each is dropped and added again, NOT VALID, in one ALTER TABLE under this file's lock retry
-- (an instant of ACCESS EXCLUSIVE, giving way to producers after 1 s; migration 4 explains),
-- and validated by migration 26 without blocking anyone. Every row met the old rule, which
-- admits exactly what the new one admits, and the table is never without the rule: the ALTER
-- is one statement. Older workers are unaffected: they never write these columns.
ALTER TABLE pushq.notifications
    DROP CONSTRAINT notifications_topic_shape,
    ADD CONSTRAINT notifications_topic_shape
        CHECK (topic IS NULL OR status IN ('sent', 'failed', 'expired', 'cancelled')
               OR (octet_length(topic) BETWEEN 1 AND 255 AND topic ~ '^[A-Za-z0-9._-]+$')) NOT VALID,
    DROP CONSTRAINT notifications_lane_name,
    ADD CONSTRAINT notifications_lane_name
        CHECK (lane = 'default' OR (octet_length(lane) BETWEEN 1 AND 64 AND lane ~ '^[A-Za-z0-9_.:-]+$')) NOT VALID,
    DROP CONSTRAINT notifications_notify_channel_name,
    ADD CONSTRAINT notifications_notify_channel_name
        CHECK (notify_channel IS NULL OR (octet_length(notify_channel) <= 63 AND notify_channel ~ '^[a-z_][a-z0-9_]*$')) NOT VALID;
