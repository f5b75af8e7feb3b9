import PGClient
/// An operator's action from the dashboard. Each is shown on a confirmation page first
/// (``DashboardPage/confirm(_:)``), then posted with the session's CSRF token, carried out,
/// and written to the audit log with the key's name.
enum DashboardAction: Sendable, Equatable {
    /// Cancel one waiting row.
    case cancelRow(Int64)
    /// Cancel every waiting row of a lane (the campaign kill switch).
    case cancelLane(String)
    case pauseLane(String)
    case resumeLane(String)
    /// Lift a hold before its next probe.
    case liftHold(credential: String, environment: String)

    /// Whether only an `admin` key may do it (a lane or a hold); cancelling one row needs `enqueue`.
    var operatesFleet: Bool {
        if case .cancelRow = self { return false }
        return true
    }

    /// The link's and the button's word.
    var verb: String {
        switch self {
        case .cancelRow: return "Cancel"
        case .cancelLane: return "Cancel waiting rows"
        case .pauseLane: return "Pause"
        case .resumeLane: return "Resume"
        case .liftHold: return "Lift hold"
        }
    }

    /// What it does, in a sentence, for the confirmation page and the audit log.
    var summary: String {
        switch self {
        case .cancelRow(let id): return "cancel notification \(id) if it is still waiting"
        case .cancelLane(let lane):
            return "cancel every waiting row of lane \(lane), and its rows that workers claimed but have not started sending; requests already sent to APNs or FCM end with their answer"
        case .pauseLane(let lane):
            return "pause lane \(lane) until it is resumed: no worker claims its rows, and rows workers claimed but have not started sending go back to waiting (attempts untouched) within seconds; requests already sent to APNs or FCM finish"
        case .resumeLane(let lane): return "resume lane \(lane)"
        case .liftHold(let credential, let environment):
            return "lift the hold of credential \(credential) (\(environment)): workers send its rows again at once"
        }
    }

    /// Its name in forms, URLs and the audit log.
    var name: String {
        switch self {
        case .cancelRow: return "cancel"
        case .cancelLane: return "cancel-lane"
        case .pauseLane: return "pause-lane"
        case .resumeLane: return "resume-lane"
        case .liftHold: return "lift-hold"
        }
    }

    /// The fields that name it, in a URL's query or a form.
    var queryItems: [(String, String)] {
        switch self {
        case .cancelRow(let id): return [("action", name), ("id", String(id))]
        case .cancelLane(let lane), .pauseLane(let lane), .resumeLane(let lane): return [("action", name), ("lane", lane)]
        case .liftHold(let credential, let environment): return [("action", name), ("credential", credential), ("environment", environment)]
        }
    }

    /// The action named by the fields of a query or form, nil when they name none.
    init?(fields: [String: String]) {
        switch fields["action"] {
        case "cancel":
            guard let id = fields["id"].flatMap({ Int64($0) }), id > 0 else { return nil }
            self = .cancelRow(id)
        case "cancel-lane", "pause-lane", "resume-lane":
            guard let lane = fields["lane"], !lane.isEmpty else { return nil }
            self = fields["action"] == "cancel-lane" ? .cancelLane(lane) : fields["action"] == "pause-lane" ? .pauseLane(lane) : .resumeLane(lane)
        case "lift-hold":
            guard let credential = fields["credential"], !credential.isEmpty, let environment = fields["environment"], !environment.isEmpty else { return nil }
            self = .liftHold(credential: credential, environment: environment)
        default:
            return nil
        }
    }
}

extension DashboardAction {
    /// The audit log's `action`: `noun.verb`.
    var auditName: String {
        switch self {
        case .cancelRow: return "notification.cancel"
        case .cancelLane: return "lane.cancel"
        case .pauseLane: return "lane.pause"
        case .resumeLane: return "lane.resume"
        case .liftHold: return "hold.lift"
        }
    }

    /// The audit log's `target`: which rows.
    var auditTarget: String {
        switch self {
        case .cancelRow(let id): return "notification \(id)"
        case .cancelLane(let lane), .pauseLane(let lane), .resumeLane(let lane): return "lane \(lane)"
        case .liftHold(let credential, let environment): return "hold \(credential) \(environment)"
        }
    }

    /// The page to go back to once done: the row's, or the overview.
    var returnPath: String {
        if case .cancelRow(let id) = self { return "\(DashboardLayout.root)/notifications/\(id)" }
        return DashboardLayout.root
    }

    /// What it did, from the word ``PGConnection/perform(_:audit:)`` returned (`done` in the URL
    /// of the page it goes back to): a fixed sentence per action and word, never the word itself.
    func doneMessage(_ done: String) -> String? {
        switch (self, done) {
        case (.cancelRow(let id), "cancelled"): return "Notification \(id) cancelled."
        case (.cancelRow(let id), "not-found"): return "There is no notification \(id)."
        case (.cancelRow(let id), let status) where status.hasPrefix("not-waiting:"):
            let now = status.dropFirst("not-waiting:".count)
            return now.allSatisfy(\.isLetter) ? "Notification \(id) was not cancelled: it is \(now) now." : nil
        case (.cancelLane(let lane), let rows): return Int(rows).map { "\($0) waiting rows of lane \(lane) cancelled." }
        case (.pauseLane(let lane), "done"): return "Lane \(lane) paused."
        case (.resumeLane(let lane), "done"): return "Lane \(lane) resumed."
        case (.liftHold(let credential, let environment), "done"): return "Hold of \(credential) (\(environment)) lifted."
        case (.liftHold(let credential, let environment), "none"): return "\(credential) (\(environment)) was not held any more."
        default: return nil
        }
    }
}
