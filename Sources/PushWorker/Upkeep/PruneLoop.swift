import Foundation
import Logging
import PushCore
import PushStore
import PGClient

/// The prune loop, on a connection of its own (so that deleting never delays a claim): every
/// ``WorkerConfiguration/heartbeatSeconds``, a ``Pruner`` round, which does nothing unless this
/// worker is elected (one pruner across every worker and `pushq prune`), until a stop is
/// requested. A stop ends its rests between batches and between rounds at once.
///
/// Its state is its own: where each pass of the walk resumes (``PruneWalk``) and the last
/// failure it warned of (the same failure again is logged at debug only: a role without
/// DELETE, 42501, never prunes, and says so once). Of the worker it uses the configuration, the
/// logger, the stop request and its wake-up.
struct PruneLoop {
    let worker: PushWorker
    private let pruner: Pruner
    private var walk = PruneWalk()
    /// The last failure logged at warning (SQLSTATE and message).
    private var failing: String?

    init(worker: PushWorker) {
        self.worker = worker
        pruner = Pruner(policy: worker.configuration.retention)
    }

    var logger: Logger { worker.logger }

    /// Runs until a stop is requested.
    mutating func run() async {
        guard let connection = await worker.connect(purpose: "prune") else { return }
        let every = Duration.milliseconds(Int(worker.configuration.heartbeatSeconds * 1000))
        while !worker.stopRequested {
            await round(connection)
            await worker.stopWake.wait(timeout: every)
        }
        await connection.close()
    }

    /// One round, logged: what it deleted, or why it failed.
    private mutating func round(_ connection: PGConnection) async {
        let worker = worker
        do {
            let outcome = try await pruner.round(connection, walk: &walk, now: ProcessInfo.processInfo.systemUptime,
                                                 isStopped: { worker.stopRequested },
                                                 rest: { s in await worker.stopWake.wait(timeout: .milliseconds(Int(s * 1000))) })
            if case .pruned(let deleted, let batches, let retired) = outcome, deleted.values.reduce(0, +) + retired > 0 {
                logger.info("deleted final notifications past their retention", metadata: [
                    "prune.sent": "\(deleted[.sent, default: 0])",
                    "prune.ended": "\(deleted[.ended, default: 0])",
                    "prune.activity_tokens_retired": "\(retired)",
                    "prune.batches": "\(batches)",
                ])
            }
            if failing != nil { logger.info("pruning works again") }
            failing = nil
        } catch {
            // A warning, once per kind of failure: a role without DELETE (42501) never prunes.
            let pg = error as? PGError
            let problem = "\(pg?.sqlState ?? "")|\(pg?.message ?? "\(error)")"
            var metadata: Logger.Metadata = ["pg.sqlstate": "\(pg?.sqlState ?? "")", "error": "\(error)"]
            if let fix = StatementFailure.fix(sqlState: pg?.sqlState) { metadata["fix"] = "\(fix)" }
            logger.log(level: problem == failing ? .debug : .warning,
                       "pruning failed: final rows past their retention are kept; tried again every heartbeat", metadata: metadata)
            failing = problem
        }
    }
}
