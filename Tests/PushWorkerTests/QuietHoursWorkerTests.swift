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
}
