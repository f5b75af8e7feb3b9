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
/// stopped, so that the rows it skipped are not read again every few seconds; every
/// ``rescanSeconds`` the walks start again from the first row, which deletes the skipped rows
/// that have since become final and aged.
///
/// Pure: the time is given.
public struct PruneWalk: Sendable, Equatable {
    /// Where each pass stopped; a pass without one starts from the first row.
    public var positions: [PrunePass: PrunePosition] = [:]
    /// When (seconds on a monotonic clock) the walks last started from the first row.
    public var startedAt: Double?

    /// Seconds between walks from the first row.
    public static let rescanSeconds: Double = 600

    public init() {}

    /// Starts a round at `now`: the walks start from the first row again if they never did or
    /// did ``rescanSeconds`` ago or more.
    public mutating func beginRound(at now: Double) {
        if let startedAt, now - startedAt < Self.rescanSeconds, now >= startedAt { return }
        positions = [:]
        startedAt = now
    }
}
