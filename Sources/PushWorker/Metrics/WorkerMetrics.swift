import CoreMetrics
import PushCore
import PushStore
import Synchronization
import PGClient

/// The worker's metrics, recorded through swift-metrics into the factory it is given.
///
/// The worker calls it once per batch (claimed, answered, written), never per notification
/// except for the request-duration histogram; labelled counters are created on first use and
/// kept, so a batch costs a few lock/increment pairs. Counters of the senders (connections,
/// GOAWAYs, reopens, token refreshes) are sampled from `PushSender.stats()` at most once a
/// second (`WorkerMetrics+Senders.swift`). Names and help texts are in ``catalog``.
///
/// Metrics about providers carry a `provider` label (`apns`, `fcm`). The `pushq_apns_*` names
/// they had before FCM came are still exported, as deprecated copies counting exactly what
/// they counted (both providers, without the label), for one release.
///
/// Disabled (``init()``), every call returns at once: a worker without `PUSHQ_HTTP_ADDR`
/// pays nothing.
public final class WorkerMetrics: Sendable {
    /// Whether anything is recorded.
    public let isEnabled: Bool
    let factory: any MetricsFactory
    private let retryCounters: [String: Counter]
    /// `pushq_request_duration_seconds` by provider, and its deprecated copy over both.
    let requestDurations: [Provider: CoreMetrics.Timer]
    let deprecatedRequestDuration: CoreMetrics.Timer
    private let claimBatch: Recorder
    private let claimDuration: CoreMetrics.Timer
    private let writeDuration: CoreMetrics.Timer
    /// `pushq_requests_in_flight` and `pushq_connections_open` by provider, and their deprecated copies.
    let inFlight: [Provider: Gauge]
    let openConnections: [Provider: Gauge]
    let deprecatedInFlight: Gauge
    let deprecatedOpenConnections: Gauge
    let state = Mutex(State())

    struct FinishedKey: Hashable {
        var outcome: Disposition.Status
        var reason: String
        var endpoint: Endpoint
    }

    /// The labels of `pushq_requests_total`: the endpoint and the status (0: no answer).
    struct RequestKey: Hashable {
        var endpoint: Endpoint
        var status: Int
    }

    /// Sender totals last seen, to turn them into counter increments.
    struct SenderTotals {
        var goaways = 0, reopens = 0
    }

    /// A counter of the new name and its deprecated copy, incremented together.
    struct Pair {
        var counter: Counter
        /// The deprecated copy; nil where there is none (Web Push's token refreshes).
        var deprecated: Counter?

        func increment(by n: Int) {
            counter.increment(by: n)
            deprecated?.increment(by: n)
        }
    }

    /// Whose bearer tokens are counted: a credential of a provider.
    struct TokenSource: Hashable {
        var provider: Provider
        var credential: String
    }

    /// A credential's bearer-token refreshes: its counters and the issuer's count last seen.
    struct Refreshes {
        var counters: Pair
        var seen: Int
    }

    struct State {
        var finished: [FinishedKey: Counter] = [:]
        var requests: [RequestKey: Counter] = [:]
        var deprecatedRequests: [Int: Counter] = [:]
        var invalidations: [String: Counter] = [:]
        var goaways: [Endpoint: Pair] = [:]
        var reopens: [Endpoint: Pair] = [:]
        var tokenRefreshes: [TokenSource: Refreshes] = [:]
        var senderTotals: [Endpoint: SenderTotals] = [:]
        var holdGauges: [Endpoint: (paused: Gauge, down: Gauge)] = [:]
        /// The endpoints this worker serves: the only credentials that become labels.
        var served: Set<Endpoint> = []
        var queue: (due: Gauge, oldest: Gauge)?
        /// The lanes of `pushq.lanes`, last read: the only lanes that become labels.
        var namedLanes: Set<String> = []
        var laneSent: [String: Counter] = [:]
        var laneGauges: [String: LaneSeries] = [:]
        var channelRequests: [ChannelRequestKey: Counter] = [:]
        var channelGauges: [String: Gauge] = [:]
        var unknownChannelGauges: [Endpoint: Gauge] = [:]
    }

    /// Records nothing.
    public convenience init() {
        self.init(factory: NOOPMetricsHandler.instance, enabled: false)
    }

    /// Records into `factory` (the pushq executable's Prometheus registry).
    public convenience init(factory: any MetricsFactory) {
        self.init(factory: factory, enabled: true)
    }

    private init(factory: any MetricsFactory, enabled: Bool) {
        self.isEnabled = enabled
        self.factory = factory
        retryCounters = Dictionary(uniqueKeysWithValues: Outcome.retryLabels.map {
            ($0, Counter(label: Catalog.retries.name, dimensions: [("kind", $0)], factory: factory))
        })
        func byProvider<M>(_ make: (Provider) -> M) -> [Provider: M] {
            Dictionary(uniqueKeysWithValues: Provider.allCases.map { ($0, make($0)) })
        }
        requestDurations = byProvider {
            CoreMetrics.Timer(label: Catalog.requestDuration.name, dimensions: [("provider", $0.rawValue)], factory: factory)
        }
        deprecatedRequestDuration = CoreMetrics.Timer(label: Catalog.Deprecated.requestDuration.name, dimensions: [], factory: factory)
        claimBatch = Recorder(label: Catalog.claimBatch.name, dimensions: [], aggregate: true, factory: factory)
        claimDuration = CoreMetrics.Timer(label: Catalog.claimDuration.name, dimensions: [], factory: factory)
        writeDuration = CoreMetrics.Timer(label: Catalog.writeDuration.name, dimensions: [], factory: factory)
        inFlight = byProvider { Gauge(label: Catalog.inFlight.name, dimensions: [("provider", $0.rawValue)], factory: factory) }
        openConnections = byProvider { Gauge(label: Catalog.openConnections.name, dimensions: [("provider", $0.rawValue)], factory: factory) }
        deprecatedInFlight = Gauge(label: Catalog.Deprecated.inFlight.name, dimensions: [], factory: factory)
        deprecatedOpenConnections = Gauge(label: Catalog.Deprecated.openConnections.name, dimensions: [], factory: factory)
        if enabled {
            for gauge in Array(inFlight.values) + Array(openConnections.values) + [deprecatedInFlight, deprecatedOpenConnections] {
                gauge.record(0)
            }
        }
    }

