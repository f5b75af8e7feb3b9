import PGClient
extension PGConnection {
    /// The `last_reason` of a row ended by ``endWriteBackError(_:workerID:)``.
    public static let writeBackErrorReason = "WriteBackError"

    /// Ends one row whose write-back fails on its answer's data: `failed` with last_reason
    /// `WriteBackError`, released from its lease, finished now; `attempts` and the rest stay as
    /// they were.
    ///
    /// Fenced like ``complete(_:invalidations:throttles:holds:resumed:workerID:)``: only while the
    /// row is still `sending`, held by `workerID` under `row`'s claim. It writes nothing from the
    /// answer (no status code, reason or time computed from it) and makes the row final, which
    /// every constraint lets be (migration 4), so the data that broke the write-back cannot break it.
    /// - Returns: whether the row was ended (false when its lease was lost meanwhile).
    @discardableResult
    public func endWriteBackError(_ row: RowClaim, workerID: String) throws(PGError) -> Bool {
        try query("""
            WITH ended AS (
            UPDATE pushq.notifications
               SET status = 'failed', last_reason = $4, locked_by = NULL, locked_until = NULL, finished_at = now()
             WHERE id = $1 AND status = 'sending' AND locked_by = $2 AND attempts = $3
               AND (extract(epoch FROM locked_until) * 1000000)::bigint = $5
            RETURNING status, lane, last_reason AS reason
            ), tallied AS (
            \(Self.tallySQL(from: "ended", worker: "$2"))
            )
            SELECT count(*) AS ended FROM ended
            """, [row.id, workerID, row.attempt, Self.writeBackErrorReason, row.lease]).firstRow().decode(Int?.self, "ended") == 1
    }
}
