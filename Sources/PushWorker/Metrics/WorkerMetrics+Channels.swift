import CoreMetrics
import PushCore
import PushStore

extension WorkerMetrics {
    /// The labels of `pushq_channel_requests_total`: the operation (`create`, `delete`, `list`)
    /// and what came of it (`done`, `gone`, `failed`, `retry`, `held`), both closed sets.
    struct ChannelRequestKey: Hashable {
        var operation: String
        var result: String
    }

    /// The operations and results of `pushq_channel_requests_total`, its closed label sets.
    static let channelOperations = ["create", "delete", "list"]
    static let channelResults = ["done", "gone", "failed", "retry", "held"]

    /// Exports the channel series at zero from the worker's start, not at their first event (the
    /// Grafana dashboard's rates and alerts need a series to exist): every operation and result of
    /// `pushq_channel_requests_total`, and `pushq_channels_unknown_at_apple` for each APNs
    /// endpoint served (until a reconciliation says otherwise).
    func channelsServed(_ endpoints: [Endpoint]) {
        guard isEnabled else { return }
        let apns = endpoints.filter { $0.provider == .apns }
        guard !apns.isEmpty else { return }
        state.withLock { s in
            for operation in Self.channelOperations {
                for result in Self.channelResults {
                    _ = Self.counter(&s.channelRequests, ChannelRequestKey(operation: operation, result: result), make: Counter(
                        label: Catalog.channelRequests.name, dimensions: [("operation", operation), ("result", result)], factory: factory))
                }
            }
            for endpoint in apns where s.unknownChannelGauges[endpoint] == nil {
                let gauge = Gauge(label: Catalog.channelsUnknownAtApple.name, dimensions: [
                    ("credential", endpoint.credential), ("environment", endpoint.channel)], factory: factory)
                s.unknownChannelGauges[endpoint] = gauge
                gauge.record(0)
            }
        }
    }

    /// One request to APNs' channel-management API and what came of it.
    func channelRequest(operation: String, result: String) {
        guard isEnabled else { return }
        let counter = state.withLock { s in
            Self.counter(&s.channelRequests, ChannelRequestKey(operation: operation, result: result), make: Counter(
                label: Catalog.channelRequests.name, dimensions: [("operation", operation), ("result", result)], factory: factory))
        }
        counter.increment(by: 1)
    }

    /// The channels per status and the reconciliations' findings, read from the database by
    /// every worker that serves APNs (the same figures from each: aggregate with `max`). Only the
    /// credentials this worker serves become labels.
    func channels(_ counts: [String: Int], reconciliations: [ReconciliationReport]) {
        guard isEnabled else { return }
        state.withLock { s in
            for status in ChannelsStatus.statuses {
                let gauge = s.channelGauges[status] ?? Gauge(label: Catalog.channels.name, dimensions: [("status", status)], factory: factory)
                s.channelGauges[status] = gauge
                gauge.record(counts[status, default: 0])
            }
            var unknown: [Endpoint: Int] = [:]
            for r in reconciliations {
                guard let environment = APNsEnvironment(rawValue: r.environment) else { continue }
                let endpoint = Endpoint(credential: r.credential, environment: environment)
                guard s.served.contains(endpoint) else { continue }
                unknown[endpoint, default: 0] += r.unknownIDs.count
            }
            for (endpoint, n) in unknown {
                let gauge = s.unknownChannelGauges[endpoint] ?? Gauge(label: Catalog.channelsUnknownAtApple.name, dimensions: [
                    ("credential", endpoint.credential), ("environment", endpoint.channel)], factory: factory)
                s.unknownChannelGauges[endpoint] = gauge
                gauge.record(n)
            }
        }
    }
}
