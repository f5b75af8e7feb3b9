-- pushq:no-transaction
-- pushq:after-workers 102
-- pushq 0.4.0, part 5 of 5, once no 0.3.0 worker runs: drops 0.3.0's four indexes that name
-- the row's status, one statement at a time.
--   notifications_due       waiting rows in due order: 0.4.0's claim walks pushq.due
--   notifications_expiry    waiting rows by expiry: 0.4.0 expires through pushq.due
--   notifications_finished  final rows by finished_at: retention and the lists read
--                           notifications_created and pushq.outcomes
--   notifications_lease     rows in flight by lease end: 0.4.0 finds them through pushq.leases
-- 0.3.0 workers read them on every claim, expiry, write-back and retention pass (without them,
-- each would read the whole table): so this waits until no 0.3.0 worker is live. While any is
-- left, no claim or write-back is HOT. Dropped CONCURRENTLY: nothing waits for it but
-- transactions already open on the table.
DROP INDEX CONCURRENTLY IF EXISTS pushq.notifications_lease;
DROP INDEX CONCURRENTLY IF EXISTS pushq.notifications_due;
DROP INDEX CONCURRENTLY IF EXISTS pushq.notifications_expiry;
DROP INDEX CONCURRENTLY IF EXISTS pushq.notifications_finished;
