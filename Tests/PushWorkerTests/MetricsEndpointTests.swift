import ChildProcess
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MockPush
import PushCore
import PushStore
import PushTestSupport
import Testing

/// `pushq worker --http-addr`: /metrics, /healthz and /readyz of a real worker process against
/// real PostgreSQL and the real mock, on 127.0.0.1 and a port the worker picks.
@Suite("Metrics endpoints", .serialized)
struct MetricsEndpointTests {
    /// A worker process with its HTTP listener on 127.0.0.1:0; returns it, its log and its base URL.
    func startWorker(_ dbURL: String, _ apnsURL: String, id: String, extra: [String: String] = [:]) async throws -> (ChildProcess, String, String) {
        let log = NSTemporaryDirectory() + "pushq-metrics-\(id)-\(UUID().uuidString.prefix(8)).log"
        var env = extra
        env["PUSHQ_HTTP_ADDR"] = "127.0.0.1:0"
        let process = try ChildProcess(pushqBinary, ["worker"], environment: workerEnvironment(databaseURL: dbURL, apnsURL: apnsURL, workerID: id, extra: env),
                                       stdout: .null, stderr: .file(log))
        let port = try await poll(timeout: .seconds(60)) { () -> Int? in
            Self.listenerPort(log) ?? (process.hasExited ? 0 : nil)
        }
        guard let port, port != 0 else {
            process.kill(SIGKILL)
            _ = await process.wait()
            Issue.record("the worker's HTTP listener did not come up: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            throw CancellationError()
        }
        return (process, log, "http://127.0.0.1:\(port)")
    }

    /// The port in the log line `HTTP listener up … http.address=127.0.0.1:PORT`, if it is there.
    static func listenerPort(_ log: String) -> Int? {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        guard let line = text.split(separator: "\n").first(where: { $0.contains("HTTP listener up") }),
              let range = line.range(of: "http.address=127.0.0.1:") else { return nil }
        let port = Int(line[range.upperBound...].prefix { $0.isNumber }) ?? 0
        return port == 0 ? nil : port
    }

    /// Calls `body` every 100 ms until it returns a value; nil after `timeout`.
    func poll<T>(timeout: Duration, _ body: () async throws -> T?) async throws -> T? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let value = try await body() { return value }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// GET `url`: the status and the body.
    func get(_ url: String) async throws -> (Int, String) {
        var request = URLRequest(url: URL(string: url)!)
        request.timeoutInterval = 10
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    /// The sum of a metric's samples whose labels include all of `labels` (`name{a="b"}` text).
    static func value(_ exposition: String, _ name: String, _ labels: [String: String] = [:]) -> Double {
        var total = 0.0
        for line in exposition.split(separator: "\n") where !line.hasPrefix("#") {
            guard line.hasPrefix(name + "{") || line.hasPrefix(name + " ") else { continue }
            guard labels.allSatisfy({ line.contains("\($0.key)=\"\($0.value)\"") }) else { continue }
            total += Double(line.split(separator: " ").last ?? "") ?? 0
        }
        return total
    }

    @Test("/metrics counts what was sent, failed and invalidated; /healthz and /readyz 200; promtool accepts the exposition")
    func countersMove() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { mock, apnsURL in
                let goneAt: Int64 = 1_700_000_000_000
                for i in 0..<3 { mock.setRule(forToken: Fixtures.token(i, prefix: "7"), .always(.unregistered(at: goneAt))) }
                try await insertAlerts(db, count: 300, prefix: "7")
                let (worker, log, base) = try await startWorker(try await databaseURL(db), apnsURL, id: "metrics")
                try await waitUntilAllFinal(db)
                #expect(try await statusCounts(db) == ["sent": 297, "failed": 3])

                let counted = try await poll(timeout: .seconds(20)) { () -> String? in
                    let text = try await get(base + "/metrics").1
                    return Self.value(text, "pushq_notifications_finished_total") == 300 ? text : nil
                }
                var metrics = try await get(base + "/metrics").1
                #expect(counted != nil, "\(metrics)")
                metrics = counted ?? metrics
                #expect(Self.value(metrics, "pushq_notifications_finished_total", ["outcome": "sent", "credential": "default", "environment": "development"]) == 297)
                #expect(Self.value(metrics, "pushq_notifications_finished_total", ["outcome": "failed", "reason": "Unregistered"]) == 3)
                #expect(Self.value(metrics, "pushq_token_invalidations_total", ["reason": "Unregistered"]) == 3)
                #expect(Self.value(metrics, "pushq_requests_total", ["provider": "apns", "status": "200"]) == 297)
                #expect(Self.value(metrics, "pushq_requests_total", ["provider": "apns", "status": "410"]) == 3)
                #expect(Self.value(metrics, "pushq_request_duration_seconds_count", ["provider": "apns"]) == 300)
                #expect(Self.value(metrics, "pushq_apns_requests_total", ["status": "200"]) == 297)
                #expect(Self.value(metrics, "pushq_apns_requests_total", ["status": "410"]) == 3)
                #expect(Self.value(metrics, "pushq_apns_request_duration_seconds_count") == 300)
                #expect(Self.value(metrics, "pushq_claim_batch_rows_sum") >= 300)
                #expect(Self.value(metrics, "pushq_claim_duration_seconds_count") >= 1)
                #expect(Self.value(metrics, "pushq_complete_write_duration_seconds_count") >= 1)
                #expect(Self.value(metrics, "pushq_auth_token_refreshes_total", ["provider": "apns", "credential": "default"]) == 1)
                #expect(Self.value(metrics, "pushq_apns_provider_token_refreshes_total", ["credential": "default"]) == 1)
                #expect(Self.value(metrics, "pushq_credential_paused", ["credential": "default"]) == 0)
                #expect(metrics.contains("# HELP pushq_notifications_finished_total "))

                // The queue gauges come from the worker holding the lock (this one), at its upkeep.
                let gauges = try await poll(timeout: .seconds(20)) { () -> String? in
                    let text = try await get(base + "/metrics").1
                    // Connection figures are sampled once a second.
                    return text.contains("\npushq_queue_due_rows ") && Self.value(text, "pushq_queue_due_rows") == 0
                        && Self.value(text, "pushq_connections_open", ["provider": "apns"]) == 1
                        && Self.value(text, "pushq_connections_open", ["provider": "fcm"]) == 0
                        && Self.value(text, "pushq_apns_connections_open") == 1
                        && Self.value(text, "pushq_requests_in_flight", ["provider": "apns"]) == 0
                        && Self.value(text, "pushq_apns_requests_in_flight") == 0 ? text : nil
                }
                if gauges == nil { metrics = try await get(base + "/metrics").1 }
                #expect(gauges != nil, "\(metrics)")
                metrics = gauges ?? metrics

                let (lint, lintOutput) = try Promtool.run(["check", "metrics"], input: metrics)
                #expect(lint, "\(lintOutput)")

                #expect(try await get(base + "/healthz") == (200, "ok\n"))
                #expect(try await get(base + "/readyz") == (200, "ok\n"))
                worker.kill(SIGTERM)
                #expect(await worker.wait() == .exit(0), "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }
        }
    }

    /// rows of made-up credentials and reasons, ended by the upkeep or the claim, make no new series:
    /// credential and reason are other
    @Test("rows of made-up credentials and reasons make no new series: credential and reason are other")
    func producerValuesAreNotLabels() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { _, apnsURL in
                // 2 000 rows of credentials no worker serves, expired: the upkeep ends them. 20 of the
                // default credential with a producer-written last_reason, expired: the claim ends them.
                try await db.query("""
                    INSERT INTO pushq.notifications (device_token, payload, credential, last_reason, expires_at)
                    SELECT 'c' || lpad(to_hex(g), 63, '0'), '{}', CASE WHEN g <= 2000 THEN 'made-up-' || g END, 'why ' || g,
                           now() - interval '1 minute'
                      FROM generate_series(1, 2020) g
                    """)
                let (worker, log, base) = try await startWorker(try await databaseURL(db), apnsURL, id: "labels")
                #expect(try await eventually { try await statusCounts(db) == ["expired": 2020] })
                let counted = try await poll(timeout: .seconds(20)) { () -> String? in
                    let text = try await get(base + "/metrics").1
                    return Self.value(text, "pushq_notifications_finished_total") == 2020 ? text : nil
                }
                var metrics = counted ?? ""
                if counted == nil { metrics = try await get(base + "/metrics").1 }
                #expect(counted != nil, "\(metrics)")
                let series = metrics.split(separator: "\n").filter { $0.hasPrefix("pushq_notifications_finished_total{") }
                #expect(series.count <= 2, "\(series.prefix(5))")
                #expect(Self.value(metrics, "pushq_notifications_finished_total", ["credential": "other", "reason": "other", "outcome": "expired"]) == 2000)
                #expect(Self.value(metrics, "pushq_notifications_finished_total", ["credential": "default", "reason": "other", "outcome": "expired"]) == 20)
                #expect(!metrics.contains("made-up-") && !metrics.contains("why "))
                worker.kill(SIGTERM)
                #expect(await worker.wait() == .exit(0), "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }
        }
    }

