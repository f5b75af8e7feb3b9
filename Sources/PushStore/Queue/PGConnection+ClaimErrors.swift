import PushCore
import PGClient

extension PGConnection {
    /// The rows a claim of one row would take, with the same filters as
    /// ``claim(limit:workerID:leaseSeconds:credentials:defaultEnvironment:only:row:excluding:rotation:budget:belowRank:considerate:)``:
    /// the first row to claim in each lane not paused (waiting and due, or a lapsed lease that the
    /// upkeep gave back to pushq.due).
    ///
    /// When a claim of one row fails, one of these makes it fail. Reads only: no row is locked or
    /// changed, and nothing is computed from the rows' data, so the rows that break a claim
    /// cannot break this.
    /// - Returns: the ids, one per lane with rows to claim (``headsSQL``).
    public func claimHeads(credentials: [Provider: [String]], defaultEnvironment: APNsEnvironment,
                           only: Endpoint? = nil, excluding: [Int64] = []) throws(PGError) -> [Int64] {
        var parameters = ClaimRouting(credentials, only: only).parameters
        var filter = ClaimFilter(next: 1 + ClaimRouting.parameterCount, environment: nil, defaultEnvironment: defaultEnvironment)
        filter.add(only: only, row: nil, excluding: excluding)
        parameters += filter.parameters
        let result = try query(Self.headsSQL.render([ClaimFilter.marker: filter.sql]), parameters)
        var ids: [Int64] = []
        for row in result.rows {
            if let id = try row.decode(Int64?.self, "id") { ids.append(id) }
        }
        return ids
    }

    /// The row due last in claim order (the newest), with the same filters as
    /// ``claimHeads(credentials:defaultEnvironment:only:excluding:)``, other than `excluding`:
    /// the row least likely to be one of a batch of bad rows at the head. Reads only.
    public func lastDue(credentials: [Provider: [String]], defaultEnvironment: APNsEnvironment,
                        only: Endpoint? = nil, excluding: [Int64] = []) throws(PGError) -> Int64? {
        var parameters = ClaimRouting(credentials, only: only).parameters
        var filter = ClaimFilter(next: 1 + ClaimRouting.parameterCount, environment: nil, defaultEnvironment: defaultEnvironment)
        filter.add(only: only, row: nil, excluding: excluding)
        parameters += filter.parameters
        let result = try query(Self.lastDueSQL.render([ClaimFilter.marker: filter.sql]), parameters)
        return try result.rows.first?.decode(Int64?.self, "id")
    }

    /// Ends rows that make every claim fail: `failed` with last_reason `ClaimError`, released
    /// from any lease, finished now; `attempts` and the rest stay as they were.
    ///
    /// Touches only rows still waiting (`queued`, `retrying`) or whose lease ran out, never a
    /// row a worker holds or a final one. It computes nothing from the rows' data and makes them
    /// final, which every constraint lets be (migration 4), so the data that broke the claim
    /// cannot break it. The rows are tallied as failures of `workerID`'s claims (pushq.outcomes).
    /// - Returns: the ids ended.
    @discardableResult
    public func endClaimErrors(ids: [Int64], workerID: String) throws(PGError) -> [Int64] {
        guard !ids.isEmpty else { return [] }
        let result = try query("""
            WITH ended AS (
            UPDATE pushq.notifications
               SET status = 'failed', last_reason = 'ClaimError', locked_by = NULL, locked_until = NULL, finished_at = now()
             WHERE id = ANY ($1::bigint[])
               AND (status IN ('queued', 'retrying') OR (status = 'sending' AND locked_until < now()))
            RETURNING id, status, lane, last_reason AS reason
            ), tallied AS (
            \(Self.tallySQL(from: "ended", worker: Self.claimTallyWorker("$2")))
            )
            SELECT id FROM ended
            """, [ids, workerID])
        var ended: [Int64] = []
        for row in result.rows {
            if let id = try row.decode(Int64?.self, "id") { ended.append(id) }
        }
        return ended
    }

    /// The last due entry of pushq.due whose row waits (each lane's, read backwards along
    /// due_order, then the latest of them), with the claim's routing and filters, lanes not paused.
    static let lastDueSQL = SQLTemplate(ClaimStatement.dueLanes + """
        SELECT h.id
          FROM waiting w
         CROSS JOIN LATERAL (\(laneEntrySQL("AND n.status IN ('queued', 'retrying') AND n.scheduled_at <= now()", backwards: true))) h
         WHERE w.lane IS NOT NULL
         ORDER BY h.due_at DESC, h.id DESC
         LIMIT 1
        """, markers: [ClaimFilter.marker])

    /// The head of every lane not paused, as the claim walks pushq.due: the first due entry of
    /// each lane whose row can be claimed (waiting and due, or in flight under a lease that has
    /// ended), with the claim's routing and filters. A claim of one row takes the head of the
    /// first lane in its order (which turns between lanes of a rank).
    static let headsSQL = SQLTemplate(ClaimStatement.dueLanes + """
        SELECT h.id
          FROM waiting w
         CROSS JOIN LATERAL (\(laneEntrySQL(ClaimStatement.dueOrLapsedSQL(), backwards: false))) h
         WHERE w.lane IS NOT NULL
        """, markers: [ClaimFilter.marker])

    /// Lane `w.lane`'s first due entry of pushq.due in due order (the last when `backwards`)
    /// whose row meets `rowSQL`, the claim's routing (from `$1`, ``ClaimRouting``) and filters, in a lane not
    /// paused: its `id` and `due_at`.
    static func laneEntrySQL(_ rowSQL: String, backwards: Bool) -> String {
        """
        SELECT d.id, d.due_at
          FROM pushq.due d
         WHERE d.lane = w.lane
           AND d.due_at <= now()
           AND EXISTS (
               SELECT 1 FROM pushq.notifications n
                WHERE n.id = d.id
                  \(rowSQL)
                  \(ClaimRouting.sql(from: 1))
                  \(ClaimFilter.marker)
                  AND NOT \(ClaimStatement.lanePausedSQL("n.lane")))
         ORDER BY \(backwards ? "d.due_at DESC, d.id DESC" : "d.due_at, d.id")
         LIMIT 1
        """
    }
}
