import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import Testing

/// Issue 45, item 10: the channel series the Grafana dashboard reads exist from the worker's
/// start, at zero, for every label combination of their closed sets.
@Suite("Channel metrics from start", .serialized)
struct ChannelMetricsTests {
    /// Whether `exposition` has a sample line of `name` whose labels include all of `labels`.
    static func hasSample(_ exposition: String, _ name: String, _ labels: [String: String]) -> Bool {
        exposition.split(separator: "\n").contains { line in
            line.hasPrefix(name + "{") && labels.allSatisfy { line.contains("\($0.key)=\"\($0.value)\"") }
        }
    }

    @Test("right after start, before any channel request: pushq_channel_requests_total and pushq_channels_unknown_at_apple at 0")
    func zeroFromStart() async throws {
        let endpoints = MetricsEndpointTests()
        try await TestDatabase.withConnection { db in
            try await withMock { _, apnsURL in
                let (worker, _, base) = try await endpoints.startWorker(try await databaseURL(db), apnsURL, id: "channel-metrics")
                defer { if !worker.hasExited { worker.kill(SIGKILL) } }
                // The worker's start: the hold gauges of the endpoints it serves appear.
                let started = try await endpoints.poll(timeout: .seconds(60)) { () -> String? in
                    let text = try await endpoints.get(base + "/metrics").1
                    return Self.hasSample(text, "pushq_credential_paused", ["credential": "default"]) ? text : nil
                }
                let metrics = try #require(started)
                for operation in ["create", "delete", "list"] {
                    for result in ["done", "gone", "failed", "retry", "held"] {
                        #expect(Self.hasSample(metrics, "pushq_channel_requests_total", ["operation": operation, "result": result]),
                                "no series operation=\(operation) result=\(result)")
                    }
                }
                for environment in ["production", "development"] {
                    #expect(Self.hasSample(metrics, "pushq_channels_unknown_at_apple", ["credential": "default", "environment": environment]))
                }
                #expect(MetricsEndpointTests.value(metrics, "pushq_channel_requests_total") == 0)
                #expect(MetricsEndpointTests.value(metrics, "pushq_channels_unknown_at_apple") == 0)
                let (lint, output) = try Promtool.run(["check", "metrics"], input: metrics)
                #expect(lint, "\(output)")
                worker.kill(SIGTERM)
                _ = await worker.wait()
            }
        }
    }
}
