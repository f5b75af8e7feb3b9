import Foundation
import PushCore
import PGClient

extension PGConnection {
    /// Rows a lane's cancellation ends per statement (each its own transaction: docs/producers.md, Cancelling).
    public static let laneCancelBatch = 10_000

    /// Cancels every waiting row of `lane` in batches of ``laneCancelBatch``, through its
    /// entries of pushq.due; rows a worker is claiming are skipped (`SKIP LOCKED`). Each
    /// batch is its own transaction with its `audit` row (`rows` the batch's), so that what is
    /// cancelled is recorded with it; one audit row with 0 rows when nothing waited.
    ///
    /// The first batch also notifies the workers (``LaneStops/laneChannel``, payload
    /// `cancel:<lane>`) as it commits: each ends `cancelled` the rows of the lane it claimed and
    /// has not started (``endCancelled(_:workerID:)``); requests already on the wire end with
    /// the provider's answer.
    ///
    /// - Returns: the rows cancelled.
    public func cancelLane(_ lane: String, audit: AuditEntry) throws -> Int {
        var total = 0
        while true {
            let first = total == 0
            let n = try transaction { c in
                if first { try c.query("SELECT pg_notify($1, $2)", [LaneStops.laneChannel, LaneStops.cancelPayloadPrefix + lane]) }
                let n = try c.query(Self.cancelLaneBatchSQL, [lane, Self.laneCancelBatch]).affectedRows
                if n > 0 || first {
                    var entry = audit
                    entry.rows = n
                    try c.recordAudit(entry)
                }
                return n
            }
            total += n
            if n < Self.laneCancelBatch { return total }
        }
    }

    /// Pauses or resumes `lane`, with its `audit` row. A lane with no row of `pushq.lanes`
    /// follows `default`'s rank and cap: pausing it makes a row copying them, marked
    /// `created_by_pause`, and resuming deletes that row, so the lane follows `default` again.
    /// A lane with a row of its own keeps it; only `paused` changes.
    public func setLanePaused(_ lane: String, paused: Bool, audit: AuditEntry) throws {
        try transaction { c in
            try c.query("SELECT set_config('lock_timeout', $1, true)", [Self.serveLockTimeout])
            if paused {
                try c.query("""
                    INSERT INTO pushq.lanes (name, paused, rank, max_per_second, created_by_pause, note)
                    SELECT $1, true, COALESCE(d.rank, 100), d.max_per_second, $1 <> 'default',
                           'made by a dashboard pause with default''s rank and cap; the resume deletes it'
                      FROM (SELECT 1) one LEFT JOIN pushq.lanes d ON d.name = 'default'
                    ON CONFLICT (name) DO UPDATE SET paused = true, updated_at = now()
                    """, [lane])
            } else {
                try c.query("DELETE FROM pushq.lanes WHERE name = $1 AND created_by_pause", [lane])
                try c.query("UPDATE pushq.lanes SET paused = false, updated_at = now() WHERE name = $1 AND paused", [lane])
            }
            var entry = audit
            entry.rows = 1
            try c.recordAudit(entry)
        }
    }

    /// Lifts the hold of (`credential`, `environment`) before its next probe: every worker claims
    /// its rows again at once. Writes `audit` (`rows` 1, or 0 when there was no hold).
    ///
    /// - Returns: whether there was a hold.
    public func liftHold(credential: String, environment: String, audit: AuditEntry) throws -> Bool {
        try transaction { c in
            try c.query("SELECT set_config('lock_timeout', $1, true)", [Self.serveLockTimeout])
            let n = try c.query("DELETE FROM pushq.credential_pauses WHERE credential = $1 AND environment = $2",
                                [credential, environment]).affectedRows
            var entry = audit
            entry.rows = n
            try c.recordAudit(entry)
            return n == 1
        }
    }

    /// One batch (`$2`) of lane `$1`'s waiting rows cancelled: the lane's entries of pushq.due in
    /// due order, each row checked (still waiting, still in the lane) and locked `SKIP LOCKED` in
    /// the walk, so that entries of rows it cannot cancel (in flight, held by a claim) are passed
    /// over; a cancelled row's entry goes with it (notifications_due_ended).
    static let cancelLaneBatchSQL = """
        WITH batch AS MATERIALIZED (
            SELECT d.id FROM pushq.due d
             WHERE d.lane = $1
               AND EXISTS (SELECT 1 FROM pushq.notifications n
                            WHERE n.id = d.id AND n.lane = d.lane AND n.status IN ('queued', 'retrying')
                              FOR UPDATE SKIP LOCKED)
             ORDER BY d.due_at, d.id
             LIMIT $2
        )
        UPDATE pushq.notifications SET status = 'cancelled', finished_at = now() WHERE id = ANY (ARRAY(SELECT b.id FROM batch b))
        """

    /// The statements of the dashboard that read `pushq.notifications`, the very constants it
    /// runs, with example parameters, and whether it runs them with sequential scans off
    /// (``readThroughIndexes(_:_:)``): a test (`@testable`) checks their plans on a large table.
    static var dashboardStatements: [(sql: String, parameters: [(any PGParameter)?], seqscanOff: Bool)] {
        let token = String(repeating: "ab", count: 32)
        return [
            (failedRowsSQL, ["BadDeviceToken", 1_440, dashboardListLimit, MinuteSeries.rowLimit], true),
            (notificationRecordSQL, [Int64(42)], false),
            (rowsByTokenSQL, [[token, token.uppercased()], dashboardListLimit], true),
            (rowsByMetadataSQL, ["campaign", "spring", nil, metadataSearchHours, dashboardListLimit], true),
            (rowsByMetadataSQL, ["order", "42", "42", metadataSearchHours, dashboardListLimit], true),
            (cancelLaneBatchSQL, ["campaign", laneCancelBatch], false),
        ]
    }
}
