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

    /// Where the worst window of `width` begins, in milliseconds after `releasedAt`.
    static func worstWindowStart(_ times: [Int64], width: Int64, releasedAt: Int64) -> Int64 {
        let sorted = times.sorted()
        var worst = 0, first = 0, at: Int64 = 0
        for last in sorted.indices {
            while sorted[last] - sorted[first] >= width { first += 1 }
            if last - first + 1 > worst { worst = last - first + 1; at = sorted[first] }
        }
        return (at - releasedAt) / 1_000_000
    }

    /// `rows` waiting rows go out through a worker whose provider stalls (every answer held) until
    /// the worker holds 450 of them, 250 more than are on the wire, and then answers everything at
    /// once. Returns when each request reached the mock, by the mock's own clock, when the answers
    /// were released, and when the mock had written the last of them.
    static func stallThenAnswer(_ db: PGConnection, url: String, rows: Int,
                                configure: (inout WorkerConfiguration) -> Void = { _ in }) async throws -> Stall {
        try await withMock { server, apnsURL in
            var configuration = try workerConfiguration(databaseURL: url, apnsURL: apnsURL)
            // 200 streams and room to hold every row; answers held for as long as the test needs.
            configuration.prefetch = rows - configuration.apns.streamsPerConnection
            configuration.sender.requestTimeout = 60
            configuration.leaseSeconds = 300
            configuration.withoutProbes()
            configure(&configuration)
            server.holdAnswers()
            var releasedAt: Int64 = 0
            try await withWorker(configuration) { _ in
                // The provider stalls: the streams fill, and the claim goes on at the cap (the
                // fleet's budget) until the worker holds 450 rows, 250 more than are on the wire.
                #expect(try await eventually(timeout: .seconds(90)) {
                    try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sending'") >= 450
                })
                releasedAt = MockClock.monotonicNanoseconds()
                server.releaseAnswers()
                try await waitUntilAllFinal(db)
            }
            return Stall(times: server.requests().map(\.receivedMonotonicNanoseconds), releasedAt: releasedAt,
                         writtenAt: server.lastHeldAnswerWrittenNanoseconds)
        }
    }

    /// What ``stallThenAnswer(_:url:rows:configure:)`` saw, by the mock's clock (nanoseconds).
    struct Stall {
        /// When each request was read.
        var times: [Int64]
        /// When the answers were released, and when the last of them was written.
        var releasedAt: Int64, writtenAt: Int64
    }

    /// Expects at most 1.2 × 2 × `cap` of the requests in any 2 s (the bound), plus what the
    /// mock's own stamps cannot place.
    ///
    /// The mock writes the 200 held answers (one task and one flush each) on its event loop
    /// before it reads what arrived meanwhile, so the requests the worker started in that time
    /// are stamped late, together: measured idle, 0 in the first 100 ms bin after the release,
    /// 10 in the second, then 5 (the cap) in every bin; on a loaded machine the writing takes
    /// longer and more requests share one stamp. Those are at most `cap` × the writing time (the
    /// worker's bucket keeps one token at most, ``SendPacer/burstSeconds`` of the cap, and spends
    /// it only on a free stream), so that many are allowed beside the bound: the instrument's
    /// uncertainty, read from the mock, not a margin chosen for the machine. A worker whose
    /// pacer is blind to the cap starts 363 in 2 s.
    static func expectCapHeld(_ stall: Stall, cap: Double, rows: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(stall.times.count == rows, sourceLocation: sourceLocation)
        let width: Int64 = 2_000_000_000
        let worst = mostInWindow(stall.times, width: width)
        let writing = Double(max(0, stall.writtenAt - stall.releasedAt)) / 1e9
        let unplaceable = Int((cap * writing).rounded(.up))
        #expect(worst <= Int(1.2 * 2 * cap) + unplaceable,
                "\(worst) requests started within 2 s against a cap of \(Int(cap))/s (from \(worstWindowStart(stall.times, width: width, releasedAt: stall.releasedAt)) ms after the release; the mock wrote the held answers for \(Int(writing * 1000)) ms)",
                sourceLocation: sourceLocation)
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
            let stall = try await Self.stallThenAnswer(db, url: url, rows: rows)
            Self.expectCapHeld(stall, cap: cap, rows: rows)
            #expect(try await statusCounts(db) == ["sent": rows])
            await db.close()
        }
    }

    /// a credential capped at 50/s (its max_per_second), in a lane without a cap, whose provider stalls then
    /// answers at once: the cap meters the sends, not only the claims
    @Test("a credential capped at 50/s whose provider stalls then answers at once: at most 120 requests start in any 2 s")
    func credentialCapHoldsThroughStall() async throws {
        try await TestDatabase.with { url in
            let db = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let cap = 50.0, rows = 600
            try await db.query("""
                INSERT INTO pushq.notifications (device_token, payload)
                SELECT 'e' || lpad(to_hex(g), 63, '0'), '{"aps":{}}' FROM generate_series(1, $1) g
                """, [rows])
            let stall = try await Self.stallThenAnswer(db, url: url, rows: rows) { c in
                // The credentials file's max_per_second of the one credential the rows use.
                c.credentialCaps = [RateBudget(provider: .apns, credential: WorkerConfiguration.defaultCredentialName, perSecond: cap)]
            }
            Self.expectCapHeld(stall, cap: cap, rows: rows)
            #expect(try await statusCounts(db) == ["sent": rows])
            await db.close()
        }
    }
}
