import PushTransport
import CoreMetrics
import PushCore
import PushStore
import Synchronization

/// The worker's metrics, recorded through swift-metrics into the factory it is given.
///
/// The worker calls it once per batch (claimed, answered, written), never per notification
/// except for the request-duration histogram; labelled counters are created on first use and
/// kept, so a batch costs a few lock/increment pairs. Counters of the senders (connections,
/// GOAWAYs, reopens, token refreshes) are sampled from ``APNsSender/stats()`` at most once a
/// second. Names and help texts are in ``catalog``.
///
/// Disabled (``init()``), every call returns at once: a worker without `PUSHQ_HTTP_ADDR`
/// pays nothing.
public final class WorkerMetrics: Sendable {
    /// Whether anything is recorded.
    public let isEnabled: Bool
    private let factory: any MetricsFactory
    private let retryCounters: [String: Counter]
    private let requestDuration: CoreMetrics.Timer
    private let claimBatch: Recorder
    private let claimDuration: CoreMetrics.Timer
    private let writeDuration: CoreMetrics.Timer
    private let inFlight: Gauge
    private let openConnections: Gauge
    private let state = Mutex(State())

    struct FinishedKey: Hashable {
        var outcome: Disposition.Status
        var reason: String
        var endpoint: Endpoint
    }

    /// Sender totals last seen, to turn them into counter increments.
    struct SenderTotals {
        var goaways = 0, reopens = 0
    }

