-- pushq:commit-lock pushq.notifications, pushq.devices
-- pushq schema, version 8: the constraints of version 7 hold for every row.
--
-- Its own transaction, after version 7 committed: VALIDATE CONSTRAINT takes SHARE UPDATE
-- EXCLUSIVE (PostgreSQL 15) while it reads the table, so producers keep inserting and workers
-- keep claiming. Nothing can fail: every row before version 7 is an APNs row that met the
-- version 1 rules (which the new APNs rules are, for APNs rows), and since version 7 every
-- INSERT and UPDATE is checked.
--
-- (commit-lock: the migrator takes SHARE on pushq.notifications, pushq.devices just before the commit, so that no
-- INSERT is being planned when VALIDATE changes the row descriptor: see CommitLock.swift, added
-- after these shipped; databases that applied this migration before are not affected.)
ALTER TABLE pushq.notifications
    VALIDATE CONSTRAINT notifications_provider_known,
    VALIDATE CONSTRAINT notifications_device_token_hex,
    VALIDATE CONSTRAINT notifications_device_token_length,
    VALIDATE CONSTRAINT notifications_fcm_token_charset,
    VALIDATE CONSTRAINT notifications_fcm_token_length,
    VALIDATE CONSTRAINT notifications_fcm_payload_target,
    VALIDATE CONSTRAINT notifications_payload_size,
    VALIDATE CONSTRAINT notifications_fcm_no_apns_columns;

ALTER TABLE pushq.devices
    VALIDATE CONSTRAINT devices_provider_known,
    VALIDATE CONSTRAINT devices_device_token_hex,
    VALIDATE CONSTRAINT devices_device_token_length,
    VALIDATE CONSTRAINT devices_fcm_token_charset,
    VALIDATE CONSTRAINT devices_fcm_token_length,
    VALIDATE CONSTRAINT devices_fcm_environment_default,
    VALIDATE CONSTRAINT devices_invalid_reason_known;
