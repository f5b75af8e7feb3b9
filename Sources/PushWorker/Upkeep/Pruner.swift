import Foundation
import Logging
import PushCore
import PushStore
import PGClient

/// Deletes final rows past their retention, and retires Live Activity tokens past Apple's
/// limits: the worker's upkeep and `pushq prune`.
///
/// One pruner at a time across every worker and `pushq prune`: a round first takes the
/// session-level advisory lock ``PGConnection/pruneLockKey`` and does nothing if another
/// session holds it. Each pass walks the rows created before its cutoff by `created_at`
/// (``PruneWalk``): each batch reads the next ``RetentionPolicy/batchSize`` rows of the walk and
/// deletes, in one `DELETE` (one short transaction), those that are final and past their
/// retention. Then it retires, in batches of the same size, the `live_activity` tokens
/// registered longer ago than ``LiveActivityLimits/tokenLifetimeSeconds``
/// (``PGConnection/retireAgedActivityTokens(olderThan:limit:)``). Between full batches the pruner
/// rests four times as long as the batch took (at most 1 s).
public struct Pruner: Sendable {
    /// What a round did.
    public enum Outcome: Sendable, Equatable {
        /// Another session holds the pruner's lock: nothing was done.
        case notElected
        /// Rows deleted per pass (every pass is present), in batches (token retirements
        /// included), and Live Activity tokens retired for their age.
        case pruned(deleted: [PrunePass: Int], batches: Int, retiredTokens: Int)
    }

    public var policy: RetentionPolicy

    public init(policy: RetentionPolicy) {
        self.policy = policy
    }

    /// One round: if elected, every pass until its walk reaches its cutoff, or `isStopped`.
    ///
    /// - Parameters:
    ///   - connection: the session that takes the lock and deletes.
    ///   - walk: where each pass resumes; updated as the passes go.
    ///   - now: seconds on a monotonic clock (``PruneWalk/begin(_:retention:at:)``).
    ///   - isStopped: checked before each batch; true ends the round early.
    ///   - rest: waits the given seconds between full batches (returns early on a stop).
    /// - Throws: `PGError` from a statement; the lock is released first when possible.
    public func round(_ connection: PGConnection, walk: inout PruneWalk, now: Double, isStopped: @Sendable () -> Bool = { false },
                      rest: @Sendable (Double) async -> Void) async throws -> Outcome {
        guard try await connection.tryLockPruner() else { return .notElected }
        var deleted: [PrunePass: Int] = [:]
        var batches = 0
        var retired = 0
        do {
            for (pass, age) in policy.passes {
                deleted[pass] = 0
                walk.begin(pass, retention: age, at: now)
                while !isStopped() {
                    let after = walk.positions[pass]
                    let step = try await batch(rest: rest, walked: \.walked) {
                        try await connection.prune(pass, olderThan: age, limit: policy.batchSize, after: after)
                    }
                    batches += 1
                    deleted[pass, default: 0] += step.deleted
                    if let last = step.last { walk.positions[pass] = last }
                    if step.walked < policy.batchSize { break }
                }
            }
            while !isStopped() {
                let n = try await batch(rest: rest, walked: \.self) {
                    try await connection.retireAgedActivityTokens(olderThan: LiveActivityLimits.tokenLifetimeSeconds, limit: policy.batchSize)
                }
                batches += 1
                retired += n
                if n < policy.batchSize { break }
            }
        } catch {
            try? await connection.unlockPruner()
            throw error
        }
        try await connection.unlockPruner()
        return .pruned(deleted: deleted, batches: batches, retiredTokens: retired)
    }

    /// Runs one batch and, when it was full (`walked` of its result), rests as
    /// ``RetentionPolicy/restSeconds(afterBatchOf:took:)`` says.
    ///
    /// - Returns: what the batch returned.
    private func batch<Result>(rest: @Sendable (Double) async -> Void, walked: KeyPath<Result, Int>,
                               _ body: () async throws -> Result) async throws -> Result {
        let started = ContinuousClock.now
        let result = try await body()
        let took = ContinuousClock.now - started
        let seconds = Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18
        if let pause = policy.restSeconds(afterBatchOf: result[keyPath: walked], took: seconds) { await rest(pause) }
        return result
    }
}
