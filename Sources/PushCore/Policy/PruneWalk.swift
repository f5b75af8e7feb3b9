/// A row of the pruner's walk of `pushq.notifications` by (`created_at`, `id`): where a pass
/// stopped. `createdAt` is PostgreSQL's text of the timestamp, given back as it came.
public struct PrunePosition: Sendable, Hashable {
    public var createdAt: String
    public var id: Int64

    public init(createdAt: String, id: Int64) {
        self.createdAt = createdAt
        self.id = id
    }
}

/// Where each pass of the pruner resumes its walk of rows by `created_at`.
///
/// A pass walks the rows created before its cutoff, oldest first, and deletes those that are
/// final and past their retention; it skips the others (rows still waiting or in flight, rows of
/// the other pass kept longer). A round continues each pass from where the previous round
/// stopped, so that the rows it skipped are not read again every few seconds. A pass starts again
/// from the first row once its last start is as old as its retention, and at least every
/// ``rescanSeconds``: that deletes the rows it skipped that have since become final and aged. A
/// final row is therefore deleted at most its retention (or ``rescanSeconds``, the smaller) after
/// it became deletable.
///
/// Pure: the time is given.
public struct PruneWalk: Sendable, Equatable {
    /// Where each pass stopped; a pass without one starts from the first row.
    public var positions: [PrunePass: PrunePosition] = [:]
    /// When (seconds on a monotonic clock) each pass last started from the first row.
    public var startedAt: [PrunePass: Double] = [:]

    /// The most seconds between two walks of a pass from the first row.
    public static let rescanSeconds: Double = 600

    public init() {}

    /// Starts `pass`, whose rows are kept `retention` seconds, at `now`: from the first row again
    /// if it never started, or started `min(retention, rescanSeconds)` ago or more, or the clock
    /// is behind its start; else from where it stopped.
    public mutating func begin(_ pass: PrunePass, retention: Double, at now: Double) {
        if let started = startedAt[pass], now >= started, now - started < min(max(retention, 0), Self.rescanSeconds) { return }
        positions[pass] = nil
        startedAt[pass] = now
    }
}
