import PGClient
extension PGConnection {
    /// The seconds from now() to the earliest entry of pushq.due due after now() (a scheduled
    /// row, a retry, an entry held to its quiet window's end or by a frequency cap), nil when
    /// none is: nothing NOTIFYs when such an entry becomes due, so a drained worker waits until
    /// then rather than for its whole poll (``PushCore/DrainedWait``). The database counts the
    /// seconds, so neither the worker's clock nor its offset from the database's comes in.
    /// Index-backed (``ClaimStatement/nextDueAtSQL``: two descents of due_order per lane); run
    /// only by a drained worker, before it waits.
    public func secondsUntilNextDue() throws(PGError) -> Double? {
        // Prepared: a drained worker runs it before each wait.
        try preparedQuery(Self.nextDueSQL, []).firstRow().decode(Double?.self, "seconds")
    }

    static let nextDueSQL = nextDueMarker + "\n" + ClaimStatement.dueLanes + """
        SELECT extract(epoch FROM \(ClaimStatement.nextDueAtSQL) - now())::float8 AS seconds
        """

    /// The first line of ``secondsUntilNextDue()``'s statement: what `pg_stat_activity` shows of
    /// a drained worker's claim connection while it waits (it runs after the turn's claims), as
    /// ``claimCommitSQL`` shows of one between claims.
    public static let nextDueMarker = "-- pushq next due"

    /// Deletes entries of pushq.due whose row no longer waits (nor is in flight with an entry the
    /// upkeep gave its ended lease: one not older than the row's `locked_until`): rows a worker of the previous release claimed through its own indexes
    /// during an upgrade (it does not know pushq.due), rows written back after the upkeep gave
    /// their lapsed lease an entry, and rows deleted while they waited. The claim skips such entries, but walks over them;
    /// the upkeep deletes them here, looking at the first `limit` entries of each lane in due
    /// order (where the claim walks). Each row it judges is locked first, `SKIP LOCKED`: a row
    /// whose write-back is making it wait again keeps the entry that write-back gives it.
    ///
    /// - Returns: the entries deleted.
    @discardableResult
    public func sweepDue(limit: Int) throws(PGError) -> Int {
        try query(Self.sweepDueSQL, [limit]).firstRow().decode(Int?.self, "deleted") ?? 0
    }

    static let sweepDueSQL = ClaimStatement.dueLanes + """
        , front AS MATERIALIZED (
            SELECT f.id, f.due_at
              FROM waiting w
             CROSS JOIN LATERAL (SELECT d.id, d.due_at FROM pushq.due d WHERE d.lane = w.lane AND d.due_at <= now()
                                  ORDER BY d.due_at, d.id LIMIT $1) f
             WHERE w.lane IS NOT NULL
        ), stale AS (
            -- Rows that exist and no longer wait (nor are in flight with an entry not older than
            -- their lease: the upkeep's, for a lease that ended, to be claimed again), locked so
            -- that none of them starts waiting again (and gets its entry back) while this deletes
            -- the entry. (By primary key, an array as below: PostgreSQL 18 knows `front`'s ids
            -- are distinct, and planned `IN (SELECT id FROM front)` as a hash join that read
            -- pushq.notifications whole.)
            SELECT n.id FROM pushq.notifications n
             WHERE n.id = ANY (ARRAY(SELECT id FROM front)) AND n.status NOT IN ('queued', 'retrying')
               AND NOT (n.status = 'sending' AND (SELECT f.due_at FROM front f WHERE f.id = n.id) >= n.locked_until)
               FOR UPDATE OF n SKIP LOCKED
        ), gone AS (
            -- By primary key (an array: never a read of pushq.due whole): the stale entries, and
            -- those whose row is gone.
            DELETE FROM pushq.due d
             -- Checked again on the entry's latest version: one the upkeep moved to the row's
             -- lease end meanwhile (a lapsed lease to claim again) stays.
             WHERE NOT EXISTS (SELECT 1 FROM pushq.notifications n
                                WHERE n.id = d.id AND n.status = 'sending' AND d.due_at >= n.locked_until)
               AND d.id = ANY (ARRAY(SELECT s.id FROM stale s
                                     UNION ALL
                                     -- (A probe per entry: LIMIT keeps it from becoming a
                                     -- join that walks the primary key across the ids' range.)
                                     SELECT f.id FROM front f
                                       LEFT JOIN LATERAL (SELECT 1 AS found FROM pushq.notifications n WHERE n.id = f.id LIMIT 1) x ON true
                                      WHERE x.found IS NULL))
            RETURNING 1
        )
        SELECT count(*)::int8 AS deleted FROM gone
        """
}
