import CoreMetrics
import PushCore
import PushTransport

extension WorkerMetrics {
    /// One answer's duration (the only per-notification call: a histogram needs each value).
    func answered(_ provider: Provider, nanoseconds: Int64) {
        guard isEnabled, nanoseconds > 0 else { return }
        requestDurations[provider]?.recordNanoseconds(nanoseconds)
        deprecatedRequestDuration.recordNanoseconds(nanoseconds)
    }

    /// The senders' connection counters and gauges, the APNs token managers' signing counts and
    /// the FCM credentials' token exchanges.
    func sample(_ senders: [Endpoint: any Sender], tokenManagers: [String: ProviderTokenManager],
                fcmTokens: [String: FCMAccessTokenProvider] = [:]) {
        guard isEnabled else { return }
        var open: [Provider: Int] = [:], flying: [Provider: Int] = [:]
        var increments: [(Pair, Int)] = []
        state.withLock { s in
            for (endpoint, sender) in senders {
                let stats = sender.stats()
                open[endpoint.provider, default: 0] += stats.openConnections
                flying[endpoint.provider, default: 0] += stats.inFlight
                let last = s.senderTotals[endpoint] ?? SenderTotals()
                s.senderTotals[endpoint] = SenderTotals(goaways: stats.connectionsEndedByServer, reopens: stats.reopens)
                increments.append((pair(&s.goaways, endpoint, Catalog.goaways, Catalog.Deprecated.goaways),
                                   stats.connectionsEndedByServer - last.goaways))
                increments.append((pair(&s.reopens, endpoint, Catalog.reopens, Catalog.Deprecated.reopens), stats.reopens - last.reopens))
            }
            for (name, manager) in tokenManagers { increments.append(refreshes(&s, .apns, name, issued: manager.mintedCount)) }
            for (name, tokens) in fcmTokens { increments.append(refreshes(&s, .fcm, name, issued: tokens.exchangeCount)) }
        }
        for (pair, n) in increments where n > 0 { pair.increment(by: n) }
        for provider in Provider.allCases {
            inFlight[provider]?.record(flying[provider] ?? 0)
            openConnections[provider]?.record(open[provider] ?? 0)
        }
        deprecatedInFlight.record(flying.values.reduce(0, +))
        deprecatedOpenConnections.record(open.values.reduce(0, +))
    }

    /// The counters of `endpoint` in `cache`: `metric` with the provider, credential and
    /// environment, and its deprecated copy with the credential and environment.
    private func pair(_ cache: inout [Endpoint: Pair], _ endpoint: Endpoint, _ metric: Metric, _ deprecated: Metric) -> Pair {
        let endpoint = endpoint.withoutOrigin
        if let pair = cache[endpoint] { return pair }
        let dims = [("credential", endpoint.credential), ("environment", endpoint.metricEnvironment)]
        let pair = Pair(counter: Counter(label: metric.name, dimensions: [("provider", endpoint.provider.rawValue)] + dims, factory: factory),
                        deprecated: Counter(label: deprecated.name, dimensions: dims, factory: factory))
        cache[endpoint] = pair
        return pair
    }

    /// The token counters of `credential` of `provider` and how many tokens it got since the
    /// last sample, from `issued`, its issuer's count so far (APNs: provider tokens signed; FCM:
    /// token exchanges started).
    private func refreshes(_ s: inout State, _ provider: Provider, _ credential: String, issued: Int) -> (Pair, Int) {
        let key = TokenSource(provider: provider, credential: credential)
        let entry = s.tokenRefreshes[key] ?? Refreshes(counters: Pair(
            counter: Counter(label: Catalog.tokenRefreshes.name, dimensions: [("provider", provider.rawValue), ("credential", credential)],
                             factory: factory),
            deprecated: Catalog.Deprecated.tokenRefreshes(provider).map {
                Counter(label: $0.name, dimensions: [("credential", credential)], factory: factory)
            }), seen: 0)
        s.tokenRefreshes[key] = Refreshes(counters: entry.counters, seen: issued)
        return (entry.counters, issued - entry.seen)
    }
}
