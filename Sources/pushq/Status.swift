import ArgumentParser
import Foundation
import PushStore

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the queue: counts per status, oldest waiting row, lanes, recent failures, invalid tokens, paused credentials, endpoints down, live workers.",
        discussion: """
            Reads indexes only, never the whole table: rows that are not final are counted exactly, \
            final rows exactly up to 100000 and estimated above that (shown with ~). \
            --json prints one JSON object for scripts.
            """
    )

    @OptionGroup var database: DatabaseOptions

    @Option(help: "How far back 'recent' failure reasons go, in minutes.") var minutes = 60
    @Flag(help: "Print one JSON object instead of text.") var json = false

    func run() async throws {
        let settings = database.settings()
        let logger = try settings.logger(label: "pushq.status")
        let c = try await PGConnection.connect(try settings.databaseURL(), logger: logger)
        let status = try await c.closing { try await $0.queueStatus(failureMinutes: minutes) }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(StatusJSON(status, minutes: minutes)), as: UTF8.self))
        } else {
            printText(status)
        }
    }

    private func printText(_ s: QueueStatus) {
        print("notifications by status" + (s.finalCountsExact ? "" : " (~ estimated)"))
        for name in QueueStatus.statuses {
            let estimated = !s.finalCountsExact && !["queued", "sending", "retrying"].contains(name)
            print("  " + pad(name, 10) + (estimated ? "~" : "") + "\(s.counts[name, default: 0])")
        }
        print("oldest due row waiting: " + (s.oldestDueSeconds.map { "\($0) s" } ?? "none waiting"))
        printLanes(s.lanes)
        if !s.holders.isEmpty {
            print("rows held by workers")
            for h in s.holders {
                print("  " + pad(h.worker, 30) + "\(h.rows)" + (h.lapsed == 0 ? "" : " (\(h.lapsed) with lapsed lease)"))
            }
        }
        print("failure reasons, last \(minutes) min" + (s.reasons.isEmpty ? ": none" : ""))
        for r in s.reasons { print("  " + pad(r.status, 10) + pad(r.reason, 28) + "\(r.rows)") }
        print("invalid tokens" + (s.invalidTokens.isEmpty ? ": none" : ""))
        for t in s.invalidTokens { print("  " + pad(t.reason, 16) + "\(t.tokens)") }
        let pauses = s.holds.filter { $0.held.kind != .outage }
        let outages = s.holds.filter { $0.held.kind == .outage }
        print("paused credentials" + (pauses.isEmpty ? ": none" : ""))
        for h in pauses { print("  " + describe(h)) }
        print("endpoints down" + (outages.isEmpty ? ": none" : ""))
        for h in outages { print("  " + describe(h)) }
        print("live workers" + (s.workers.isEmpty ? ": none" : ""))
        for w in s.workers {
            let apns = w.credentials.filter { $0.provider != "fcm" }
            let fcm = w.credentials.filter { $0.provider == "fcm" }
            let served = apns.map { c in c.name + (c.topic.map { " (\($0))" } ?? "") } + fcm.map { $0.name + " (FCM)" }
            print("  \(w.id)  pushq \(w.version), up \(Int(-w.startedAt.timeIntervalSinceNow)) s, beat \(Int(w.heartbeatAge)) s ago, default environment \(apns.first?.environment ?? "none"), credentials: \(served.joined(separator: ", "))")
        }
        print("waiting for a credential no live worker serves" + (s.rowsWithoutWorker.isEmpty ? ": none" : ""))
        for o in s.rowsWithoutWorker {
            print("  " + pad(o.credential, 16) + "\(o.rows) (they expire at their expires_at; start a worker with this credential)")
        }
        printChannels(s.channels)
    }

    /// One line per lane: rank, cap, pause, due rows, oldest due age, send rate.
    private func printLanes(_ lanes: [LaneStatus]) {
        print("lanes (due rows, oldest due, sent per second over the last \(QueueStatus.sendRateSeconds) s)")
        for l in lanes {
            let g = l.gauges
            let cap = g.maxPerSecond.map { "cap \(Self.figure($0))/s" } ?? "no cap"
            let due = g.dueRows >= PGConnection.dueRowsCountLimit ? "\(g.dueRows)+" : "\(g.dueRows)"
            let setting: String
            if g.configured {
                let rank = pad("rank \(g.rank)", 10)
                setting = rank + pad(cap, 16) + (g.paused ? "PAUSED  " : "        ")
            } else {
                setting = pad("no row in pushq.lanes: like default", 34)
            }
            let oldest = pad("oldest \(Int(g.oldestDueAgeSeconds.rounded())) s", 16)
            let figures: String = pad("due \(due)", 14) + oldest + Self.figure(l.sentPerSecond) + "/s"
            print("  " + pad(g.name, 16) + setting + figures)
        }
    }

    /// A rate or cap: whole above 10, one decimal below.
    static func figure(_ x: Double) -> String {
        x >= 10 ? String(Int(x.rounded())) : String((x * 10).rounded() / 10)
    }

    private func describe(_ h: HoldReport) -> String {
        let left = max(0, Int(h.nextProbe.timeIntervalSinceNow.rounded(.up)))
        let probe = h.held.probeDue ? "probe due" : "next probe in \(left) s"
        return "\(h.held.endpoint.credential) (\(h.held.endpoint.channel)): \(h.held.reason), \(probe) — \(h.message)"
    }

    func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
    }
}

