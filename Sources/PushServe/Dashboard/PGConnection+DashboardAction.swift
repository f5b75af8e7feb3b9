import PushStore
import PGClient

extension PGConnection {
    /// Carries out `action`, writing `audit` in the transaction of each change.
    ///
    /// - Returns: the word ``DashboardAction/doneMessage(_:)`` reads: `cancelled`, `not-found`,
    ///   `not-waiting:<status>`, a lane's cancelled rows, `done`, or `none` (no hold to lift).
    func perform(_ action: DashboardAction, audit: AuditEntry) throws -> String {
        switch action {
        case .cancelRow(let id):
            switch try cancelNotification(id: id, audit: audit) {
            case .cancelled: return "cancelled"
            case .notFound: return "not-found"
            case .notCancellable(let status): return "not-waiting:" + status
            }
        case .cancelLane(let lane):
            return String(try cancelLane(lane, audit: audit))
        case .pauseLane(let lane), .resumeLane(let lane):
            try setLanePaused(lane, paused: action == .pauseLane(lane), audit: audit)
            return "done"
        case .liftHold(let credential, let environment):
            return try liftHold(credential: credential, environment: environment, audit: audit) ? "done" : "none"
        }
    }
}
