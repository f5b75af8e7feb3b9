import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// A cap meters the requests that start, not only the rows claimed: a provider that stalls and
/// then answers everything at once does not turn the rows claimed meanwhile into a burst.
@Suite("Caps pace the sends")
struct PacedSendTests {
    /// The most of `times` (nanoseconds) in any window of `width` nanoseconds.
    static func mostInWindow(_ times: [Int64], width: Int64) -> Int {
        let sorted = times.sorted()
        var worst = 0, first = 0
        for last in sorted.indices {
            while sorted[last] - sorted[first] >= width { first += 1 }
            worst = max(worst, last - first + 1)
        }
        return worst
    }

    /// a lane capped at 50/s whose provider stalls then answers at once: at most 120 requests start in any 2
    /// s (the mock's own times)
    @Test("a lane capped at 50/s whose provider stalls then answers at once: at most 120 requests start in any 2 s")
    func capHoldsThroughStall() async throws {
        try await TestDatabase.with { url in
            let db = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let cap = 50.0, rows = 600
            try await db.query("INSERT INTO pushq.lanes (name, max_per_second) VALUES ('capped', $1)", [cap])
            try await db.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane)
                SELECT 'd' || lpad(to_hex(g), 63, '0'), '{"aps":{}}', 'capped' FROM generate_series(1, $1) g
                """, [rows])
            try await withMock { server, apnsURL in
                var configuration = try workerConfiguration(databaseURL: url, apnsURL: apnsURL)
                // 200 streams and room to hold every row; answers held for as long as the test needs.
                configuration.prefetch = rows - configuration.sender.streamsPerConnection
                configuration.sender.requestTimeout = 60
                configuration.leaseSeconds = 300
                configuration.withoutProbes()
                server.holdAnswers()
                try await withWorker(configuration) { _ in
                    // The provider stalls: the streams fill, and the claim goes on at the cap (the
                    // fleet's budget) until the worker holds 450 rows, 250 more than are on the wire.
                    #expect(try await eventually(timeout: .seconds(90)) {
                        try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sending'") >= 450
                    })
                    server.releaseAnswers()
                    try await waitUntilAllFinal(db)
                }
                // When each request reached the mock, by the mock's own clock: a slow machine
                // only sends fewer in a window, never more.
                let times = server.requests().map(\.receivedMonotonicNanoseconds)
                #expect(times.count == rows)
                let worst = Self.mostInWindow(times, width: 2_000_000_000)
                #expect(worst <= Int(1.2 * 2 * cap), "\(worst) requests started within 2 s against a cap of \(Int(cap))/s")
            }
            #expect(try await statusCounts(db) == ["sent": rows])
            await db.close()
        }
    }
}