    @Test("/readyz is 503 while the only credential is paused and while draining, 200 otherwise; the queue gauges see waiting rows")
    func readiness() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { mock, apnsURL in
                let (worker, log, base) = try await startWorker(try await databaseURL(db), apnsURL, id: "ready",
                                                                extra: ["PUSHQ_PAUSE_BASE_SECONDS": "1", "PUSHQ_PAUSE_CAP_SECONDS": "1",
                                                                        "PUSHQ_SHUTDOWN_SECONDS": "20"])
                #expect(try await eventually { try await get(base + "/readyz").0 == 200 })

                // APNs rejects the provider token: the credential is paused, the rows wait.
                mock.answerEverything(with: .error(.invalidProviderToken))
                try await insertAlerts(db, count: 5, prefix: "8")
                let paused = try await poll(timeout: .seconds(30)) { () -> String? in
                    let (status, text) = try await get(base + "/readyz")
                    return status == 503 ? text : nil
                }
                #expect(paused == "every credential is paused: default\n")
                #expect(try await get(base + "/healthz").0 == 200)
                let exported = try await poll(timeout: .seconds(20)) { () -> Bool? in
                    let text = try await get(base + "/metrics").1
                    return Self.value(text, "pushq_credential_paused", ["credential": "default", "environment": "development"]) == 1
                        && Self.value(text, "pushq_queue_due_rows") == 5
                        && Self.value(text, "pushq_queue_oldest_due_age_seconds") > 0 ? true : nil
                }
                let latest = exported == true ? "" : try await get(base + "/metrics").1
                #expect(exported == true, "\(latest)")

                // APNs accepts again: the next probe lifts the pause.
                mock.answerEverything(with: nil)
                #expect(try await eventually(timeout: .seconds(30)) { try await get(base + "/readyz").0 == 200 })
                try await waitUntilAllFinal(db)

                // Draining: answers held back by the mock keep the worker in its shutdown.
                mock.answerEverything(with: MockAnswer.normal.delayed(by: 2000))
                let before = mock.stats().requests
                try await insertAlerts(db, count: 5, prefix: "9")
                try await mock.waitForRequests(count: before + 5, timeout: .seconds(30))
                worker.kill(SIGTERM)
                let draining = try await poll(timeout: .seconds(3)) { () -> String? in
                    guard let (status, body) = try? await get(base + "/readyz") else { return "the listener is gone" }
                    return status == 503 ? body : nil
                }
                #expect(draining?.contains("the worker is draining (stop requested)") == true, "\(draining ?? "still ready")")
                #expect(await worker.wait() == .exit(0), "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
                #expect(try await statusCounts(db) == ["sent": 10])
            }
        }
    }

    @Test("a GOAWAY from APNs moves pushq_apns_goaways_total and the reopens; every row is still sent once")
    func goaways() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { mock, apnsURL in
                mock.setFaults(MockConnectionFaults(goawayAfterStreams: 100))
                try await insertAlerts(db, count: 300, prefix: "6")
                let (worker, log, base) = try await startWorker(try await databaseURL(db), apnsURL, id: "goaway")
                try await waitUntilAllFinal(db)
                #expect(try await statusCounts(db) == ["sent": 300])
                let sent = mock.stats().goawaysSent
                #expect(sent >= 1)
                let seen = try await poll(timeout: .seconds(20)) { () -> String? in
                    let text = try await get(base + "/metrics").1
                    return Self.value(text, "pushq_apns_goaways_total") >= 1 && Self.value(text, "pushq_apns_connection_reopens_total") >= 1 ? text : nil
                }
                #expect(seen != nil, "mock sent \(sent) GOAWAYs")
                if let seen {
                    #expect(Self.value(seen, "pushq_apns_goaways_total") <= Double(sent), "counted more GOAWAYs than the mock sent")
                }
                worker.kill(SIGTERM)
                #expect(await worker.wait() == .exit(0), "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }
        }
    }

    @Test("a bad PUSHQ_HTTP_ADDR is refused naming the variable; an address in use stops the worker with exit 1")
    func badAddress() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { _, apnsURL in
                let url = try await databaseURL(db)
                let bad = try ChildProcess.runBlocking(pushqBinary, ["worker"], environment: workerEnvironment(
                    databaseURL: url, apnsURL: apnsURL, workerID: "bad-addr", extra: ["PUSHQ_HTTP_ADDR": "9464"]))
                #expect(bad.termination != .exit(0))
                #expect(bad.stderr.contains("PUSHQ_HTTP_ADDR=9464: expected host:port, e.g. 127.0.0.1:9464"), "\(bad.stderr)")

                let (first, _, base) = try await startWorker(url, apnsURL, id: "first")
                let port = String(base.split(separator: ":").last!)
                let clash = try ChildProcess.runBlocking(pushqBinary, ["worker", "--http-addr", "127.0.0.1:\(port)"], environment: workerEnvironment(
                    databaseURL: url, apnsURL: apnsURL, workerID: "clash"))
                #expect(clash.termination == .exit(1))
                #expect(clash.stderr.contains("cannot serve HTTP on 127.0.0.1:\(port) (--http-addr, PUSHQ_HTTP_ADDR)"), "\(clash.stderr)")
                first.kill(SIGTERM)
                #expect(await first.wait() == .exit(0))
            }
        }
    }
}
