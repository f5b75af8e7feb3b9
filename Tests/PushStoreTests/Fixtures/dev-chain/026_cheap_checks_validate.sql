-- pushq:commit-lock pushq.notifications
-- pushq schema, version 26: the rules of version 25 hold for every row.
--
-- Its own transaction, after version 25 committed: VALIDATE CONSTRAINT takes SHARE UPDATE
-- EXCLUSIVE (PostgreSQL 15) while it reads the table, so producers keep inserting and workers
-- keep claiming. Nothing can fail: each rule admits what the one it replaced admitted, which
-- every row met.
--
-- (commit-lock: the migrator takes SHARE on pushq.notifications just before the commit, so that no
-- INSERT is being planned when VALIDATE changes the row descriptor: see CommitLock.swift, added
-- after these shipped; databases that applied this migration before are not affected.)
ALTER TABLE pushq.notifications
    VALIDATE CONSTRAINT notifications_topic_shape,
    VALIDATE CONSTRAINT notifications_lane_name,
    VALIDATE CONSTRAINT notifications_notify_channel_name;