    /// One claim statement: its rows and how long it took.
    func claimed(rows: Int, nanoseconds: Int64) {
        guard isEnabled else { return }
        claimBatch.record(rows)
        claimDuration.recordNanoseconds(nanoseconds)
    }

    /// One batch written back: its outcomes and how long the write took.
    func wrote(_ tally: Tally, nanoseconds: Int64) {
        guard isEnabled else { return }
        writeDuration.recordNanoseconds(nanoseconds)
        add(tally)
    }

    /// Rows a claim statement ended itself (`expires_at` passed, token invalid, attempts used
    /// up): finished like answered rows, with the `last_reason` the claim left.
    func endedByClaim(_ rows: [ClaimedNotification]) {
        guard isEnabled else { return }
        var tally = Tally()
        for row in rows {
            let outcome: Disposition.Status
            switch row.verdict {
            case .expired: outcome = .expired
            case .tokenInvalidated, .exhausted: outcome = .failed
            // A row over its recipient's cap ends `cancelled`, as a producer's cancel does: not an outcome.
            case .send, .throttled, .unreadable, .capped: continue
            }
            let endpoint = Endpoint(credential: row.credential, environment: row.environment, provider: row.provider)
            tally.finished[FinishedKey(outcome: outcome, reason: row.lastReason ?? "", endpoint: endpoint), default: 0] += 1
        }
        if !tally.finished.isEmpty { add(tally) }
    }

    /// Waiting rows the upkeep ended `expired` (``PGConnection/expireWaiting(limit:)``).
    func expired(_ groups: [PGConnection.ExpiredRows], defaultEnvironment: APNsEnvironment) {
        guard isEnabled, !groups.isEmpty else { return }
        var tally = Tally()
        for g in groups {
            let endpoint = g.environment.flatMap { Endpoint(credential: g.credential, channel: $0) }
                ?? Endpoint(credential: g.credential, environment: defaultEnvironment)
            let key = FinishedKey(outcome: .expired, reason: g.lastReason ?? "", endpoint: endpoint)
            tally.finished[key, default: 0] += g.rows
        }
        add(tally)
    }

    private func add(_ tally: Tally) {
        var counters: [(Counter, Int)] = []
        state.withLock { s in
            for (raw, n) in tally.finished where n > 0 {
                // Rows of any credential and last_reason reach here (the upkeep expires them all):
                // labels come from closed sets only.
                // A Web Push endpoint's origin is a subscriber's choice: never a label.
                var key = raw
                key.endpoint = raw.endpoint.withoutOrigin
                key.reason = MetricLabel.reason(raw.reason)
                if !s.served.contains(key.endpoint) {
                    key.endpoint = Endpoint(credential: MetricLabel.other, channel: key.endpoint.channel) ?? key.endpoint
                }
                let counter = Self.counter(&s.finished, key, make: Counter(label: Catalog.finished.name, dimensions: [
                    ("outcome", key.outcome.rawValue), ("reason", key.reason),
                    ("credential", key.endpoint.credential), ("environment", key.endpoint.metricEnvironment)], factory: factory))
                counters.append((counter, n))
            }
            for (raw, n) in tally.requests where n > 0 {
                var key = raw
                key.endpoint = raw.endpoint.withoutOrigin
                let status = key.status == 0 ? "none" : String(key.status)
                counters.append((Self.counter(&s.requests, key, make: Counter(label: Catalog.requests.name, dimensions: [
                    ("provider", key.endpoint.provider.rawValue), ("credential", key.endpoint.credential),
                    ("environment", key.endpoint.metricEnvironment), ("status", status)], factory: factory)), n))
                counters.append((Self.counter(&s.deprecatedRequests, key.status, make: Counter(
                    label: Catalog.Deprecated.requests.name, dimensions: [("status", status)], factory: factory)), n))
            }
            counters += laneSentCounters(tally.sentByLane, &s)
            for (reason, n) in tally.invalidations where n > 0 {
                counters.append((Self.counter(&s.invalidations, reason, make: Counter(
                    label: Catalog.invalidations.name, dimensions: [("reason", reason)], factory: factory)), n))
            }
        }
        for (counter, n) in counters { counter.increment(by: n) }
        for (kind, n) in tally.retries where n > 0 { retryCounters[kind]?.increment(by: n) }
    }

    /// The counter of `key` in `cache`, made on first use.
    static func counter<Key: Hashable>(_ cache: inout [Key: Counter], _ key: Key, make: @autoclosure () -> Counter) -> Counter {
        if let counter = cache[key] { return counter }
        let counter = make()
        cache[key] = counter
        return counter
    }
}
