import Foundation

/// The queue's size as the metrics show it: read by one worker at a time.
public struct QueueGauges: Sendable, Hashable {
    /// Rows `queued` or `retrying` whose `scheduled_at` has come, counted up to
    /// ``PGConnection/dueRowsCountLimit``.
    public var dueRows: Int
    /// Seconds since the oldest due row's `scheduled_at`; 0 when no row is due.
    public var oldestDueAgeSeconds: Double

    public init(dueRows: Int, oldestDueAgeSeconds: Double) {
        self.dueRows = dueRows
        self.oldestDueAgeSeconds = oldestDueAgeSeconds
    }
}

extension PGConnection {
    /// The advisory lock (two-key form, `pg_locks.classid`/`objid`) whose holder reads the
    /// queue gauges: "pushq" / "gaug".
    static let queueGaugesLockKeys: (Int32, Int32) = (0x7075_7368, 0x6761_7567)

    /// The most due rows ``queueGauges()`` counts: past this the gauge saturates, so that a
    /// huge backlog costs a bounded index scan every few seconds.
    public static let dueRowsCountLimit = 1_000_000

    /// Whether this session holds the queue-gauges lock, taking it if it is free.
    ///
    /// A session-level advisory lock: the first worker to ask keeps it until its connection
    /// ends (a stop, a crash, a lost connection), then the next worker to ask takes over. Asking
    /// again while holding it does not stack it (the statement looks in `pg_locks` first).
    public func holdsQueueGaugesLock() throws(PGError) -> Bool {
        let (k1, k2) = Self.queueGaugesLockKeys
        return try query("""
            SELECT CASE WHEN EXISTS (
                       SELECT 1 FROM pg_locks
                        WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
                          AND classid = ($1::int4)::oid AND objid = ($2::int4)::oid AND objsubid = 2)
                   THEN true ELSE pg_try_advisory_lock($1::int4, $2::int4) END
            """, [Int(k1), Int(k2)]).decode(Bool.self, 0, 0) ?? false
    }

    /// Due rows and the age of the oldest, from the `notifications_due` partial index: the count
    /// walks at most ``dueRowsCountLimit`` index entries, the oldest is its first entry.
    public func queueGauges() throws(PGError) -> QueueGauges {
        let r = try query("""
            SELECT (SELECT count(*) FROM (
                        SELECT 1 FROM pushq.notifications
                         WHERE status IN ('queued', 'retrying') AND scheduled_at <= now()
                         LIMIT $1) due)::int8,
                   COALESCE(extract(epoch FROM now() - (
                        SELECT scheduled_at FROM pushq.notifications
                         WHERE status IN ('queued', 'retrying') AND scheduled_at <= now()
                         ORDER BY scheduled_at, id LIMIT 1))::float8, 0)
            """, [Self.dueRowsCountLimit])
        return QueueGauges(dueRows: try r.decode(Int.self, 0, 0) ?? 0, oldestDueAgeSeconds: max(0, try r.decode(Double.self, 0, 1) ?? 0))
    }
}
