import Logging
import PushCore
import PushStore

/// Deletes final rows past their retention, and retires Live Activity tokens past Apple's
/// limits: the worker's upkeep and `pushq prune`.
///
/// One pruner at a time across every worker and `pushq prune`: a round first takes the
/// session-level advisory lock ``PGConnection/pruneLockKey`` and does nothing if another
/// session holds it. Each batch is one `DELETE` of at most ``RetentionPolicy/batchSize`` rows
/// (one short transaction) through the partial index of final rows; rows that are not final
/// cannot be reached. Then it retires, in batches of the same size, the `live_activity` tokens
/// registered longer ago than ``LiveActivityLimits/tokenLifetimeSeconds``
/// (``PGConnection/retireAgedActivityTokens(olderThan:limit:)``). Between full batches the pruner
/// rests twice as long as the batch took (at most 1 s).
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

    /// One round: if elected, every pass until it has nothing older left, or `isStopped`.
    ///
    /// - Parameters:
    ///   - connection: the session that takes the lock and deletes.
    ///   - isStopped: checked before each batch; true ends the round early.
    ///   - rest: waits the given seconds between full batches (returns early on a stop).
    /// - Throws: `PGError` from a statement; the lock is released first when possible.
    public func round(_ connection: PGConnection, isStopped: @Sendable () -> Bool = { false },
                      rest: @Sendable (Double) async -> Void) async throws -> Outcome {
        guard try await connection.tryLockPruner() else { return .notElected }
        var deleted: [PrunePass: Int] = [:]
        var batches = 0
        var retired = 0
        do {
            for (pass, age) in policy.passes {
                deleted[pass] = 0
                while !isStopped() {
                    let n = try await batch(rest: rest) { try await connection.prune(pass, olderThan: age, limit: policy.batchSize) }
                    batches += 1
                    deleted[pass, default: 0] += n
                    if n < policy.batchSize { break }
                }
            }
            while !isStopped() {
                let n = try await batch(rest: rest) {
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

    /// Runs one batch and, when it was full, rests as ``RetentionPolicy/restSeconds(afterBatchOf:took:)`` says.
    ///
    /// - Returns: the rows the batch touched.
    private func batch(rest: @Sendable (Double) async -> Void, _ body: () async throws -> Int) async throws -> Int {
        let started = ContinuousClock.now
        let n = try await body()
        let took = ContinuousClock.now - started
        let seconds = Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18
        if let pause = policy.restSeconds(afterBatchOf: n, took: seconds) { await rest(pause) }
        return n
    }
}

extension PushWorker {
    /// The prune loop: every ``WorkerConfiguration/heartbeatSeconds``, a ``Pruner`` round on a
    /// connection of its own (so that deleting never delays a claim), until a stop is requested.
    func pruneLoop() async {
        guard let connection = await connect(purpose: "prune") else { return }
        let pruner = Pruner(policy: configuration.retention)
        let every = Duration.milliseconds(Int(configuration.heartbeatSeconds * 1000))
        while !stopRequested {
            do {
                let outcome = try await pruner.round(connection, isStopped: { [self] in stopRequested },
                                                     rest: { [self] s in await stopWake.wait(timeout: .milliseconds(Int(s * 1000))) })
                if case .pruned(let deleted, let batches, let retired) = outcome, deleted.values.reduce(0, +) + retired > 0 {
                    logger.info("deleted final notifications past their retention", metadata: [
                        "prune.sent": "\(deleted[.sent, default: 0] + deleted[.sentUnstamped, default: 0])",
                        "prune.ended": "\(deleted[.ended, default: 0] + deleted[.endedUnstamped, default: 0])",
                        "prune.activity_tokens_retired": "\(retired)",
                        "prune.batches": "\(batches)",
                    ])
                }
            } catch {
                logger.debug("pruning failed; tried again later", metadata: ["error": "\(error)"])
            }
            await stopWake.wait(timeout: every)
        }
        await connection.close()
    }
}
