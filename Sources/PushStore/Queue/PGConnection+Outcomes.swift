import PGClient
/// pushq.outcomes (0.4.0): the rows workers sent and failed, tallied per minute, lane, status
/// and reason in the statement that ends them. The dashboard's chart and failure reasons, the
/// recent failures of `pushq status` and the lanes' send rates read it instead of the final rows of
/// pushq.notifications, which no index of their status or end time finds without keeping the
/// write-back's update from being HOT.
extension PGConnection {
    /// How long tally rows are kept: the dashboard's longest window (a day) and a margin.
    public static let outcomeHours = 25

    /// The INSERT that adds the rows of `source` to the tally of `worker` (an SQL expression):
    /// `source` is a relation with `status`, `lane` and `reason` columns; only its sent and
    /// failed rows count. A worker's claims and write-backs run at once on connections of their
    /// own, so each tallies under its own name (``claimTallyWorker(_:)``): neither waits for the
    /// other's tally row.
    static func tallySQL(from source: String, worker: String) -> String { """
        INSERT INTO pushq.outcomes AS o (status, minute, lane, worker, reason, rows)
        SELECT t.status, date_trunc('minute', now()), t.lane, \(worker),
               CASE WHEN t.status = 'failed' THEN COALESCE(t.reason, '') ELSE '' END, count(*)
          FROM \(source) t
         WHERE t.status IN ('sent', 'failed')
         GROUP BY 1, 3, 5
        ON CONFLICT (status, minute, lane, worker, reason) DO UPDATE SET rows = o.rows + EXCLUDED.rows
        """ }

    /// The name a worker's claims tally under (an SQL expression of its id, `worker`): its id and
    /// `/claim`.
    static func claimTallyWorker(_ worker: String) -> String { "\(worker) || '/claim'" }

    /// Deletes tally rows older than ``outcomeHours``, at most `limit`; returns how many.
    public func deleteOldOutcomes(limit: Int) throws(PGError) -> Int {
        try query("""
            DELETE FROM pushq.outcomes o USING (
                SELECT status, minute, lane, worker, reason FROM pushq.outcomes
                 WHERE status IN ('sent', 'failed') AND minute < now() - $1 * interval '1 hour'
                 LIMIT $2) old
             WHERE (o.status, o.minute, o.lane, o.worker, o.reason) = (old.status, old.minute, old.lane, old.worker, old.reason)
            """, [Self.outcomeHours, limit]).affectedRows
    }
}
