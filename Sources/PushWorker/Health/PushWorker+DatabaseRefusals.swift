import Logging
import PushCore
import PushStore
import PGClient

extension PushWorker {
    /// What a failed statement calls for (``StatementFailure``): by its SQLSTATE, and a
    /// session a pooler does not keep (``PGError/Code/sessionNotKept``) is configuration too.
    static func failure(of error: any Error) -> StatementFailure {
        guard let error = error as? PGError else { return .transient }
        if error.code == .sessionNotKept { return .configuration }
        return StatementFailure(sqlState: error.sqlState)
    }

    /// Carries out what a statement of `loop` that failed other than on data calls for, before
    /// the loop's backoff: on a read-only session (25006), drops it so that the next statement
    /// reconnects (and a multi-host URL finds the writable host); on a refusal only an operator
    /// can mend (``StatementFailure/configuration``), logs an error naming the SQLSTATE, what
    /// the statement was for and the fix (once per problem), and reports the worker not live
    /// until ``databaseAccepted(_:purpose:)``.
    ///
    /// - Returns: the failure's kind.
    @discardableResult
    func databaseFailed(_ error: any Error, loop: WorkerHealth.Loop, purpose: String,
                        _ connection: PGConnection) async -> StatementFailure {
        let kind = Self.failure(of: error)
        let pg = error as? PGError
        let sqlState = pg?.sqlState ?? ""
        switch kind {
        case .readOnly:
            await connection.dropSession()
            logger.warning("PostgreSQL refused \(purpose): \(StatementFailure.fix(sqlState: "25006") ?? "")", metadata: [
                "pg.purpose": "\(purpose)", "pg.sqlstate": "25006", "error": "\(error)"])
        case .configuration:
            let fix = pg?.code == .sessionNotKept ? "" : " — " + (StatementFailure.fix(sqlState: pg?.sqlState) ?? "")
            let problem = sqlState.isEmpty
                ? "\(purpose) fails: \(pg?.message ?? "\(error)")"
                : "\(purpose) fails with SQLSTATE \(sqlState) (\(pg?.message ?? "\(error)"))\(fix)"
            let isNew = state.withLock { s in
                defer { s.refusals[loop] = problem }
                return s.refusals[loop] != problem
            }
            if isNew {
                logger.error("PostgreSQL refuses the worker's statements; retrying with backoff, and /healthz fails until it is fixed: \(problem)",
                             metadata: ["pg.purpose": "\(purpose)", "pg.sqlstate": "\(sqlState)", "error": "\(error)"])
            }
        case .deterministic, .transient:
            break
        }
        return kind
    }

    /// A statement of `loop` worked: lifts the refusal ``databaseFailed(_:loop:purpose:_:)`` reported, if any.
    func databaseAccepted(_ loop: WorkerHealth.Loop, purpose: String) {
        let lifted = state.withLock { s in s.refusals.removeValue(forKey: loop) }
        if lifted != nil {
            logger.info("PostgreSQL accepts \(purpose) again", metadata: ["pg.purpose": "\(purpose)"])
        }
    }
}
