-- pushq:commit-lock pushq.notifications
-- pushq schema, version 5: the constraints of version 4 hold for every row.
--
-- Its own transaction, after version 4 committed: the UPDATEs take ROW EXCLUSIVE and lock only
-- the rows they change; VALIDATE CONSTRAINT takes SHARE UPDATE EXCLUSIVE (PostgreSQL 15), so
-- producers keep inserting and workers keep claiming while the table is read.
--
-- Rows that break a constraint are kept, every one, and `pushq migrate` never fails on them:
-- - Final rows (sent, failed, expired, cancelled) stay exactly as they are: the constraints
--   let final rows be.
-- - An open row (queued, retrying, sending) whose value has an exact finite meaning is fixed:
--   expires_at 'infinity' becomes NULL (no expiry: the same meaning, and what the worker now
--   does with it); scheduled_at '-infinity' becomes now() (due at once).
-- - An open row with expires_at '-infinity' ends `expired`: it expired before it was written.
-- - Any other open row that breaks one (scheduled_at 'infinity', a topic that is no bundle id,
--   a control character in collapse_id or credential, metadata over 64 KiB) ends `failed` with
--   last_reason 'InvalidRow', released from any lease; its other columns are kept as they were.
--   A worker that was sending it finds its write-back fenced off (the row is no longer its own).
-- Since version 4 no INSERT or UPDATE can make an open row break them, so VALIDATE cannot fail.
--
-- (commit-lock: the migrator takes SHARE on pushq.notifications just before the commit, so that no
-- INSERT is being planned when VALIDATE changes the row descriptor: see CommitLock.swift, added
-- after these shipped; databases that applied this migration before are not affected.)
UPDATE pushq.notifications
   SET status       = CASE WHEN expires_at = '-infinity' THEN 'expired' ELSE 'failed' END,
       last_reason  = CASE WHEN expires_at = '-infinity' THEN last_reason ELSE 'InvalidRow' END,
       locked_by    = NULL,
       locked_until = NULL,
       finished_at  = now()
 WHERE status IN ('queued', 'retrying', 'sending')
   AND (expires_at = '-infinity'
        OR scheduled_at = 'infinity'
        OR topic !~ '^[A-Za-z0-9._-]{1,255}$'
        OR collapse_id ~ '[\x01-\x1f\x7f]'
        OR credential ~ '[\x01-\x1f\x7f]'
        OR octet_length(metadata::text) > 65536);

UPDATE pushq.notifications
   SET expires_at   = CASE WHEN expires_at = 'infinity' THEN NULL ELSE expires_at END,
       scheduled_at = CASE WHEN scheduled_at = '-infinity' THEN now() ELSE scheduled_at END
 WHERE status IN ('queued', 'retrying', 'sending')
   AND (expires_at = 'infinity' OR scheduled_at = '-infinity');

ALTER TABLE pushq.notifications
    VALIDATE CONSTRAINT notifications_expires_at_finite,
    VALIDATE CONSTRAINT notifications_scheduled_at_finite,
    VALIDATE CONSTRAINT notifications_topic_shape,
    VALIDATE CONSTRAINT notifications_collapse_id_printable,
    VALIDATE CONSTRAINT notifications_credential_printable,
    VALIDATE CONSTRAINT notifications_metadata_size;
