import Foundation
import InMemoryLogging
import Logging
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// A lane cancelled while a worker's claim of its rows is in flight: the cancel skips the rows
/// that claim has locked (`SKIP LOCKED`), and the claim hands them to the worker only after the
/// worker has heard the cancel. They must end `cancelled`, never sent.
///
/// The claim is held in the middle of its statement by a lock the test holds: the claim locks the
/// lane's rows, then waits to delete a `pushq.due` entry the test has locked. Every step is an
/// event the test waits for (the claim waiting in `pg_locks`, the worker's log line for the
/// notice, the rows' final status); nothing depends on the machine's speed.
@Suite("A lane cancel racing a claim")
struct LaneCancelRaceTests {
    static let rows = 20

    /// a lane cancelled while a claim of its rows waits mid-statement: once the claim returns, its rows end
    /// cancelled, none is sent
    @Test("a lane cancelled while a claim of its rows waits mid-statement: once it returns, its rows end cancelled, none sent")
    func cancelDuringClaim() async throws {
        try await TestDatabase.with { url in
            let db = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await db.query("INSERT INTO pushq.lanes (name) VALUES ('c')")
            try await db.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane)
                SELECT 'c' || lpad(to_hex(g), 63, '0'), '{"aps":{}}', 'c' FROM generate_series(1, $1) g
                """, [Self.rows])
            // The test's lock: one of the lane's entries of pushq.due. The claim reads the entries
            // unlocked, locks every row it takes, then deletes their entries and waits on this one.
            let blocker = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await blocker.execute("BEGIN")
            try await blocker.query("SELECT id FROM pushq.due WHERE lane = 'c' ORDER BY due_at, id LIMIT 1 FOR UPDATE")
            let blockerPID = try await scalar(blocker, "SELECT pg_backend_pid()")

            try await withMock { server, apnsURL in
                var configuration = try workerConfiguration(databaseURL: url, apnsURL: apnsURL)
                configuration.withoutProbes()
                let logs = InMemoryLogHandler()
                var logger = Logger(label: "pushq.test") { _ in logs }
                logger.logLevel = .info
                let worker = PushWorker(configuration: configuration, logger: logger)
                let task = Task { try await worker.run() }
                defer { worker.requestStop() }

                // The claim waits on the test's lock, holding the lane's rows; the listener listens
                // on the lanes' channel (else it would read the lanes, not hear the cancel).
                #expect(try await eventually(timeout: .seconds(60)) {
                    try await scalar(db, "SELECT count(*) FROM pg_stat_activity WHERE \(blockerPID) = ANY (pg_blocking_pids(pid))") == 1
                }, "a claim waits on the test's lock")
                #expect(try await eventually(timeout: .seconds(60)) {
                    try await scalar(db, """
                        SELECT count(*) FROM pg_stat_activity
                         WHERE datname = current_database() AND query ILIKE 'LISTEN%pushq_lanes%'
                        """) == 1
                }, "the worker listens on pushq_lanes")

                // The dashboard's "Cancel waiting rows" (the statement it runs): it skips every
                // row, all locked by the claim in flight.
                let cancelled = try await db.cancelLane("c", audit: AuditEntry(actor: "test", keyID: nil, action: "lane.cancel",
                                                                               target: "lane c", rows: 0, via: "dashboard"))
                #expect(cancelled == 0, "the claim holds every row of the lane")
                let heard = try await eventually(timeout: .seconds(60)) {
                    logs.entries.contains { "\($0.message)".hasPrefix("lane cancelled") && $0.metadata["lane"] == "c" }
                }
                #expect(heard, "the worker handled the cancel notice: \(logs.entries.map { "\($0.message)" })")

                // The claim goes on and returns the rows to a worker that has heard the cancel.
                try await blocker.execute("ROLLBACK")
                try await waitUntilAllFinal(db)
                let lane = try await LaneKillSwitchTests.laneRows(db)
                #expect(lane == ["cancelled/0": Self.rows], "rows of the cancelled lane: \(lane)")
                // Final rows are never sent again: what the mock received is all it will.
                #expect(server.stats().requests == 0, "\(server.stats().requests) requests of the cancelled lane reached the provider")
                worker.requestStop()
                try await task.value
            }
            await blocker.close()
            await db.close()
        }
    }
}
