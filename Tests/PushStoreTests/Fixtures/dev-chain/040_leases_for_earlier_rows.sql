-- pushq:after-workers 35
-- pushq schema, version 40: a lease row for every row in flight that has none.
--
-- Workers of releases before schema 35 wrote no lease row: the rows they left `sending` (a worker
-- that died, or lost the database) were found by their lease's end through the index
-- notifications_lease, which schema 41 drops. This gives each such row a lease row (one per
-- worker and lease end), so that the upkeep finds them once their lease ends, and so that they
-- are listed in flight. It waits until no worker of those releases is live (`pushq migrate` says
-- which): one that still ran would keep claiming rows without lease rows.
--
-- Reads the rows `sending` through notifications_lease (the rows in flight: at most the fleet's
-- in-flight window) and the small pushq.leases; writes only pushq.leases. A row written back
-- meanwhile gets a lease row for nothing, which the upkeep deletes once it has ended.
INSERT INTO pushq.leases (worker, lease_until, ids)
SELECT COALESCE(n.locked_by, ''), COALESCE(n.locked_until, now()), array_agg(n.id ORDER BY n.id)
  FROM pushq.notifications n
 WHERE n.status = 'sending'
   AND n.id NOT IN (SELECT unnest(l.ids) FROM pushq.leases l)
 GROUP BY n.locked_by, n.locked_until;
