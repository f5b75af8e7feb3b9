import ChildProcess
import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import Testing

/// Every row of the metrics table (docs/monitoring.md, Metrics), read from the `/metrics` of a
/// real worker process driven by the mock's faults. `MetricsEndpointTests` has the basics
/// (sent, GOAWAYs, readiness); these cover each label value the table lists.
@Suite("Metrics table", .serialized)
struct MetricsTableTests {
    typealias M = MetricsEndpointTests

    /// Token `i` of the special rows, one per fault.
    static func special(_ i: Int) -> String { Fixtures.token(i, prefix: "c") }

    /// one run: retries by every kind but held (connection: a second token signed), invalidations by reason,
    /// requests by provider, endpoint and status (none too), the deprecated pushq_apns_* copies, finished
    /// sent/failed/expired with a row ended WriteBackError counted as written, token refreshes, reopens,
    /// in-flight, durations, claims, queue gauges
    @Test("one run exports every row of the metrics table with the labels it documents")
    func everyRowOfOneRun() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { mock, apnsURL in
                let goneAt: Int64 = 1_700_000_000_000
                let faults: [MockAnswer] = [
                    .reset,                                    // 0: no answer → transport
                    .error(.internalServerError),              // 1: 500 → server_error (and a reopen)
                    .error(.tooManyRequests),                  // 2: 429 → too_many_requests
                    .error(.idleTimeout),                      // 3: 400 IdleTimeout → idle_timeout
                    .status(400, reason: "SomethingNew"),      // 4: unknown reason → unknown_reason
                ]
                for (i, answer) in faults.enumerated() { mock.setRule(forToken: Self.special(i), MockTokenRule(sequence: [answer])) }
                mock.setRule(forToken: Self.special(6), .always(.unregistered(at: goneAt)))
                mock.setRule(forToken: Self.special(7), .always(.error(.expiredToken, timestamp: goneAt)))
                mock.setRule(forToken: Self.special(8), .always(.error(.badDeviceToken)))
                // A timestamp PostgreSQL cannot hold: the row's write-back fails, it ends failed/WriteBackError.
                mock.setRule(forToken: Self.special(9), .always(.unregistered(at: 999_999_999_999_999_999)))
                // First 200 good answers, awaited before the special rows go in: the burst detector then
                // judges the BadDeviceToken at its first answer, whatever order the answers come in (with
                // fewer than 20 answers the row would wait once, its attempt given back: a held retry).
                try await insertAlerts(db, count: 200, prefix: "5")
                try await db.query("""
                    INSERT INTO pushq.notifications (device_token, payload, expires_at)
                    VALUES ($1, '{"aps":{}}', now() - interval '1 minute')
                    """, [Self.special(11)])
                // Due for 100 s, for a credential no worker has: it stays, the queue gauges see it.
                try await db.query("""
                    INSERT INTO pushq.notifications (device_token, payload, credential, scheduled_at)
                    VALUES ($1, '{"aps":{}}', 'nobody', now() - interval '100 seconds')
                    """, [Self.special(12)])

                // The delayed answer must not time out.
                let (worker, log, base) = try await M().startWorker(try await databaseURL(db), apnsURL, id: "table",
                                                                    extra: ["PUSHQ_APNS_REQUEST_TIMEOUT": "8", "PUSHQ_LEASE_SECONDS": "20"])
                #expect(try await eventually(timeout: .seconds(60)) {
                    try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sent'") == 200
                })
                // Answered after 4 s: in flight meanwhile, and above the 2.5 s bucket.
                mock.setRule(forToken: Self.special(10), .always(MockAnswer.normal.delayed(by: 4000)))
                try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\":{}}')", [Self.special(10)])
                for i in [0, 1, 2, 3, 4, 6, 7, 8, 9] {
                    try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\":{}}')", [Self.special(i)])
                }
                let flying = try await M().poll(timeout: .seconds(30)) { () -> Double? in
                    let v = M.value(try await M().get(base + "/metrics").1, "pushq_requests_in_flight", ["provider": "apns"])
                    return v >= 1 ? v : nil
                }
                #expect(flying != nil, "the delayed request was never seen in flight")

                // The 429 row waits for its token's throttle (minutes): it stays retrying.
                let expected: [String: Double] = ["sent": 205, "failed": 4, "expired": 1]
                let done = try await M().poll(timeout: .seconds(60)) { () -> String? in
                    let text = try await M().get(base + "/metrics").1
                    let finished = expected.allSatisfy { M.value(text, "pushq_notifications_finished_total", ["outcome": $0.key]) == $0.value }
                    return finished && M.value(text, "pushq_requests_in_flight") == 0 && text.contains("\npushq_queue_due_rows ") ? text : nil
                }
                var m = try await M().get(base + "/metrics").1
                if let done { m = done }
                let open = try await db.query("SELECT device_token, status, attempts, last_reason, scheduled_at - now() FROM pushq.notifications WHERE status <> 'sent' ORDER BY id")
                #expect(done != nil, "\((0..<open.count).map { i in (0..<5).map { open.string(i, $0) ?? "-" }.joined(separator: " ") })\n\(m)")
                #expect(try await statusCounts(db) == ["sent": 205, "retrying": 1, "failed": 4, "expired": 1, "queued": 1])

                // Finished: what was written. The WriteBackError row counts as that, not as Unregistered.
                let finished = { (labels: [String: String]) in M.value(m, "pushq_notifications_finished_total", labels) }
                #expect(finished(["outcome": "sent", "reason": "", "credential": "default", "environment": "development"]) == 205)
                #expect(finished(["outcome": "failed", "reason": "Unregistered"]) == 1)
                #expect(finished(["outcome": "failed", "reason": "ExpiredToken"]) == 1)
                #expect(finished(["outcome": "failed", "reason": "BadDeviceToken"]) == 1)
                #expect(finished(["outcome": "failed", "reason": "WriteBackError"]) == 1)
                #expect(finished(["outcome": "expired", "reason": ""]) == 1, "ended by the claim")

                // Retries: one of each kind the faults make, nothing held.
                for kind in ["transport", "server_error", "too_many_requests", "idle_timeout", "unknown_reason"] {
                    #expect(M.value(m, "pushq_retries_total", ["kind": kind]) == 1, "kind \(kind)")
                }
                #expect(M.value(m, "pushq_retries_total", ["kind": "held"]) == 0)
                #expect(M.value(m, "pushq_retries_total") == 5)

                // Invalidations written: not the WriteBackError row's (its timestamp is why it failed).
                #expect(M.value(m, "pushq_token_invalidations_total", ["reason": "Unregistered"]) == 1)
                #expect(M.value(m, "pushq_token_invalidations_total", ["reason": "ExpiredToken"]) == 1)
                #expect(M.value(m, "pushq_token_invalidations_total", ["reason": "BadDeviceToken"]) == 1)
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.devices WHERE invalidated_at IS NOT NULL") == 3)

                // Answers by provider, endpoint and status: the expired row was never sent, the reset one got none.
                let endpoint = ["provider": "apns", "credential": "default", "environment": "development"]
                let requests = { (status: String) in M.value(m, "pushq_requests_total", endpoint.merging(["status": status]) { a, _ in a }) }
                #expect(requests("200") == 205)
                #expect(requests("500") == 1 && requests("429") == 1)
                #expect(requests("400") == 3, "IdleTimeout, SomethingNew, BadDeviceToken")
                #expect(requests("410") == 3, "Unregistered, ExpiredToken, the odd timestamp")
                #expect(requests("none") == 1)
                #expect(M.value(m, "pushq_requests_total") == 214)
                #expect(M.value(m, "pushq_requests_total", ["provider": "fcm"]) == 0)

                // The duration histogram has every answer (the reset stream got none); the delayed one is above 2.5 s.
                let durations = M.value(m, "pushq_request_duration_seconds_count", ["provider": "apns"])
                #expect(durations == 213)
                #expect(M.value(m, "pushq_request_duration_seconds_bucket", ["provider": "apns", "le": "+Inf"]) == durations)
                #expect(M.value(m, "pushq_request_duration_seconds_bucket", ["provider": "apns", "le": "2.5"]) < durations)
                #expect(M.value(m, "pushq_request_duration_seconds_sum", ["provider": "apns"]) >= 4)

                #expect(M.value(m, "pushq_auth_token_refreshes_total", ["provider": "apns", "credential": "default"]) == 1)
                // 500 and IdleTimeout condemn their connection.
                let reopens = M.value(m, "pushq_connection_reopens_total", endpoint)
                #expect(reopens >= 1)
                #expect(M.value(m, "pushq_connections_open", ["provider": "apns"]) <= 1)

                // The deprecated pushq_apns_* copies count exactly what they counted before.
                for status in ["200", "500", "429", "400", "410", "none"] {
                    #expect(M.value(m, "pushq_apns_requests_total", ["status": status]) == requests(status), "status \(status)")
                }
                #expect(M.value(m, "pushq_apns_requests_total") == 214)
                #expect(M.value(m, "pushq_apns_request_duration_seconds_count") == 213)
                #expect(M.value(m, "pushq_apns_request_duration_seconds_bucket", ["le": "2.5"]) == M.value(m, "pushq_request_duration_seconds_bucket", ["le": "2.5"]))
                #expect(M.value(m, "pushq_apns_provider_token_refreshes_total", ["credential": "default"]) == 1)
                #expect(M.value(m, "pushq_apns_connection_reopens_total", ["credential": "default", "environment": "development"]) == reopens)
                #expect(M.value(m, "pushq_apns_connections_open") == M.value(m, "pushq_connections_open"))

                // One claim statement, one sample of each claim histogram; every attempt was claimed.
                let claims = M.value(m, "pushq_claim_batch_rows_count")
                #expect(claims >= 1 && M.value(m, "pushq_claim_duration_seconds_count") == claims)
                // 210 rows (the expired one was ended by the upkeep, `nobody`'s is not this worker's) and 4 retries.
                #expect(M.value(m, "pushq_claim_batch_rows_sum") == 214)
                #expect(M.value(m, "pushq_complete_write_duration_seconds_count") >= 1)
                #expect(M.value(m, "pushq_complete_write_duration_seconds_sum") > 0)

                // The queue gauges: the one row of credential `nobody`, due 100 s ago.
                let gauges = try await M().poll(timeout: .seconds(20)) { () -> String? in
                    let text = try await M().get(base + "/metrics").1
                    return M.value(text, "pushq_queue_due_rows") == 1 ? text : nil
                }
                #expect(gauges != nil)
                if let gauges { #expect(M.value(gauges, "pushq_queue_oldest_due_age_seconds") >= 100) }

                // Alone on its connection, ExpiredProviderToken: resent at once (connection) with a second token.
                mock.setRule(forToken: Self.special(5), MockTokenRule(sequence: [.error(.expiredProviderToken)]))
                try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\":{}}')", [Self.special(5)])
                let renewed = try await M().poll(timeout: .seconds(30)) { () -> String? in
                    let text = try await M().get(base + "/metrics").1
                    return M.value(text, "pushq_notifications_finished_total", ["outcome": "sent"]) == 206
                        && M.value(text, "pushq_auth_token_refreshes_total", ["provider": "apns"]) == 2
                        && M.value(text, "pushq_apns_provider_token_refreshes_total") == 2 ? text : nil
                }
                #expect(renewed != nil)
                if let renewed {
                    #expect(M.value(renewed, "pushq_retries_total", ["kind": "connection"]) == 1)
                    #expect(M.value(renewed, "pushq_retries_total") == 6)
                    #expect(M.value(renewed, "pushq_requests_total", ["provider": "apns", "status": "403"]) == 1)
                    #expect(M.value(renewed, "pushq_apns_requests_total", ["status": "403"]) == 1)
                }

                let (lint, lintOutput) = try Promtool.run(["check", "metrics"], input: m)
                #expect(lint, "\(lintOutput)")
                worker.kill(SIGTERM)
                #expect(await worker.wait() == .exit(0), "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }
        }
    }

    /// a paused credential: pushq_credential_paused 1 and the rows answered meanwhile retried as held; an
    /// endpoint answering only 503: pushq_endpoint_down 1; both back to 0
    @Test("a paused credential sets pushq_credential_paused and held retries; an endpoint of 503s sets pushq_endpoint_down")
    func holdGauges() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { mock, apnsURL in
                let (worker, log, base) = try await M().startWorker(try await databaseURL(db), apnsURL, id: "holds", extra: [
                    "PUSHQ_PAUSE_BASE_SECONDS": "1", "PUSHQ_PAUSE_CAP_SECONDS": "1",
                    "PUSHQ_OUTAGE_PROBE_BASE_SECONDS": "1", "PUSHQ_OUTAGE_PROBE_CAP_SECONDS": "1"])
                let labels = ["credential": "default", "environment": "development"]
                func gauge(_ name: String, is value: Double) async throws -> Bool {
                    try await M().poll(timeout: .seconds(30)) { () -> Bool? in
                        M.value(try await M().get(base + "/metrics").1, name, labels) == value ? true : nil
                    } == true
                }
                #expect(try await gauge("pushq_credential_paused", is: 0))
                #expect(try await gauge("pushq_endpoint_down", is: 0))

                mock.answerEverything(with: .error(.invalidProviderToken))
                try await insertAlerts(db, count: 20, prefix: "8")
                #expect(try await gauge("pushq_credential_paused", is: 1))
                #expect(M.value(try await M().get(base + "/metrics").1, "pushq_endpoint_down", labels) == 0)
                mock.answerEverything(with: nil)
                #expect(try await gauge("pushq_credential_paused", is: 0))
                try await waitUntilAllFinal(db)
                let afterPause = try await M().get(base + "/metrics").1
                #expect(M.value(afterPause, "pushq_retries_total", ["kind": "held"]) >= 1, "\(afterPause)")
                #expect(M.value(afterPause, "pushq_requests_total", ["provider": "apns", "status": "403"]) >= 1)

                mock.answerEverything(with: .error(.serviceUnavailable))
                try await insertAlerts(db, count: 20, prefix: "9")
                #expect(try await gauge("pushq_endpoint_down", is: 1))
                let down = try await M().get(base + "/metrics").1
                #expect(M.value(down, "pushq_credential_paused", labels) == 0)
                #expect(M.value(down, "pushq_retries_total", ["kind": "server_error"]) >= 3, "\(down)")
                mock.answerEverything(with: nil)
                #expect(try await gauge("pushq_endpoint_down", is: 0))
                try await waitUntilAllFinal(db)
                #expect(try await statusCounts(db) == ["sent": 40])

                worker.kill(SIGTERM)
                #expect(await worker.wait() == .exit(0), "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }
        }
    }
}
