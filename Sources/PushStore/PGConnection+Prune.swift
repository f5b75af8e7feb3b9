import PushCore

extension PrunePass {
    /// The rows of this pass older than `$1` seconds. Every condition names final statuses
    /// only, and implies the predicate of the partial index `notifications_finished`
    /// (migration 6), which the pruner walks: a row that is not final cannot be reached.
    fileprivate var condition: String {
        switch self {
        case .sent:
            "status = 'sent' AND finished_at < now() - $1 * interval '1 second'"
        case .ended:
            "status IN ('failed', 'expired', 'cancelled') AND finished_at < now() - $1 * interval '1 second'"
        case .sentUnstamped:
            "status = 'sent' AND finished_at IS NULL AND created_at < now() - $1 * interval '1 second'"
        case .endedUnstamped:
            "status IN ('failed', 'expired', 'cancelled') AND finished_at IS NULL AND created_at < now() - $1 * interval '1 second'"
        }
    }

    /// The statuses again, for the outer `DELETE`: a row whose status changed since it was
    /// picked is left alone.
    fileprivate var statusCondition: String {
        switch self {
        case .sent, .sentUnstamped: "status = 'sent'"
        case .ended, .endedUnstamped: "status IN ('failed', 'expired', 'cancelled')"
        }
    }
}

extension PGConnection {
    /// An arbitrary constant: the advisory lock that elects one pruner at a time (a worker's
    /// upkeep or `pushq prune`).
    public static let pruneLockKey: Int64 = 0x7075_7368_7072_756E  // "pushprun"

    /// Takes the pruner's session-level advisory lock if no other session holds it.
    ///
    /// - Returns: whether this session is now the pruner. Release it with ``unlockPruner()``;
    ///   a lost connection releases it too.
    public func tryLockPruner() throws(PGError) -> Bool {
        try query("SELECT pg_try_advisory_lock($1)", [Self.pruneLockKey]).decode(Bool.self, 0, 0) == true
    }

    /// Releases the pruner's advisory lock (if this session does not hold it, PostgreSQL only warns).
    public func unlockPruner() throws(PGError) {
        try query("SELECT pg_advisory_unlock($1)", [Self.pruneLockKey])
    }

    /// Deletes up to `limit` rows of `pass` older than `seconds`, oldest first, in one
    /// statement (one short transaction). Rows locked by another session are skipped.
    ///
    /// - Returns: the rows deleted.
    public func prune(_ pass: PrunePass, olderThan seconds: Double, limit: Int) throws(PGError) -> Int {
        let order = pass == .sent || pass == .ended ? "ORDER BY finished_at" : ""
        return try query("""
            DELETE FROM pushq.notifications
             WHERE id = ANY(ARRAY(SELECT id FROM pushq.notifications WHERE \(pass.condition)
                                   \(order) LIMIT $2 FOR UPDATE SKIP LOCKED))
               AND \(pass.statusCondition)
            """, [seconds, limit]).affectedRows
    }

    /// The rows of `pass` older than `seconds`: what ``prune(_:olderThan:limit:)`` would
    /// delete (`pushq prune --dry-run`). Counted through the index of final rows.
    public func pruneCandidates(_ pass: PrunePass, olderThan seconds: Double) throws(PGError) -> Int {
        try query("SELECT count(*) FROM pushq.notifications WHERE \(pass.condition)", [seconds]).decode(Int.self, 0, 0) ?? 0
    }
}
