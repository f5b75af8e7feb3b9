import ArgumentParser
import Foundation
import PushStore

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the queue: counts per status, oldest waiting row, recent failures, invalid tokens, paused credentials, endpoints down, live workers."
    )

    @OptionGroup var database: DatabaseOptions

    @Option(help: "How far back 'recent' failure reasons go, in minutes.") var minutes = 60

    func run() async throws {
        let logger = database.makeLogger(label: "pushq.status")
        let c = try await PGConnection.connect(try database.resolvedURL(), logger: logger)
        try await c.closing { try await report($0) }
    }

    /// Prints the report from `c`.
    private func report(_ c: PGConnection) async throws {

        let counts = try await c.query("""
            SELECT s.status, COALESCE(n.count, 0) AS count
              FROM unnest(ARRAY['queued','sending','retrying','sent','failed','expired','cancelled']) WITH ORDINALITY AS s(status, i)
              LEFT JOIN (SELECT status, count(*) FROM pushq.notifications GROUP BY status) n USING (status)
             ORDER BY s.i
            """)
        print("notifications by status")
        for i in 0..<counts.count {
            print("  " + pad(counts.string(i, 0) ?? "", 10) + (counts.string(i, 1) ?? "0"))
        }
        let oldest = try await c.query("""
            SELECT round(extract(epoch FROM now() - min(scheduled_at)))::bigint
              FROM pushq.notifications WHERE status IN ('queued', 'retrying') AND scheduled_at <= now()
            """)
        if let age = try oldest.decode(Int64.self, 0, 0) {
            print("oldest due row waiting: \(age) s")
        } else {
            print("oldest due row waiting: none waiting")
        }
        let holders = try await c.query("""
            SELECT locked_by, count(*), sum(CASE WHEN locked_until < now() THEN 1 ELSE 0 END)
              FROM pushq.notifications WHERE status = 'sending' GROUP BY locked_by ORDER BY 2 DESC LIMIT 10
            """)
        if holders.count > 0 {
            print("rows held by workers")
            for i in 0..<holders.count {
                let lapsed = holders.string(i, 2) ?? "0"
                print("  " + pad(holders.string(i, 0) ?? "?", 30) + (holders.string(i, 1) ?? "0") + (lapsed == "0" ? "" : " (\(lapsed) with lapsed lease)"))
            }
        }
        let reasons = try await c.query("""
            SELECT status, last_reason, count(*)
              FROM pushq.notifications
             WHERE status IN ('failed', 'retrying') AND last_reason IS NOT NULL
               AND COALESCE(finished_at, scheduled_at) > now() - $1 * interval '1 minute'
             GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 15
            """, [minutes])
        print("failure reasons, last \(minutes) min" + (reasons.count == 0 ? ": none" : ""))
        for i in 0..<reasons.count {
            print("  " + pad(reasons.string(i, 0) ?? "", 10) + pad(reasons.string(i, 1) ?? "", 28) + (reasons.string(i, 2) ?? ""))
        }
        let invalid = try await c.query("""
            SELECT invalid_reason, count(*) FROM pushq.devices
             WHERE pushq.token_is_invalid(registered_at, invalidated_at) GROUP BY 1 ORDER BY 2 DESC
            """)
        print("invalid tokens" + (invalid.count == 0 ? ": none" : ""))
        for i in 0..<invalid.count {
            print("  " + pad(invalid.string(i, 0) ?? "", 16) + (invalid.string(i, 1) ?? ""))
        }
        let holds = try await c.holdReports()
        let pauses = holds.filter { $0.held.kind != .outage }
        let outages = holds.filter { $0.held.kind == .outage }
        print("paused credentials" + (pauses.isEmpty ? ": none" : ""))
        for h in pauses { print("  " + describe(h)) }
        print("endpoints down" + (outages.isEmpty ? ": none" : ""))
        for h in outages { print("  " + describe(h)) }
        let workers = try await c.liveWorkers()
        print("live workers" + (workers.isEmpty ? ": none" : ""))
        for w in workers {
            let served = w.credentials.map { c in c.name + (c.topic.map { " (\($0))" } ?? "") }.joined(separator: ", ")
            print("  \(w.id)  pushq \(w.version), up \(Int(-w.startedAt.timeIntervalSinceNow)) s, beat \(Int(w.heartbeatAge)) s ago, default environment \(w.credentials.first?.environment ?? "?"), credentials: \(served)")
        }
        let orphans = try await c.rowsWithoutWorker()
        print("waiting for a credential no live worker serves" + (orphans.isEmpty ? ": none" : ""))
        for o in orphans {
            print("  " + pad(o.credential, 16) + "\(o.rows) (they expire at their expires_at; start a worker with this credential)")
        }
    }

    private func describe(_ h: HoldReport) -> String {
        let left = max(0, Int(h.nextProbe.timeIntervalSinceNow.rounded(.up)))
        let probe = h.held.probeDue ? "probe due" : "next probe in \(left) s"
        return "\(h.held.endpoint.credential) (\(h.held.endpoint.environment.rawValue)): \(h.held.reason), \(probe) — \(h.message)"
    }

    private func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
    }
}
