extension PGConnection {
    /// What ``recoverLapsedLeases(limit:)`` did.
    public struct LapsedLeases: Sendable, Equatable {
        /// Rows still in flight under a lease that had ended, given an entry in pushq.due again.
        public var rows: Int
        /// Rows of pushq.leases read and deleted (each lease whose end has passed, whatever became
        /// of its rows).
        public var leases: Int

        public init(rows: Int, leases: Int) {
            self.rows = rows
            self.leases = leases
        }
    }

    /// Gives the rows of leases that have ended back to the claim: each row still `sending`
    /// under an ended lease (its worker died, or lost the database, before writing it back) gets
    /// an entry in pushq.due, due when its lease ended, and the claim takes it again as it takes
    /// a waiting row (in its lane's order, within its lane's rank, pause and cap). Reads at most
    /// `limit` rows of pushq.leases whose end has passed, oldest first, and deletes them: one
    /// written back meanwhile needs nothing more. Rows that workers of the previous release
    /// claimed (they write no lease row) are found through `notifications_lease`, as long as
    /// that index exists.
    ///
    /// An entry is added (or an older one moved to the lease's end) without locking the row: the
    /// claim checks the row again under its lock (an entry whose row was written back meanwhile is
    /// skipped, and swept by ``sweepDue(limit:)``), and the sweep keeps the entry of a row in
    /// flight that is not older than the row's lease.
    public func recoverLapsedLeases(limit: Int) throws(PGError) -> LapsedLeases {
        let r = try query(Self.recoverLapsedLeasesSQL, [limit])
        return LapsedLeases(rows: try r.decode(Int.self, 0, 0) ?? 0, leases: try r.decode(Int.self, 0, 1) ?? 0)
    }

    /// Deletes `workerID`'s rows of pushq.leases for these leases (each a claim's
    /// ``ClaimedRow/lease``, microseconds since the epoch): its worker wrote back or gave back
    /// every row of those claims, so nothing is left for the upkeep to find.
    public func deleteLeases(workerID: String, leases: [Int64]) throws(PGError) {
        // The lease's end, rebuilt exactly from its microseconds (interval arithmetic is in
        // whole microseconds), so the index on lease_until finds it.
        try query("""
            DELETE FROM pushq.leases
             WHERE lease_until = ANY (ARRAY(SELECT timestamptz 'epoch' + x * interval '1 microsecond' FROM unnest($2::int8[]) x))
               AND worker = $1
            """, [workerID, leases])
    }

    static let recoverLapsedLeasesSQL = """
        WITH ended AS MATERIALIZED (
            SELECT l.id, l.ids FROM pushq.leases l
             WHERE l.lease_until < now()
             ORDER BY l.lease_until
             LIMIT $1
               FOR UPDATE SKIP LOCKED
        ), lapsed AS MATERIALIZED (
            -- By primary key (an array: the planner never answers it by reading the table whole).
            SELECT n.id, n.lane, n.locked_until FROM pushq.notifications n
             WHERE n.id = ANY (ARRAY(SELECT i FROM ended e, unnest(e.ids) i))
               AND n.status = 'sending' AND n.locked_until < now()
        ), previous AS MATERIALIZED (
            -- Rows of workers of the previous release, which write no lease row. Read only while
            -- notifications_lease exists (a constant test, evaluated before the scan).
            SELECT n.id, n.lane, n.locked_until FROM pushq.notifications n
             WHERE to_regclass('pushq.notifications_lease') IS NOT NULL
               AND n.status = 'sending' AND n.locked_until < now()
               AND NOT EXISTS (SELECT 1 FROM pushq.due d WHERE d.id = n.id)
             ORDER BY n.locked_until
             LIMIT $1
        ), added AS (
            -- An entry already there (left by an earlier claim of the row) is moved up to this
            -- lease's end, so that the sweep, which deletes a sending row's entry only when it
            -- is older than the row's lease, keeps it (the sweep rechecks on the entry's latest
            -- version).
            INSERT INTO pushq.due AS d (id, lane, due_at)
            SELECT id, lane, locked_until FROM lapsed
            UNION
            SELECT id, lane, locked_until FROM previous
            ON CONFLICT (id) DO UPDATE SET lane = EXCLUDED.lane, due_at = EXCLUDED.due_at WHERE d.due_at < EXCLUDED.due_at
            RETURNING 1
        ), gone AS (
            DELETE FROM pushq.leases l WHERE l.id IN (SELECT e.id FROM ended e)
            RETURNING 1
        )
        SELECT (SELECT count(*) FROM added)::int8, (SELECT count(*) FROM gone)::int8
        """
}
