import Logging
import PushStore
import PGClient

extension PushWorker {
    /// Refuses to run through a pooler that does not keep a session per client
    /// (``PGConnection/checkSessionsKept(_:_:)``); a check that fails otherwise is left to the
    /// loops, which retry their statements.
    ///
    /// - Throws: ``WorkerError`` `.configuration` with the problem and the fix, the connections closed.
    func requireSessions(_ claimConnection: PGConnection, _ completeConnection: PGConnection) async throws {
        do {
            try await PGConnection.checkSessionsKept(claimConnection, completeConnection)
        } catch where error.code == .sessionNotKept {
            await claimConnection.close()
            await completeConnection.close()
            throw WorkerError(.configuration, error.message)
        } catch {
            logger.warning("could not check that the worker's connections keep their sessions", metadata: ["error": "\(error)"])
        }
    }

    /// Connects to PostgreSQL, retrying with backoff until it works or a stop is requested.
    func connect(purpose: String) async -> PGConnection? {
        var delay = 0.2
        var warned = false
        while !stopRequested {
            do {
                return try await PGConnection.connect(configuration.databaseURL, logger: logger,
                                                      statementTimeout: .milliseconds(Int(configuration.statementTimeoutSeconds * 1000)),
                                                      statementDeadline: .milliseconds(Int(configuration.statementDeadlineSeconds * 1000)))
            } catch {
                if !warned {
                    logger.error("cannot connect to PostgreSQL; retrying with backoff", metadata: ["pg.purpose": "\(purpose)", "error": "\(error)"])
                    warned = true
                }
                await workWake.wait(timeout: .milliseconds(Int(delay * 1000)))
                delay = min(delay * 2, 5)
            }
        }
        return nil
    }
}
