import ChildProcess
import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// A drained worker wakes when the earliest waiting entry of pushq.due comes due (issue 48, quiet
/// hours), not at its next poll: nothing NOTIFYs when a scheduled row, a retry or an entry held to
/// its quiet window's end becomes due.
///
/// Every worker here polls every 120 s, and every bound is 60 s for an entry due in about 2 s: a
/// request before the bound cannot have come from the poll (the worker's last wait before it
/// started after the INSERT's NOTIFY was answered), on any machine however busy, and a worker that
/// waits for its poll fails the test. Nothing is timed against the wall clock beyond that.
@Suite("A drained worker wakes at the next due entry")
struct DrainedWakeTests {
    static let poll = 120.0
    static let bound = Duration.seconds(60)

    static func configuration(_ url: String, _ apnsURL: String) throws -> WorkerConfiguration {
        var configuration = try workerConfiguration(databaseURL: url, apnsURL: apnsURL)
        configuration.pollSeconds = poll
        configuration.withoutProbes()
        return configuration
    }

    /// a row scheduled 1.5 s ahead (its INSERT's NOTIFY comes before it is due) goes out within 60 s with a
    /// 120 s poll: the worker woke for it; and not before its scheduled time
    @Test("a row scheduled 1.5 s ahead is sent without waiting for a 120 s poll")
    func scheduledRow() async throws {
        try await TestDatabase.with { url in
            let db = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await withMock({ $0.recordBodies = false }) { server, apnsURL in
                try await withWorker(try Self.configuration(url, apnsURL)) { _ in
                    try await db.query("""
                        INSERT INTO pushq.notifications (device_token, payload, scheduled_at)
                        VALUES ($1, '{}', now() + interval '1.5 seconds')
                        """, [Fixtures.token(1, prefix: "d")])
                    try await server.waitForRequests(count: 1, timeout: Self.bound)
                    #expect(try await eventually {
                        try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sent' AND finished_at >= scheduled_at") == 1
                    })
                }
            }
            await db.close()
        }
    }

    /// a quiet lane's row is held to its window's end (~2 s away; entry held 'quiet'); it goes out within
    /// 60 s with a 120 s poll, after the window's end. The window is set and the row inserted once the
    /// worker has drained the queue (idle, waiting), so that its claim reaches the row inside the window;
    /// the row is checked to have been inserted inside it
    @Test("a quiet lane's row held to its window's end, 2 s away, is sent without waiting for a 120 s poll")
    func quietWindowEnds() async throws {
        try await TestDatabase.with { url in
            let db = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let before = try await databaseNow(db)
            try await withMock({ $0.recordBodies = false }) { server, apnsURL in
                try await withWorker(try Self.configuration(url, apnsURL)) { _ in
                    // Drained: its claim connection's last statement is the read of the next due entry.
                    let idle = try await finishedStatement(db, startingWith: drainedStatementPrefix, after: before, timeout: Self.bound)
                    try #require(idle != nil, "the worker never claimed")
                    // The window, in UTC (no zone): from an hour ago until 2 s from now.
                    let end = try await db.query("SELECT (clock_timestamp() + interval '2 seconds')::text").string(0, 0) ?? ""
                    try await db.query("""
                        INSERT INTO pushq.lanes (name, quiet_start, quiet_end)
                        VALUES ('quiet', (($1::timestamptz AT TIME ZONE 'UTC') - interval '1 hour')::time, ($1::timestamptz AT TIME ZONE 'UTC')::time)
                        """, [end])
                    try await db.query("INSERT INTO pushq.notifications (device_token, payload, lane) VALUES ($1, '{}', 'quiet')",
                                       [Fixtures.token(2, prefix: "d")])
                    try await server.waitForRequests(count: 1, timeout: Self.bound)
                    #expect(try await eventually {
                        try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sent' AND attempts = 1") == 1
                    })
                    // Inserted inside its window, and not sent before the window's end.
                    #expect(try await scalar(db, """
                        SELECT count(*) FROM pushq.notifications
                         WHERE status = 'sent' AND created_at < '\(end)'::timestamptz AND finished_at >= '\(end)'::timestamptz
                        """) == 1)
                }
            }
            await db.close()
        }
    }

    /// with a row of another credential due now (this worker never claims it) and another credential's
    /// row due in 1 s, the worker claims a handful of times until this credential's row due in 2 s is sent
    /// (the INSERT's NOTIFY, one wake for each future entry); a loop woken by the due-now entry would claim
    /// hundreds of times. Counted by the worker's own pushq_claim_duration_seconds_count, over the interval
    /// from before the INSERT to the request at the mock: no NOTIFY but the INSERT's in it
    @Test("an entry due now that the worker cannot claim does not make it claim again and again")
    func noSpin() async throws {
        typealias M = MetricsEndpointTests
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { server, apnsURL in
                let url = try await databaseURL(db)
                let (worker, log, base) = try await M().startWorker(url, apnsURL, id: "drained",
                                                                      extra: ["PUSHQ_POLL_SECONDS": "\(Int(Self.poll))"])
                // Its first claims are done (it waits for a NOTIFY or the poll).
                let before = try await M().poll(timeout: .seconds(60)) { () -> Double? in
                    let n = M.value(try await M().get(base + "/metrics").1, "pushq_claim_duration_seconds_count")
                    return n >= 1 ? n : nil
                }
                try #require(before != nil, "the worker never claimed")
                try await db.query("""
                    INSERT INTO pushq.notifications (device_token, payload, credential, scheduled_at)
                    VALUES ($1, '{}', 'elsewhere', now()), ($2, '{}', 'elsewhere', now() + interval '1 second'),
                           ($3, '{}', NULL, now() + interval '2 seconds')
                    """, [Fixtures.token(3, prefix: "d"), Fixtures.token(4, prefix: "d"), Fixtures.token(5, prefix: "d")])
                try await server.waitForRequests(count: 1, timeout: Self.bound)
                let after = M.value(try await M().get(base + "/metrics").1, "pushq_claim_duration_seconds_count")
                let claims = Int(after - (before ?? 0))
                // Expected about 3 (or 4 if the metrics were read before the first claims ended); a
                // spinning loop claims every few milliseconds for 2 s.
                #expect(claims >= 1 && claims <= 10, "\(claims) claims between the INSERT and the request")
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE credential = 'elsewhere' AND status = 'queued'") == 2)
                worker.kill(SIGTERM)
                #expect(await worker.wait() == .exit(0), "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }
        }
    }
}