    struct State {
        var finished: [FinishedKey: Counter] = [:]
        var requests: [Int: Counter] = [:]
        var invalidations: [String: Counter] = [:]
        var goaways: [Endpoint: Counter] = [:]
        var reopens: [Endpoint: Counter] = [:]
        var tokenRefreshes: [String: (counter: Counter, seen: Int)] = [:]
        var fcmTokenRefreshes: [String: (counter: Counter, seen: Int)] = [:]
        var senderTotals: [Endpoint: SenderTotals] = [:]
        var holdGauges: [Endpoint: (paused: Gauge, down: Gauge)] = [:]
        /// The endpoints this worker serves: the only credentials that become labels.
        var served: Set<Endpoint> = []
        var queue: (due: Gauge, oldest: Gauge)?
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
        let kinds = ["transport", "server_error", "too_many_requests", "idle_timeout", "unknown_reason", "connection", "held"]
        retryCounters = Dictionary(uniqueKeysWithValues: kinds.map {
            ($0, Counter(label: Catalog.retries.name, dimensions: [("kind", $0)], factory: factory))
        })
        requestDuration = CoreMetrics.Timer(label: Catalog.requestDuration.name, dimensions: [], factory: factory)
        claimBatch = Recorder(label: Catalog.claimBatch.name, dimensions: [], aggregate: true, factory: factory)
        claimDuration = CoreMetrics.Timer(label: Catalog.claimDuration.name, dimensions: [], factory: factory)
        writeDuration = CoreMetrics.Timer(label: Catalog.writeDuration.name, dimensions: [], factory: factory)
        inFlight = Gauge(label: Catalog.inFlight.name, dimensions: [], factory: factory)
        openConnections = Gauge(label: Catalog.openConnections.name, dimensions: [], factory: factory)
        if enabled {
            inFlight.record(0)
            openConnections.record(0)
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
    func endedByClaim(_ rows: [ClaimedRow]) {
        guard isEnabled else { return }
        var tally = Tally()
        for row in rows {
            let outcome: Disposition.Status
            switch row.verdict {
            case .expired: outcome = .expired
            case .tokenInvalidated, .exhausted: outcome = .failed
            case .send, .throttled, .unreadable: continue
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
                var key = raw
                key.reason = MetricLabel.reason(raw.reason)
                if !s.served.contains(raw.endpoint) {
                    key.endpoint = Endpoint(credential: MetricLabel.other, channel: raw.endpoint.channel) ?? raw.endpoint
                }
                let counter = s.finished[key] ?? {
                    let c = Counter(label: Catalog.finished.name, dimensions: [
                        ("outcome", key.outcome.rawValue), ("reason", key.reason),
                        ("credential", key.endpoint.credential), ("environment", key.endpoint.channel)], factory: factory)
                    s.finished[key] = c
                    return c
                }()
                counters.append((counter, n))
            }
            for (status, n) in tally.statuses {
                let counter = s.requests[status] ?? {
                    let c = Counter(label: Catalog.requests.name, dimensions: [("status", status == 0 ? "none" : String(status))], factory: factory)
                    s.requests[status] = c
                    return c
                }()
                counters.append((counter, n))
            }
            for (reason, n) in tally.invalidations where n > 0 {
                let counter = s.invalidations[reason] ?? {
                    let c = Counter(label: Catalog.invalidations.name, dimensions: [("reason", reason)], factory: factory)
                    s.invalidations[reason] = c
                    return c
                }()
                counters.append((counter, n))
            }
        }
        for (counter, n) in counters { counter.increment(by: n) }
        for (kind, n) in tally.retries where n > 0 { retryCounters[kind]?.increment(by: n) }
    }

    /// One answer's duration (the only per-notification call: a histogram needs each value).
    func answered(nanoseconds: Int64) {
        guard isEnabled, nanoseconds > 0 else { return }
        requestDuration.recordNanoseconds(nanoseconds)
    }

    /// The senders' connection counters and gauges, the token managers' signing counts and the
    /// FCM credentials' token exchanges.
    func sample(_ senders: [Endpoint: APNsSender], tokenManagers: [String: ProviderTokenManager],
                fcmTokens: [String: FCMAccessTokenProvider] = [:]) {
        guard isEnabled else { return }
        var open = 0, flying = 0
        var increments: [(Counter, Int)] = []
        state.withLock { s in
            for (endpoint, sender) in senders {
                let stats = sender.stats()
                open += stats.openConnections
                flying += stats.inFlight
                let last = s.senderTotals[endpoint] ?? SenderTotals()
                s.senderTotals[endpoint] = SenderTotals(goaways: stats.connectionsEndedByServer, reopens: stats.reopens)
                let dims = [("credential", endpoint.credential), ("environment", endpoint.channel)]
                let goaways = s.goaways[endpoint] ?? Counter(label: Catalog.goaways.name, dimensions: dims, factory: factory)
                let reopens = s.reopens[endpoint] ?? Counter(label: Catalog.reopens.name, dimensions: dims, factory: factory)
                s.goaways[endpoint] = goaways
                s.reopens[endpoint] = reopens
                increments.append((goaways, stats.connectionsEndedByServer - last.goaways))
                increments.append((reopens, stats.reopens - last.reopens))
            }
            for (name, manager) in tokenManagers {
                let entry = s.tokenRefreshes[name] ?? (Counter(label: Catalog.tokenRefreshes.name, dimensions: [("credential", name)], factory: factory), 0)
                let minted = manager.mintedCount
                increments.append((entry.counter, minted - entry.seen))
                s.tokenRefreshes[name] = (entry.counter, minted)
            }
            for (name, tokens) in fcmTokens {
                let entry = s.fcmTokenRefreshes[name]
                    ?? (Counter(label: Catalog.fcmTokenRefreshes.name, dimensions: [("credential", name)], factory: factory), 0)
                let exchanges = tokens.exchangeCount
                increments.append((entry.counter, exchanges - entry.seen))
                s.fcmTokenRefreshes[name] = (entry.counter, exchanges)
            }
        }
        for (counter, n) in increments where n > 0 { counter.increment(by: n) }
        inFlight.record(flying)
        openConnections.record(open)
    }

    /// The held endpoints every worker reads once a second: 1 for each held one, 0 for those
    /// held before and no longer.
    func holds(_ holds: [HeldEndpoint]) {
        guard isEnabled else { return }
        state.withLock { s in
            var seen = Set<Endpoint>()
            for h in holds {
                seen.insert(h.endpoint)
                let g = gauges(h.endpoint, &s)
                g.paused.record(h.kind == .outage ? 0 : 1)
                g.down.record(h.kind == .outage ? 1 : 0)
            }
            for (endpoint, g) in s.holdGauges where !seen.contains(endpoint) {
                g.paused.record(0)
                g.down.record(0)
            }
        }
    }

    /// Makes the endpoint's hold gauges exist (at 0) before any hold, so that alerts see a series.
    func serves(_ endpoints: [Endpoint]) {
        guard isEnabled else { return }
        state.withLock { s in
            s.served.formUnion(endpoints)
            for e in endpoints where s.holdGauges[e] == nil {
                let g = gauges(e, &s)
                g.paused.record(0)
                g.down.record(0)
            }
        }
    }

    private func gauges(_ endpoint: Endpoint, _ s: inout State) -> (paused: Gauge, down: Gauge) {
        if let g = s.holdGauges[endpoint] { return g }
        let dims = [("credential", endpoint.credential), ("environment", endpoint.channel)]
        let g = (Gauge(label: Catalog.paused.name, dimensions: dims, factory: factory),
                 Gauge(label: Catalog.down.name, dimensions: dims, factory: factory))
        s.holdGauges[endpoint] = g
        return g
    }

    /// The queue gauges, read by the worker holding the queue-gauges lock; nil removes them
    /// (the lock went to another worker), so that only one worker exports them.
    func queue(_ gauges: QueueGauges?) {
        guard isEnabled else { return }
        state.withLock { s in
            guard let gauges else {
                if let q = s.queue {
                    q.due.destroy()
                    q.oldest.destroy()
                    s.queue = nil
                }
                return
            }
            let q = s.queue ?? (Gauge(label: Catalog.dueRows.name, dimensions: [], factory: factory),
                                Gauge(label: Catalog.oldestDueAge.name, dimensions: [], factory: factory))
            s.queue = q
            q.due.record(gauges.dueRows)
            q.oldest.record(gauges.oldestDueAgeSeconds)
        }
    }
}

extension WorkerMetrics {
    /// One written batch, counted: built by the complete loop while it decides (no extra pass).
    struct Tally {
        var finished: [FinishedKey: Int] = [:]
        var retries: [String: Int] = [:]
        var statuses: [Int: Int] = [:]
        var invalidations: [String: Int] = [:]

