-- pushq:after-workers 102
-- pushq 0.4.0, part 4 of 5, once no 0.3.0 worker runs: a lease row for every row in flight that
-- has none, and pushq.notifications' fillfactor.
--
-- 0.3.0 workers write no lease row: the rows they left `sending` (a worker that died, or lost the
-- database) are found by their lease's end through notifications_lease, which part 5 drops. This
-- gives each such row a lease row (one per worker and lease end), so that the upkeep finds them
-- once their lease ends, and so that they are listed in flight. It waits until no worker of 0.3.0
-- is live (`pushq migrate` says which): one that still ran would keep claiming rows without lease
-- rows. Reads the rows `sending` through notifications_lease (at most the fleet's in-flight
-- window) and the small pushq.leases; writes only pushq.leases.
--
-- fillfactor 33 (0.3.0's: 80): each page keeps room for the new versions of its rows, so that
-- the claim's and the write-back's updates are HOT (on the row's own page, no index entry) once
-- part 5 has dropped the indexes of the row's status. Pages written from now on are filled to a
-- third; rows already stored stay where they are. SHARE UPDATE EXCLUSIVE for an instant: inserts
-- and updates go on.
INSERT INTO pushq.leases (worker, lease_until, ids)
SELECT COALESCE(n.locked_by, ''), COALESCE(n.locked_until, now()), array_agg(n.id ORDER BY n.id)
  FROM pushq.notifications n
 WHERE n.status = 'sending'
   AND n.id NOT IN (SELECT unnest(l.ids) FROM pushq.leases l)
 GROUP BY n.locked_by, n.locked_until;

ALTER TABLE pushq.notifications SET (fillfactor = 33);
