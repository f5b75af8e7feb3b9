/// How long final rows are kept before the pruner deletes them, and how it paces itself.
///
/// `sent` rows are kept ``sentSeconds`` (`PUSHQ_RETAIN_SENT_SECONDS`, default one day);
/// `failed`, `expired` and `cancelled` rows ``finalSeconds`` (`PUSHQ_RETAIN_FINAL_SECONDS`,
/// default seven days), counted from `finished_at` (from `created_at` for a final row without
/// one, e.g. cancelled by a producer that left it NULL). Rows that are not final are never
/// deleted, whatever their age. The pruner walks rows by `created_at` (``PruneWalk``).
///
/// The pruner deletes at most ``batchSize`` rows per statement (one short transaction each)
/// and rests between batches four times as long as the last batch took, at most 1 s
/// (``restSeconds(afterBatchOf:took:)``), so that it never takes more than a fifth of one
/// PostgreSQL backend from the workers.
///
/// Pure: no clock, no I/O.
public struct RetentionPolicy: Sendable, Hashable {
    /// Seconds a `sent` row is kept after it finished. Defaults to 86 400 (one day).
    public var sentSeconds: Double
    /// Seconds a `failed`, `expired` or `cancelled` row is kept after it finished.
    /// Defaults to 604 800 (seven days).
    public var finalSeconds: Double
    /// Most rows deleted by one statement. Defaults to 1000.
    public var batchSize: Int

    public init(sentSeconds: Double = 86_400, finalSeconds: Double = 604_800, batchSize: Int = 1000) {
        precondition(sentSeconds >= 0 && finalSeconds >= 0 && batchSize >= 1)
        self.sentSeconds = sentSeconds
        self.finalSeconds = finalSeconds
        self.batchSize = batchSize
    }

    /// The passes of one pruning round, in order, each with the age past which its rows go.
    public var passes: [(pass: PrunePass, olderThanSeconds: Double)] {
        [(.sent, sentSeconds), (.ended, finalSeconds)]
    }

    /// What the pruner does after a batch: the next batch after a rest, or the next pass.
    ///
    /// - Parameters:
    ///   - walked: rows the batch read of the pass's walk (those it deleted and those it skipped).
    ///   - took: seconds the batch took.
    /// - Returns: the seconds to rest before the next batch of the same pass, or nil when the
    ///   pass is done (the batch was not full: the walk reached the pass's cutoff).
    public func restSeconds(afterBatchOf walked: Int, took: Double) -> Double? {
        guard walked >= batchSize else { return nil }
        return min(max(took, 0) * 4, 1)
    }
}

/// One kind of final row the pruner deletes, by status. Its age counts from `finished_at`, or from
/// `created_at` for a final row without one.
public enum PrunePass: String, Sendable, Hashable, CaseIterable {
    /// `sent` rows.
    case sent
    /// `failed`, `expired` and `cancelled` rows.
    case ended

    /// The statuses of its rows.
    public var statuses: [String] {
        switch self {
        case .sent: ["sent"]
        case .ended: ["failed", "expired", "cancelled"]
        }
    }
}
