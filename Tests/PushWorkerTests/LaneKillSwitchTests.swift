import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// A pause or a lane cancel stops what a worker already holds: the rows it claimed and has not
/// started go back to waiting (or end `cancelled`), only the requests on the wire finish.
///
/// The mock holds every answer (a provider that stalls) until the test releases them, so the
/// window is full and nothing is answered when the lane changes: the requests on the wire at that
/// moment are exactly those the mock has received, and any request the mock sees afterwards
/// started after the change. Nothing depends on how fast the machine is.
@Suite("Lane pause and cancel stop what a worker holds")
struct LaneKillSwitchTests {
    /// Streams of the worker's one connection: the requests on the wire while answers are held.
    static let streams = 10
    /// What the worker holds: the window and a prefetch that waits in the sender's queue.
    static let held = 500
    static let rows = 2000

    static func configuration(databaseURL: String, apnsURL: String) throws -> WorkerConfiguration {
        var c = try workerConfiguration(databaseURL: databaseURL, apnsURL: apnsURL)
        c.apns.streamsPerConnection = streams
        c.prefetch = held - streams
        // Claims of 100 fill the 500 exactly (a claim waits for room for the smallest claim).
        c.claimBatchSize = 100
        // Answers are held as long as the test needs: no request times out, no lease runs out,
        // no row waits past its send-by time (235 s).
        c.sender.requestTimeout = 60
        c.leaseSeconds = 300
        c.withoutProbes()
        return c
    }

    /// Lane `c`'s rows by status and attempts: `status/attempts → count`.
    static func laneRows(_ db: PGConnection) async throws -> [String: Int] {
        let r = try await db.query("SELECT status || '/' || attempts, count(*)::bigint FROM pushq.notifications WHERE lane = 'c' GROUP BY 1")
        var out: [String: Int] = [:]
        for i in 0..<r.count { out[r.string(i, 0) ?? ""] = try r.decode(Int.self, i, 1) }
        return out
    }

    /// 2 000 rows of lane `c` (a row of pushq.lanes), a worker holding 500 of them with 10 on the
    /// wire and their answers held; then `change` (the pause or the cancel) and `check`.
    static func withHeldLane(_ change: @escaping (PGConnection) async throws -> Void,
                             check: @escaping (PGConnection, MockPushServer, Int) async throws -> Void) async throws {
        try await TestDatabase.with { url in
            let db = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await db.query("INSERT INTO pushq.lanes (name) VALUES ('c')")
            try await db.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane)
                SELECT 'c' || lpad(to_hex(g), 63, '0'), '{"aps":{}}', 'c' FROM generate_series(1, $1) g
                """, [rows])
            try await withMock { server, apnsURL in
                server.holdAnswers()
                try await withWorker(try configuration(databaseURL: url, apnsURL: apnsURL)) { _ in
                    try await server.waitForRequests(count: streams, timeout: .seconds(60))
                    #expect(try await eventually(timeout: .seconds(60)) {
                        try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sending'") == held
                    }, "the worker holds \(held) rows")
                    try await change(db)
                    // The window is full and nothing was answered: what the mock has received is
                    // what is on the wire (no request can start before a stream comes free).
                    let onWire = server.stats().requests
                    #expect(onWire == streams)
                    try await check(db, server, onWire)
                }
            }
            await db.close()
        }
    }

    /// a lane paused while a worker holds 500 of its rows: the 10 on the wire finish, no other starts, the
    /// 490 go back unspent; resumed, each row is sent once
    @Test("a lane paused while a worker holds 500 rows: the 10 on the wire finish, the rest go back unspent; resumed, sent once")
    func pauseStopsHeldRows() async throws {
        try await Self.withHeldLane({ db in
            try await db.query("UPDATE pushq.lanes SET paused = true WHERE name = 'c'")
        }, check: { db, server, onWire in
            // The worker gives back, in one fenced write-back, every row it claimed and had not
            // started: only the rows on the wire stay `sending`. Awaited in the table.
            let givenBack = try await eventually(timeout: .seconds(20)) {
                try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sending'") == onWire
            }
            let afterPause = try await Self.laneRows(db)
            #expect(givenBack, "rows of the paused lane still held unsent: \(afterPause)")
            server.releaseAnswers()
            #expect(try await eventually { try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sending'") == 0 })
            let startedAfter = server.stats().requests - onWire
            #expect(startedAfter == 0, "\(startedAfter) requests of the paused lane started after the pause (\(onWire) were on the wire)")
            // Sent once each, or back waiting with the attempt the claim counted refunded.
            #expect(try await Self.laneRows(db) == ["sent/1": onWire, "queued/0": Self.rows - onWire])

            try await db.query("UPDATE pushq.lanes SET paused = false WHERE name = 'c'")
            try await waitUntilAllFinal(db)
            let tokens = server.requests().compactMap(\.deviceToken)
            #expect(tokens.count == Self.rows && Set(tokens).count == Self.rows, "every row sent exactly once after the resume")
            #expect(try await Self.laneRows(db) == ["sent/1": Self.rows])
        })
    }

    /// a lane cancelled from the dashboard while a worker holds 500 of its rows: the 10 on the wire end sent,
    /// the rest end cancelled, none starts after
    @Test("a lane cancelled from the dashboard while a worker holds 500 rows: the 10 on the wire end sent, the rest cancelled")
    func dashboardCancelEndsHeldRows() async throws {
        try await Self.withHeldLane({ db in
            // The dashboard's "Cancel waiting rows" (the statement it runs).
            let cancelled = try await db.cancelLane("c", audit: AuditEntry(actor: "test", keyID: nil, action: "lane.cancel",
                                                                           target: "lane c", rows: 0, via: "dashboard"))
            #expect(cancelled == Self.rows - Self.held)
        }, check: { db, server, onWire in
            let ended = try await eventually(timeout: .seconds(20)) {
                try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'cancelled'") == Self.rows - onWire
            }
            let afterCancel = try await Self.laneRows(db)
            #expect(ended, "rows of the cancelled lane still held unsent: \(afterCancel)")
            server.releaseAnswers()
            #expect(try await eventually { try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sending'") == 0 })
            let startedAfter = server.stats().requests - onWire
            #expect(startedAfter == 0, "\(startedAfter) requests of the cancelled lane started after the cancel (\(onWire) were on the wire)")
            // The rows on the wire end with the provider's answer; the others were never sent.
            #expect(try await Self.laneRows(db) == ["sent/1": onWire, "cancelled/0": Self.rows - onWire])
        })
    }
}
