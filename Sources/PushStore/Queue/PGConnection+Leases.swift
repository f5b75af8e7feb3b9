import PGClient
extension PGConnection {
    /// What ``recoverLapsedLeases(limit:)`` did.
    public struct LapsedLeases: Sendable, Equatable {
        /// Rows still in flight under a lease that had ended, given an entry in pushq.due again.
        public var rows: Int
        /// Rows of pushq.leases read (each lease whose end has passed, whatever became of its rows).
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
    /// `limit` rows of pushq.leases whose end has passed and that it did not read before, oldest
    /// first: one whose rows were all written back meanwhile is deleted; one with rows still in
    /// flight is kept, marked `recovered_at`, so that they are still listed in flight
    /// (``releaseRecoveredLeases(limit:)`` deletes it once they are not). Rows that 0.3.0
    /// workers claimed (they write no lease row) are found through `notifications_lease`,
    /// as long as that index exists (release part 103 gives them lease rows, and 104 drops it).
    ///
    /// An entry is added (or an older one moved to the lease's end) without locking the row: the
    /// claim checks the row again under its lock (an entry whose row was written back meanwhile is
    /// skipped, and swept by ``sweepDue(limit:)``), and the sweep keeps the entry of a row in
    /// flight that is not older than the row's lease.
    public func recoverLapsedLeases(limit: Int) throws(PGError) -> LapsedLeases {
        let r = try query(Self.recoverLapsedLeasesSQL, [limit])
        let row = try r.firstRow()
        return LapsedLeases(rows: try row.decode(Int?.self, "rows") ?? 0, leases: try row.decode(Int?.self, "leases") ?? 0)
    }

    /// Deletes `workerID`'s rows of pushq.leases for these leases (each a claim's
    /// ``ClaimedNotification/lease``, microseconds since the epoch): its worker wrote back or gave back
    /// every row of those claims, so nothing is left for the upkeep to find.
    public func deleteLeases(workerID: String, leases: [Int64]) throws(PGError) {
        // The lease's end, rebuilt exactly from its microseconds (interval arithmetic is in
        // whole microseconds), so the index on lease_until finds it.
        // Prepared: it runs after nearly every write-back.
        _ = try preparedQuery("""
            DELETE FROM pushq.leases
             WHERE lease_until = ANY (ARRAY(SELECT timestamptz 'epoch' + x * interval '1 microsecond' FROM unnest($2::int8[]) x))
               AND worker = $1
            """, [workerID, leases])
    }

    /// Deletes the recovered leases (``recoverLapsedLeases(limit:)``) none of whose rows is still
    /// in flight under them (each was claimed again, written back or ended): at most `limit`,
    /// those checked longest ago first; the others are marked checked now.
    ///
    /// - Returns: the lease rows deleted.
    @discardableResult
    public func releaseRecoveredLeases(limit: Int) throws(PGError) -> Int {
        try query(Self.releaseRecoveredLeasesSQL, [limit]).firstRow().decode(Int?.self, "deleted") ?? 0
    }

    /// Whether `notifications_lease` (until release part 104) still exists: then 0.3.0
    /// workers, which write no lease row, may hold rows in flight, and ``inFlightSQL(_:)``
    /// reads them through it.
    func leaseIndexExists() throws(PGError) -> Bool {
        try query("SELECT to_regclass('pushq.notifications_lease') IS NOT NULL AS present").firstRow().decode(Bool?.self, "present") ?? false
    }

    /// The condition on `pushq.notifications` (unaliased) that holds for the rows in flight
    /// (`sending`): through the ids of pushq.leases (a claim's lease row, kept after its lease
    /// ended while its rows are in flight: ``recoverLapsedLeases(limit:)``), or through
    /// `notifications_lease` while it exists (`throughIndex`, ``leaseIndexExists()``).
    static func inFlightSQL(_ throughIndex: Bool) -> String {
        throughIndex ? "status = 'sending'"
                     : "id = ANY (ARRAY(SELECT unnest(l.ids) FROM pushq.leases l)) AND status = 'sending'"
    }

    /// The end of both statements over leases: of the lease rows `read` (a CTE of their ids), those
    /// in `held` (rows still in flight under them) are marked recovered now (`kept`), the others
    /// deleted (`gone`).
    static func keptOrGoneSQL(read: String) -> String {
        """
        , kept AS (
            UPDATE pushq.leases l SET recovered_at = now() WHERE l.id IN (SELECT h.id FROM held h)
            RETURNING 1
        ), gone AS (
            DELETE FROM pushq.leases l WHERE l.id IN (SELECT r.id FROM \(read) r) AND l.id NOT IN (SELECT h.id FROM held h)
            RETURNING 1
        )
        """
    }

    static let recoverLapsedLeasesSQL = """
        WITH ended AS MATERIALIZED (
            SELECT l.id, l.ids, l.lease_until FROM pushq.leases l
             WHERE l.lease_until < now() AND l.recovered_at IS NULL
             ORDER BY l.lease_until
             LIMIT $1
               FOR UPDATE SKIP LOCKED
        ), lapsed AS MATERIALIZED (
            -- By primary key (an array: the planner never answers it by reading the table whole).
            SELECT n.id, n.lane, n.locked_until, n.tenant FROM pushq.notifications n
             WHERE n.id = ANY (ARRAY(SELECT i FROM ended e, unnest(e.ids) i))
               AND n.status = 'sending' AND n.locked_until < now()
        ), previous AS MATERIALIZED (
            -- Rows of 0.3.0 workers, which write no lease row. Read only while
            -- notifications_lease exists (a constant test, evaluated before the scan).
            SELECT n.id, n.lane, n.locked_until, n.tenant FROM pushq.notifications n
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
            -- Its `retrying` is NULL: the row is in flight.
            INSERT INTO pushq.due AS d (id, lane, due_at, tenant)
            SELECT id, lane, locked_until, tenant FROM lapsed
            UNION
            SELECT id, lane, locked_until, tenant FROM previous
            ON CONFLICT (id) DO UPDATE SET lane = EXCLUDED.lane, due_at = greatest(d.due_at, EXCLUDED.due_at), retrying = NULL,
                                           tenant = EXCLUDED.tenant
             WHERE d.due_at < EXCLUDED.due_at OR d.retrying IS NOT NULL
            RETURNING 1
        ), held AS MATERIALIZED (
            -- The ended leases with rows still in flight under them (not claimed again since).
            SELECT e.id FROM ended e
             WHERE EXISTS (SELECT 1 FROM lapsed x WHERE x.id = ANY (e.ids) AND x.locked_until <= e.lease_until)
        )\(keptOrGoneSQL(read: "ended"))
        SELECT (SELECT count(*) FROM added)::int8 AS rows, (SELECT count(*) FROM kept)::int8 + (SELECT count(*) FROM gone)::int8 AS leases
        """

    static let releaseRecoveredLeasesSQL = """
        WITH checked AS MATERIALIZED (
            SELECT l.id, l.ids, l.lease_until FROM pushq.leases l
             WHERE l.recovered_at IS NOT NULL
             ORDER BY l.recovered_at
             LIMIT $1
               FOR UPDATE SKIP LOCKED
        ), held AS MATERIALIZED (
            SELECT c.id FROM checked c
             WHERE EXISTS (SELECT 1 FROM pushq.notifications n
                            WHERE n.id = ANY (c.ids) AND n.status = 'sending' AND n.locked_until <= c.lease_until)
        )\(keptOrGoneSQL(read: "checked"))
        -- kept runs whether or not it is read (a data-modifying WITH always runs to completion).
        SELECT count(*)::int8 AS deleted FROM gone
        """
}
