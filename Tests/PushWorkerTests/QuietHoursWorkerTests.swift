import ChildProcess
import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// Quiet hours per lane (issue 48, item 3) in the worker: a row claimed just before its lane's
/// window opens must not be sent inside it.
///
/// The mock holds every answer and the worker has one stream, so the quiet lane's row waits in the
/// sender's queue behind the other lane's request for as long as the test wants: it cannot start
/// before the test releases the answers, which it does only once the server's clock is inside the
/// window. Nothing depends on how fast the machine is, except that the worker claims the row
/// within the 20 s before its window opens (checked, not assumed: the test says so if it did not).
@Suite("Quiet hours in the worker")
struct QuietHoursWorkerTests {
    static func token(_ n: Int) -> String { String(repeating: String(format: "%02x", n), count: 32) }

    /// a row claimed before its window opened and still waiting for a stream when it opened is given back
    /// unsent: queued, attempt refunded, its entry held to the window's end; the row before it is sent
    @Test("a row claimed before its window opened, not started by then, is given back unsent and held to the window's end")
    func givenBackWhenWindowOpens() async throws {
        try await TestDatabase.with { url in
            let db = try await PGConnection.connect(url, logger: TestDatabase.logger)
            // Ranked after default: the default row takes the one stream first. UTC (no zone).
            try await db.query("""
                INSERT INTO pushq.lanes (name, rank, quiet_start, quiet_end)
                VALUES ('quiet', 200, ((now() AT TIME ZONE 'UTC') + interval '20 seconds')::time, ((now() AT TIME ZONE 'UTC') + interval '2 hours')::time)
                """)
            try await withMock { server, apnsURL in
                server.holdAnswers()
                var configuration = try workerConfiguration(databaseURL: url, apnsURL: apnsURL)
                configuration.apns.streamsPerConnection = 1
                configuration.leaseSeconds = 300
                configuration.sender.requestTimeout = 120
                configuration.withoutProbes()
                try await withWorker(configuration) { _ in
                    try await db.query("INSERT INTO pushq.notifications (device_token, payload, lane) VALUES ($1, '{}', 'default'), ($2, '{}', 'quiet')",
                                       [Self.token(1), Self.token(2)])
                    try await server.waitForRequests(count: 1, timeout: .seconds(60))
                    // Claimed (sending) while the server's clock is still before its window.
                    let claimedBefore = try await eventually(timeout: .seconds(20)) {
                        try await scalar(db, """
                            SELECT count(*) FROM pushq.notifications n, pushq.lanes l
                             WHERE n.lane = 'quiet' AND n.status = 'sending' AND l.name = 'quiet'
                               AND pushq.quiet_until(now(), NULL, l.quiet_start, l.quiet_end) IS NULL
                            """) == 1
                    }
                    try #require(claimedBefore, "the quiet row was not claimed before its window opened (a very slow machine)")
                    // The window opens (by the server's clock) while the row waits for the stream.
                    #expect(try await eventually(timeout: .seconds(60)) {
                        try await scalar(db, """
                            SELECT count(*) FROM pushq.lanes l WHERE l.name = 'quiet' AND pushq.quiet_until(now(), NULL, l.quiet_start, l.quiet_end) IS NOT NULL
                            """) == 1
                    })
                    server.releaseAnswers()
                    // Given back: never sent, attempt refunded, its entry at the window's end.
                    #expect(try await eventually(timeout: .seconds(30)) {
                        try await scalar(db, """
                            SELECT count(*) FROM pushq.notifications n JOIN pushq.due d ON d.id = n.id, pushq.lanes l
                             WHERE n.lane = 'quiet' AND n.status = 'queued' AND n.attempts = 0 AND l.name = 'quiet'
                               AND d.held = 'quiet' AND d.due_at = pushq.quiet_until(now(), NULL, l.quiet_start, l.quiet_end)
                            """) == 1
                    }, "the quiet row is not queued, refunded and held to the window's end")
                    #expect(try await eventually {
                        try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE lane = 'default' AND status = 'sent'") == 1
                    })
                    #expect(server.requests().compactMap(\.deviceToken) == [Self.token(1)], "the quiet row never reached the provider")
                    // And it is not claimed again before the window ends.
                    #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE lane = 'quiet' AND status = 'sending'") == 0)
                }
            }
            await db.close()
        }
    }

    /// rows a worker's claim moved to the end of their lane's quiet hours are counted apart from due rows: in
    /// pushq status (with the lane's window and zone), the dashboard's lanes and pushq_lane_quiet_rows
    @Test("rows waiting for quiet hours: pushq status, the dashboard's lanes and pushq_lane_quiet_rows count them apart from due")
    func visible() async throws {
        typealias M = MetricsEndpointTests
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { server, apnsURL in
                // A window that opened an hour ago in Kolkata; three rows there, one in Kiritimati (outside).
                try await db.query("""
                    INSERT INTO pushq.lanes (name, quiet_start, quiet_end, time_zone)
                    VALUES ('night', ((now() AT TIME ZONE 'Asia/Kolkata') - interval '1 hour')::time,
                            ((now() AT TIME ZONE 'Asia/Kolkata') + interval '1 hour')::time, 'Asia/Kolkata')
                    """)
                try await db.query("""
                    INSERT INTO pushq.notifications (device_token, payload, lane, time_zone)
                    SELECT '7' || lpad(to_hex(g), 63, '0'), '{"aps":{}}', 'night', CASE WHEN g = 3 THEN 'Pacific/Kiritimati' END
                      FROM generate_series(0, 3) g
                    """)
                let url = try await databaseURL(db)
                let (worker, log, base) = try await M().startWorker(url, apnsURL, id: "quiet", extra: [:])
                let text = try await M().poll(timeout: .seconds(60)) { () -> String? in
                    let text = try await M().get(base + "/metrics").1
                    return M.value(text, "pushq_lane_quiet_rows", ["lane": "night"]) == 3 ? text : nil
                }
                #expect(text != nil, "pushq_lane_quiet_rows{lane=\"night\"} never 3")
                #expect(M.value(text ?? "", "pushq_lane_due_rows", ["lane": "night"]) == 0, "not due")
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE lane = 'night' AND status = 'sent'") == 1)
                #expect(server.stats().requests == 1)
                worker.kill(SIGTERM)
                #expect(await worker.wait() == .exit(0), "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")

                var env = ProcessInfo.processInfo.environment
                env["PUSHQ_DATABASE_URL"] = url
                let (ok, out, _) = try await ChildProcess.run(pushqBinary, ["status"], environment: env)
                #expect(ok == .exit(0))
                let line = out.split(separator: "\n").first { $0.hasPrefix("  night ") }.map(String.init) ?? ""
                #expect(line.contains("due 0") && line.range(of: #"quiet hours \d\d:\d\d–\d\d:\d\d Asia/Kolkata: 3 waiting"#, options: .regularExpression) != nil,
                        "\(out)")
                let gauges = try await db.laneGauges().first { $0.name == "night" }
                #expect(gauges?.quietRows == 3 && gauges?.dueRows == 0 && gauges?.quietHours?.hasSuffix(" Asia/Kolkata") == true)
            }
        }
    }
}