        /// What one row added, to take it back when the row is ended otherwise.
        struct Entry {
            var endpoint: Endpoint
            var finished: FinishedKey?
            var retry: String?
            var invalidation: String?
        }

        /// Counts one row; returns what it added (for ``ended(_:)``).
        @discardableResult
        mutating func count(_ d: Disposition, outcome: Outcome, status: Int?, endpoint: Endpoint, answered: Bool) -> Entry {
            if answered { statuses[status ?? 0, default: 0] += 1 }
            var entry = Entry(endpoint: endpoint, invalidation: d.invalidation?.reason)
            switch d.status {
            case .retrying:
                entry.retry = outcome.retryLabel
                retries[outcome.retryLabel, default: 0] += 1
            case .sent, .failed, .expired:
                let key = FinishedKey(outcome: d.status, reason: d.reason ?? "", endpoint: endpoint)
                entry.finished = key
                finished[key, default: 0] += 1
            }
            if let inv = entry.invalidation { invalidations[inv, default: 0] += 1 }
            return entry
        }

        /// A row counted as `entry` was ended `failed`/`WriteBackError` instead (its answer
        /// could not be written, nor its invalidation): counted as what was written. Its
        /// answer still counts in the requests by status.
        mutating func ended(_ entry: Entry) {
            if let key = entry.finished { finished[key, default: 0] -= 1 }
            if let kind = entry.retry { retries[kind, default: 0] -= 1 }
            if let inv = entry.invalidation { invalidations[inv, default: 0] -= 1 }
            finished[FinishedKey(outcome: .failed, reason: PGConnection.writeBackErrorReason, endpoint: entry.endpoint), default: 0] += 1
        }
    }
}
