import Foundation

extension PGConnection {
    /// Rows a lane's cancellation ends per statement (each its own transaction: docs/producers.md, Cancelling).
    public static let laneCancelBatch = 10_000

    /// Cancels every waiting row of `lane` in batches of ``laneCancelBatch``, through
    /// `notifications_lane_due`; rows a worker is claiming are skipped (`SKIP LOCKED`). Each
    /// batch is its own transaction with its `audit` row (`rows` the batch's), so that what is
    /// cancelled is recorded with it; one audit row with 0 rows when nothing waited.
    ///
    /// - Returns: the rows cancelled.
    public func cancelLane(_ lane: String, audit: AuditEntry) throws -> Int {
        var total = 0
        while true {
            let first = total == 0
            let n = try transaction { c in
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

    /// Pauses or resumes `lane` (a row of `pushq.lanes`, created with the defaults if missing),
    /// with its `audit` row.
    public func setLanePaused(_ lane: String, paused: Bool, audit: AuditEntry) throws {
        try transaction { c in
            try c.query("SELECT set_config('lock_timeout', $1, true)", [Self.serveLockTimeout])
            try c.query("""
                INSERT INTO pushq.lanes (name, paused) VALUES ($1, $2)
                ON CONFLICT (name) DO UPDATE SET paused = EXCLUDED.paused, updated_at = now()
                """, [lane, paused])
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

    /// One batch (`$2`) of lane `$1`'s waiting rows cancelled, through `notifications_lane_due`.
    static let cancelLaneBatchSQL = """
        WITH batch AS (
            SELECT id FROM pushq.notifications WHERE lane = $1 AND status IN ('queued', 'retrying')
             LIMIT $2 FOR UPDATE SKIP LOCKED
        )
        UPDATE pushq.notifications n SET status = 'cancelled', finished_at = now() FROM batch WHERE n.id = batch.id
        """

    /// The statements of the dashboard that read `pushq.notifications`, the very constants it
    /// runs, with example parameters: a test (`@testable`) checks their plans on a large table.
    static var dashboardStatements: [(sql: String, parameters: [(any PGParameter)?])] {
        let token = String(repeating: "ab", count: 32)
        return [
            (minuteSeriesSQL, [MinuteSeries.rowLimit, MinuteSeries.invalidationReasons, MinuteSeries.minutes]),
            (failureReasonsSQL, [60, MinuteSeries.rowLimit, FailureReasons.reasonLimit]),
            (failureReasonsSQL, [1_440, MinuteSeries.rowLimit, FailureReasons.reasonLimit]),
            (failedRowsSQL, ["BadDeviceToken", 1_440, dashboardListLimit, MinuteSeries.rowLimit]),
            (notificationRecordSQL, [Int64(42)]),
            (rowsByTokenSQL(false), [[token, token.uppercased()], dashboardListLimit]),
            (rowsByMetadataSQL(false), ["campaign", "spring", nil, metadataSearchHours, dashboardListLimit]),
            (rowsByMetadataSQL(false), ["order", "42", "42", metadataSearchHours, dashboardListLimit]),
            (cancelLaneBatchSQL, ["campaign", laneCancelBatch]),
        ]
    }
}
