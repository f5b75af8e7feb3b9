import Foundation
import PushCore
import PushStore

/// `pushq status --json` and `GET /api/v1/status`: the same figures as `pushq status`'s text, with
/// snake_case keys (docs/status.md, "`pushq status`").
public struct StatusJSON: Encodable, Sendable {
    struct Holder: Encodable, Sendable { var worker: String; var rows: Int; var lapsed_leases: Int }
    struct Reason: Encodable, Sendable { var status: String; var reason: String; var rows: Int }
    struct Invalid: Encodable, Sendable { var reason: String; var tokens: Int }
    struct Hold: Encodable, Sendable {
        var credential: String; var environment: String; var kind: String; var reason: String
        var message: String; var probe_due: Bool; var next_probe_seconds: Int
        /// `apns`, `fcm` or `webpush`; a Web Push hold's `origin` (its `environment`), null for the others.
        var provider: String; var origin: String?
        enum CodingKeys: CodingKey { case credential, environment, kind, reason, message, probe_due, next_probe_seconds, provider, origin }
        /// `origin` is null, not left out, when the hold has none.
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(credential, forKey: .credential)
            try c.encode(environment, forKey: .environment)
            try c.encode(kind, forKey: .kind)
            try c.encode(reason, forKey: .reason)
            try c.encode(message, forKey: .message)
            try c.encode(probe_due, forKey: .probe_due)
            try c.encode(next_probe_seconds, forKey: .next_probe_seconds)
            try c.encode(provider, forKey: .provider)
            try c.encode(origin, forKey: .origin)
        }
    }
    struct Served: Encodable, Sendable {
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
    struct Worker: Encodable, Sendable {
        var id: String; var host: String; var pid: Int; var version: String
        var up_seconds: Int; var heartbeat_age_seconds: Double; var credentials: [Served]
    }
    struct Orphans: Encodable, Sendable { var credential: String; var rows: Int }
    struct Lane: Encodable, Sendable {
        var name: String; var configured: Bool; var rank: Int; var max_per_second: Nullable<Double>; var paused: Bool
        var due_rows: Int; var oldest_due_seconds: Double; var sent_per_second: Double
        /// Rows waiting for the lane's quiet hours to end (not due), and the hours (null: none).
        var quiet_rows: Int; var quiet_hours: Nullable<String>
    }
    /// An optional value encoded as null, not left out, when it is nil.
    struct Nullable<Value: Encodable & Sendable>: Encodable, Sendable {
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
    /// Each provider with rows: its rows by status (the seven statuses, as `counts`).
    var providers: [String: [String: Int]]

    enum CodingKeys: CodingKey {
        case counts, final_counts_exact, oldest_due_seconds, held_by_workers, failure_window_minutes
        case failure_reasons, invalid_tokens, holds, workers, rows_without_worker, lanes, channels, providers
    }

    /// Every key is always present: `oldest_due_seconds` is null when nothing waits.
    public func encode(to encoder: any Encoder) throws {
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
        try c.encode(providers, forKey: .providers)
    }

    public init(_ s: QueueStatus, minutes: Int) {
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
                 next_probe_seconds: max(0, Int(h.nextProbe.timeIntervalSinceNow.rounded(.up))),
                 provider: h.held.endpoint.provider.rawValue, origin: h.held.endpoint.origin?.description)
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
                 sent_per_second: (l.sentPerSecond * 100).rounded() / 100,
                 quiet_rows: l.gauges.quietRows, quiet_hours: Nullable(value: l.gauges.quietHours))
        }
        channels = Channels(s.channels)
        providers = Dictionary(s.providers.map { ($0.provider.rawValue, $0.counts) }, uniquingKeysWith: { a, _ in a })
    }
}
