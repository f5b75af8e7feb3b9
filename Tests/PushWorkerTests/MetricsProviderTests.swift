import ChildProcess
import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import Testing

/// Metrics about providers, from the `/metrics` of a worker process sending to APNs and FCM at
/// once: each series says its provider, and the deprecated `pushq_apns_*` copies still count
/// both providers together, as they did before the `provider` label.
@Suite("Metrics by provider", .serialized)
struct MetricsProviderTests {
    typealias M = MetricsEndpointTests

    /// requests, durations, connections and token refreshes carry provider (and credential, environment); the
    /// pushq_apns_* copies sum both providers
    @Test("requests, durations, connections and token refreshes carry provider; the pushq_apns_* copies sum both providers")
    func providerLabels() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { _, mockURL in
                try await insertAlerts(db, count: 30, prefix: "6")
                for i in 0..<20 { _ = try await FCMEndToEndTests.insertFCM(db, FCMEndToEndTests.token(i, "m")) }
                let account = try FCMEndToEndTests.serviceAccountFile(mockURL: mockURL)
                let (worker, log, base) = try await M().startWorker(try await databaseURL(db), mockURL, id: "providers", extra: [
                    "PUSHQ_FCM_SERVICE_ACCOUNT_FILE": account, "PUSHQ_FCM_URL": mockURL])
                try await waitUntilAllFinal(db)
                #expect(try await statusCounts(db) == ["sent": 50])
                // Connection gauges are sampled once a second: wait for the sample after the last answer.
                let sampled = try await M().poll(timeout: .seconds(20)) { () -> String? in
                    let text = try await M().get(base + "/metrics").1
                    return M.value(text, "pushq_requests_total") == 50 && M.value(text, "pushq_connections_open", ["provider": "fcm"]) == 1
                        && M.value(text, "pushq_connections_open", ["provider": "apns"]) == 1 ? text : nil
                }
                var m = try await M().get(base + "/metrics").1
                #expect(sampled != nil, "\(m)")
                m = sampled ?? m

                let apns = ["provider": "apns", "credential": "default", "environment": "development"]
                let fcm = ["provider": "fcm", "credential": "default", "environment": "fcm"]
                #expect(M.value(m, "pushq_requests_total", apns.merging(["status": "200"]) { a, _ in a }) == 30)
                #expect(M.value(m, "pushq_requests_total", fcm.merging(["status": "200"]) { a, _ in a }) == 20)
                #expect(M.value(m, "pushq_request_duration_seconds_count", ["provider": "apns"]) == 30)
                #expect(M.value(m, "pushq_request_duration_seconds_count", ["provider": "fcm"]) == 20)
                #expect(M.value(m, "pushq_requests_in_flight", ["provider": "fcm"]) == 0)
                #expect(M.value(m, "pushq_auth_token_refreshes_total", ["provider": "apns", "credential": "default"]) == 1)
                #expect(M.value(m, "pushq_auth_token_refreshes_total", ["provider": "fcm", "credential": "default"]) == 1)
                #expect(M.value(m, "pushq_notifications_finished_total", ["outcome": "sent", "environment": "fcm"]) == 20)

                // The deprecated names, as before: FCM's answers in pushq_apns_*, unlabelled by provider.
                #expect(M.value(m, "pushq_apns_requests_total", ["status": "200"]) == 50)
                #expect(M.value(m, "pushq_apns_request_duration_seconds_count") == 50)
                #expect(M.value(m, "pushq_apns_connections_open") == 2)
                #expect(M.value(m, "pushq_apns_provider_token_refreshes_total", ["credential": "default"]) == 1)
                #expect(M.value(m, "pushq_fcm_access_token_refreshes_total", ["credential": "default"]) == 1)
                #expect(m.contains("# HELP pushq_apns_requests_total Deprecated, removed in the next release: use pushq_requests_total."))

                let (lint, lintOutput) = try Promtool.run(["check", "metrics"], input: m)
                #expect(lint, "\(lintOutput)")
                worker.kill(SIGTERM)
                #expect(await worker.wait() == .exit(0), "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }
        }
    }
}
