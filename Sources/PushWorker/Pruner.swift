import Logging
import PushCore
import PushStore

/// Deletes final rows past their retention: the worker's upkeep and `pushq prune`.
///
/// One pruner at a time across every worker and `pushq prune`: a round first takes the
/// session-level advisory lock ``PGConnection/pruneLockKey`` and does nothing if another
/// session holds it. Each batch is one `DELETE` of at most ``RetentionPolicy/batchSize`` rows
/// (one short transaction) through the partial index of final rows; rows that are not final
/// cannot be reached. Between full batches the pruner rests twice as long as the batch took (at most 1 s).
public struct Pruner: Sendable {
    /// What a round did.
    public enum Outcome: Sendable, Equatable {
        /// Another session holds the pruner's lock: nothing was done.
        case notElected
        /// Rows deleted per pass (every pass is present), in batches.
        case pruned(deleted: [PrunePass: Int], batches: Int)
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
        do {
            for (pass, age) in policy.passes {
                deleted[pass] = 0
                while !isStopped() {
                    let started = ContinuousClock.now
                    let n = try await connection.prune(pass, olderThan: age, limit: policy.batchSize)
                    batches += 1
                    deleted[pass, default: 0] += n
                    let took = ContinuousClock.now - started
                    let seconds = Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18
                    guard let pause = policy.restSeconds(afterBatchOf: n, took: seconds) else { break }
                    await rest(pause)
                }
            }
        } catch {
            try? await connection.unlockPruner()
            throw error
        }
        try await connection.unlockPruner()
        return .pruned(deleted: deleted, batches: batches)
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
                if case .pruned(let deleted, let batches) = outcome, deleted.values.reduce(0, +) > 0 {
                    logger.info("deleted final notifications past their retention", metadata: [
                        "prune.sent": "\(deleted[.sent, default: 0] + deleted[.sentUnstamped, default: 0])",
                        "prune.ended": "\(deleted[.ended, default: 0] + deleted[.endedUnstamped, default: 0])",
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
