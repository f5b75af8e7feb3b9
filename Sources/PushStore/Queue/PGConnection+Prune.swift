import PushCore
import PGClient

extension PrunePass {
    /// The rows of this pass past their retention of `$1` seconds: final, aged from `finished_at`
    /// (from `created_at` without one).
    fileprivate var condition: String {
        let status = switch self {
        case .sent: "status = 'sent'"
        case .ended: "status IN ('failed', 'expired', 'cancelled')"
        }
        return status + " AND COALESCE(finished_at, created_at) < now() - $1 * interval '1 second'"
    }
}

/// One step of a pass of the pruner (``PGConnection/prune(_:olderThan:limit:after:)``).
public struct PruneStep: Sendable, Equatable {
    /// Rows deleted.
    public var deleted: Int
    /// Rows read of the walk, deleted or skipped: fewer than the limit when the walk reached the
    /// pass's cutoff.
    public var walked: Int
    /// The last row read; nil when none was.
    public var last: PrunePosition?
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
        try query("SELECT pg_try_advisory_lock($1) AS locked", [Self.pruneLockKey]).firstRow().decode(Bool?.self, "locked") == true
    }

    /// Releases the pruner's advisory lock (if this session does not hold it, PostgreSQL only warns).
    public func unlockPruner() throws(PGError) {
        try query("SELECT pg_advisory_unlock($1)", [Self.pruneLockKey])
    }

    /// One step of `pass`'s walk: the next `limit` rows created more than `seconds` ago, after
    /// `after` (from the first row when nil), by (`created_at`, `id`) through
    /// `notifications_created`; of those, deletes the rows of the pass past their retention, in
    /// one statement (one short transaction). Rows locked by another session are skipped.
    ///
    /// The walk reads rows created before the cutoff only: a row finishes after it was created,
    /// so no row created since can be past its retention.
    public func prune(_ pass: PrunePass, olderThan seconds: Double, limit: Int, after: PrunePosition?) throws(PGError) -> PruneStep {
        let r = try query("""
            WITH walked AS MATERIALIZED (
                SELECT id, created_at FROM pushq.notifications
                 WHERE created_at < now() - $1 * interval '1 second' AND (created_at, id) > ($3::timestamptz, $4::int8)
                 ORDER BY created_at, id LIMIT $2
            ), gone AS (
                DELETE FROM pushq.notifications
                 WHERE id = ANY (ARRAY(SELECT n.id FROM pushq.notifications n
                                        WHERE n.id = ANY (ARRAY(SELECT w.id FROM walked w)) AND \(pass.condition)
                                        FOR UPDATE SKIP LOCKED))
                   AND \(pass.condition)
                RETURNING 1
            ), last AS (SELECT created_at, id FROM walked ORDER BY created_at DESC, id DESC LIMIT 1)
            SELECT (SELECT count(*) FROM gone) AS deleted, (SELECT count(*) FROM walked) AS walked,
                   (SELECT created_at::text FROM last) AS last_created_at, (SELECT id FROM last) AS last_id
            """, [seconds, limit, after?.createdAt ?? "-infinity", after?.id ?? Int64.min])
        let row = try r.firstRow()
        var last: PrunePosition?
        if let createdAt = try row.string("last_created_at"), let id = try row.decode(Int64?.self, "last_id") {
            last = PrunePosition(createdAt: createdAt, id: id)
        }
        return PruneStep(deleted: try row.decode(Int?.self, "deleted") ?? 0, walked: try row.decode(Int?.self, "walked") ?? 0, last: last)
    }

    /// The rows of `pass` older than `seconds`: what a walk from the first row would delete
    /// (`pushq prune --dry-run`), through `notifications_created`.
    public func pruneCandidates(_ pass: PrunePass, olderThan seconds: Double) throws(PGError) -> Int {
        try query("""
            SELECT count(*) AS rows FROM pushq.notifications WHERE created_at < now() - $1 * interval '1 second' AND \(pass.condition)
            """, [seconds]).firstRow().decode(Int?.self, "rows") ?? 0
    }
}
