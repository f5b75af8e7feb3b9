-- pushq:lock-retry lock_timeout=200ms tries=100
-- pushq schema, version 35: leases as rows of their own (issue 23, the second half of the design
-- in docs/performance.md, "A separate due table", `due-delete-marked`).
--
-- A claim of this release writes one row of pushq.leases for the rows it takes to send: their
-- ids and the lease's end (the rows themselves are still marked `sending`, `locked_by` and
-- `locked_until`, the fence of their write-back). Once a lease has ended, the workers' upkeep
-- gives each of its rows that is still `sending` under that lease an entry in pushq.due again,
-- due when the lease ended, and deletes the lease row; the claim takes such a row from pushq.due
-- as it takes a waiting one. Lapsed leases are thus found without reading the row's status
-- through an index (notifications_lease), which a later schema drops so that the claim and the
-- write-back update the row in place (HOT).
--
-- pushq.workers.schema_known: the highest schema version a worker knows (NULL for workers of
-- earlier releases, which do not write it). A schema that drops what earlier workers read waits
-- until no live worker is of an earlier release.
--
-- Adding a column to pushq.workers takes its ACCESS EXCLUSIVE lock for an instant (heartbeats wait
-- for it); nothing here locks pushq.notifications.
CREATE TABLE pushq.leases (
    id          bigserial   PRIMARY KEY,
    worker      text        NOT NULL,
    lease_until timestamptz NOT NULL,
    ids         bigint[]    NOT NULL
);
-- The upkeep's walk: leases that have ended, oldest first.
CREATE INDEX leases_until ON pushq.leases (lease_until);

ALTER TABLE pushq.workers ADD COLUMN schema_known integer;