/// `pushq status --json`: the same figures as the text, with snake_case keys (docs/operations.md, "Status").
struct StatusJSON: Encodable {
    struct Holder: Encodable { var worker: String; var rows: Int; var lapsed_leases: Int }
    struct Reason: Encodable { var status: String; var reason: String; var rows: Int }
    struct Invalid: Encodable { var reason: String; var tokens: Int }
    struct Hold: Encodable {
        var credential: String; var environment: String; var kind: String; var reason: String
        var message: String; var probe_due: Bool; var next_probe_seconds: Int
    }
    struct Served: Encodable {
        var name: String; var environment: String; var topic: String?; var provider: String
        enum CodingKeys: CodingKey { case name, environment, topic, provider }
        /// `topic` is null, not left out, when the credential has none.
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(name, forKey: .name)
            try c.encode(environment, forKey: .environment)
            try c.encode(topic, forKey: .topic)
            try c.encode(provider, forKey: .provider)
        }
    }
    struct Worker: Encodable {
        var id: String; var host: String; var pid: Int; var version: String
        var up_seconds: Int; var heartbeat_age_seconds: Double; var credentials: [Served]
    }
    struct Orphans: Encodable { var credential: String; var rows: Int }
    struct Lane: Encodable {
        var name: String; var configured: Bool; var rank: Int; var max_per_second: Nullable<Double>; var paused: Bool
        var due_rows: Int; var oldest_due_seconds: Double; var sent_per_second: Double
    }
    /// An optional value encoded as null, not left out, when it is nil.
    struct Nullable<Value: Encodable>: Encodable {
        var value: Value?
        func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            if let value { try c.encode(value) } else { try c.encodeNil() }
        }
    }

    var counts: [String: Int]
    var final_counts_exact: Bool
    var oldest_due_seconds: Int?
    var held_by_workers: [Holder]
    var failure_window_minutes: Int
    var failure_reasons: [Reason]
    var invalid_tokens: [Invalid]
    var holds: [Hold]
    var workers: [Worker]
    var rows_without_worker: [Orphans]
    var lanes: [Lane]
    var channels: Channels

    enum CodingKeys: CodingKey {
        case counts, final_counts_exact, oldest_due_seconds, held_by_workers, failure_window_minutes
        case failure_reasons, invalid_tokens, holds, workers, rows_without_worker, lanes, channels
    }

    /// Every key is always present: `oldest_due_seconds` is null when nothing waits.
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(counts, forKey: .counts)
        try c.encode(final_counts_exact, forKey: .final_counts_exact)
        try c.encode(oldest_due_seconds, forKey: .oldest_due_seconds)
        try c.encode(held_by_workers, forKey: .held_by_workers)
        try c.encode(failure_window_minutes, forKey: .failure_window_minutes)
        try c.encode(failure_reasons, forKey: .failure_reasons)
        try c.encode(invalid_tokens, forKey: .invalid_tokens)
        try c.encode(holds, forKey: .holds)
        try c.encode(workers, forKey: .workers)
        try c.encode(rows_without_worker, forKey: .rows_without_worker)
        try c.encode(lanes, forKey: .lanes)
        try c.encode(channels, forKey: .channels)
    }

    init(_ s: QueueStatus, minutes: Int) {
        counts = s.counts
        final_counts_exact = s.finalCountsExact
        oldest_due_seconds = s.oldestDueSeconds
        held_by_workers = s.holders.map { Holder(worker: $0.worker, rows: $0.rows, lapsed_leases: $0.lapsed) }
        failure_window_minutes = minutes
        failure_reasons = s.reasons.map { Reason(status: $0.status, reason: $0.reason, rows: $0.rows) }
        invalid_tokens = s.invalidTokens.map { Invalid(reason: $0.reason, tokens: $0.tokens) }
        holds = s.holds.map { (h: HoldReport) -> Hold in
            Hold(credential: h.held.endpoint.credential, environment: h.held.endpoint.channel, kind: h.held.kind.rawValue,
                 reason: h.held.reason, message: h.message, probe_due: h.held.probeDue,
                 next_probe_seconds: max(0, Int(h.nextProbe.timeIntervalSinceNow.rounded(.up))))
        }
        workers = s.workers.map { (w: WorkerRecord) -> Worker in
            let served: [Served] = w.credentials.map { Served(name: $0.name, environment: $0.environment, topic: $0.topic, provider: $0.provider ?? "apns") }
            let up = Int(-w.startedAt.timeIntervalSinceNow)
            let age: Double = (w.heartbeatAge * 10).rounded() / 10
            return Worker(id: w.id, host: w.host, pid: w.pid, version: w.version, up_seconds: up,
                          heartbeat_age_seconds: age, credentials: served)
        }
        rows_without_worker = s.rowsWithoutWorker.map { Orphans(credential: $0.credential, rows: $0.rows) }
        lanes = s.lanes.map { (l: LaneStatus) -> Lane in
            Lane(name: l.gauges.name, configured: l.gauges.configured, rank: l.gauges.rank, max_per_second: Nullable(value: l.gauges.maxPerSecond),
                 paused: l.gauges.paused, due_rows: l.gauges.dueRows, oldest_due_seconds: (l.gauges.oldestDueAgeSeconds * 10).rounded() / 10,
                 sent_per_second: (l.sentPerSecond * 100).rounded() / 100)
        }
        channels = Channels(s.channels)
    }
}
