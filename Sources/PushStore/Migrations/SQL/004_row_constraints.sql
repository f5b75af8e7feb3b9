-- pushq schema, version 4: rows that would harm the queue are refused at INSERT.
--
-- Each of these passed the version 1 constraints and then did harm: an infinite timestamp
-- made every claim fail; control characters in a header value reached libcurl; a topic
-- longer than a header slot was retried as a transport error; metadata had no size limit.
--
-- The constraints are added NOT VALID, here, and validated by migration 5, in a transaction
-- of its own. What PostgreSQL 15 locks (checked with pg_locks):
--   ADD CONSTRAINT ... CHECK ... NOT VALID   ACCESS EXCLUSIVE, but only for an instant: the
--                                            rows are not read. From then on every INSERT and
--                                            UPDATE is checked, old rows included.
--   VALIDATE CONSTRAINT                      SHARE UPDATE EXCLUSIVE while it reads every row:
--                                            INSERT, UPDATE, DELETE and SELECT go on (autovacuum
--                                            and other DDL on the table wait).
-- Adding and validating in one transaction would hold ACCESS EXCLUSIVE through the reads,
-- stopping producers and workers for as long as the table takes to read.
--
-- Waiting for ACCESS EXCLUSIVE is what can hurt: a lock request queues behind any open
-- transaction on the table (a long report, a pg_dump) and every INSERT queues behind it.
-- So each try waits 1 s at most, then gives way (producers go on) and tries again; after
-- 60 tries it waits as long as it takes.
--
-- Every constraint lets final rows (sent, failed, expired, cancelled) be: such rows are never
-- sent again, migration 5 can keep the ones that break a constraint as they are, and the
-- worker can always end a row that breaks a claim (`failed`/`ClaimError`) whatever it holds.
-- A row going back to `queued` or `retrying` is checked again.
--
-- Every claim and write-back UPDATE checks them all, so each is written to stop at its first
-- test in the common case (a NULL column, a finite time): about 0.5 µs per row updated, where
-- testing the status first cost 1.4 µs (UPDATE of 200 000 rows, PostgreSQL 15).
DO $$
DECLARE
    tries integer := 0;
    previous text := current_setting('lock_timeout');
BEGIN
    PERFORM set_config('lock_timeout', '1s', true);
    LOOP
        BEGIN
            ALTER TABLE pushq.notifications
                -- An infinite expires_at made the claim fail (epoch of infinity); NULL is "no expiry".
                ADD CONSTRAINT notifications_expires_at_finite
                    CHECK (expires_at IS NULL OR isfinite(expires_at) OR status IN ('sent', 'failed', 'expired', 'cancelled')) NOT VALID,
                ADD CONSTRAINT notifications_scheduled_at_finite
                    CHECK (isfinite(scheduled_at) OR status IN ('sent', 'failed', 'expired', 'cancelled')) NOT VALID,
                -- A bundle id (plus the push type's suffix): ASCII letters, digits, '.', '-', '_';
                -- 1 to 255 bytes. No CR, LF or space can reach the apns-topic header.
                ADD CONSTRAINT notifications_topic_shape
                    CHECK (topic IS NULL OR topic ~ '^[A-Za-z0-9._-]{1,255}$' OR status IN ('sent', 'failed', 'expired', 'cancelled')) NOT VALID,
                -- No C0 control character (CR, LF, TAB...) nor DEL: they would end or corrupt a header.
                ADD CONSTRAINT notifications_collapse_id_printable
                    CHECK (collapse_id IS NULL OR collapse_id !~ '[\x01-\x1f\x7f]' OR status IN ('sent', 'failed', 'expired', 'cancelled')) NOT VALID,
                ADD CONSTRAINT notifications_credential_printable
                    CHECK (credential IS NULL OR credential !~ '[\x01-\x1f\x7f]' OR status IN ('sent', 'failed', 'expired', 'cancelled')) NOT VALID,
                -- 64 KiB of the producer's own data, as jsonb prints it.
                ADD CONSTRAINT notifications_metadata_size
                    CHECK (metadata IS NULL OR octet_length(metadata::text) <= 65536 OR status IN ('sent', 'failed', 'expired', 'cancelled')) NOT VALID;
            EXIT;
        EXCEPTION WHEN lock_not_available THEN
            tries := tries + 1;
            IF tries >= 60 THEN
                PERFORM set_config('lock_timeout', previous, true);
            END IF;
        END;
    END LOOP;
    PERFORM set_config('lock_timeout', previous, true);
END
$$;
