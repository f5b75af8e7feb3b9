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
        var provider: String; var origin: Nullable<String>
    }
    struct Served: Encodable, Sendable {
        /// `topic` is null when the credential has none.
        var name: String; var environment: String; var topic: Nullable<String>; var provider: String
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
        /// Rows waiting until their recipient's frequency cap has room (not due), and the cap (null: none).
        var capped_rows: Int; var recipient_cap: Nullable<Cap>
    }
    /// A lane's frequency cap per recipient: `cap` rows in any `window_seconds`; `over_cap` `skip` or `defer`.
    struct Cap: Encodable, Sendable { var cap: Int; var window_seconds: Double; var over_cap: String }
    /// An optional value encoded as null, not left out, when it is nil: every key of the JSON is
    /// always present.
    struct Nullable<Value: Encodable & Sendable>: Encodable, Sendable {
        var value: Value?
        func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            if let value { try c.encode(value) } else { try c.encodeNil() }
        }
    }

    var counts: [String: Int]
    var final_counts_exact: Bool
    /// null when nothing waits.
    var oldest_due_seconds: Nullable<Int>
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

    public init(_ s: QueueStatus, minutes: Int) {
        counts = s.counts
        final_counts_exact = s.finalCountsExact
        oldest_due_seconds = Nullable(value: s.oldestDueSeconds)
        held_by_workers = s.holders.map { Holder(worker: $0.worker, rows: $0.rows, lapsed_leases: $0.lapsed) }
        failure_window_minutes = minutes
        failure_reasons = s.reasons.map { Reason(status: $0.status, reason: $0.reason, rows: $0.rows) }
        invalid_tokens = s.invalidTokens.map { Invalid(reason: $0.reason, tokens: $0.tokens) }
        holds = s.holds.map { (h: HoldReport) -> Hold in
            Hold(credential: h.held.endpoint.credential, environment: h.held.endpoint.channel, kind: h.held.kind.rawValue,
                 reason: h.held.reason, message: h.message, probe_due: h.held.probeDue,
                 next_probe_seconds: max(0, Int(h.nextProbe.timeIntervalSinceNow.rounded(.up))),
                 provider: h.held.endpoint.provider.rawValue, origin: Nullable(value: h.held.endpoint.origin?.description))
        }
        workers = s.workers.map { (w: WorkerRecord) -> Worker in
            let served: [Served] = w.credentials.map { Served(name: $0.name, environment: $0.environment, topic: Nullable(value: $0.topic), provider: $0.provider ?? "apns") }
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
                 quiet_rows: l.gauges.quietRows, quiet_hours: Nullable(value: l.gauges.quietHours),
                 capped_rows: l.gauges.cappedRows,
                 recipient_cap: Nullable(value: l.gauges.recipientCap.map { Cap(cap: $0.cap, window_seconds: $0.windowSeconds, over_cap: $0.overCap) }))
        }
        channels = Channels(s.channels)
        providers = Dictionary(s.providers.map { ($0.provider.rawValue, $0.counts) }, uniquingKeysWith: { a, _ in a })
    }
}
