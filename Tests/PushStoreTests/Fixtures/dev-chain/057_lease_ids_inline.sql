-- pushq:lock-retry lock_timeout=200ms tries=100
-- pushq schema, version 57: a lease's ids are stored as they are, never compressed.
--
-- Each claim inserts one row of pushq.leases whose `ids` holds the ids it claimed: ~4 KB for a
-- claim of 500. PostgreSQL compresses a row above ~2 KB before it stores it (pglz: to ~40 % for
-- an array of ids, a saving of a few KB per claim that no one needs, for a row deleted within
-- seconds), which cost the claim ~4% of its CPU: about a microsecond per notification
-- (docs/performance.md, "PostgreSQL's own work around the statements"). From here a row up to a
-- page's room (8160 bytes: a claim of up to ~1 000 rows) stays in its page as it is, and a larger
-- `ids` goes to the table's TOAST table uncompressed.
--
-- No row is read or rewritten; rows already stored stay as they are. SET STORAGE takes ACCESS
-- EXCLUSIVE on pushq.leases (a few rows) for an instant, waiting at most 200 ms at a time
-- (lock-retry); claims of workers of earlier releases wait that long at most. What they write
-- and read is unchanged.
ALTER TABLE pushq.leases SET (toast_tuple_target = 8160);
ALTER TABLE pushq.leases ALTER COLUMN ids SET STORAGE EXTERNAL;
