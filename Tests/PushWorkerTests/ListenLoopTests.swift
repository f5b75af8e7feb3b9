import PGClient
import PushCore
import PushStore
import PushTestSupport
@testable import PushWorker
import Testing

/// The listen loop alone on its connection, against a real PostgreSQL, with a worker that is not
/// running (no claim loop, no sender): what each notice does to the worker is read in its state.
@Suite("Listen loop")
struct ListenLoopTests {
    /// a pause written to pushq.lanes reaches the worker's lane stops; an insert notice marks new
    /// rows for the claim loop; the dashboard's cancel notice records its lane's cancel time; and
    /// after each lane notice the session's last statement is a LISTEN again (how pg_stat_activity
    /// shows a worker's listener)
    @Test("alone on its connection: a pause reaches the lane stops, an insert wakes the claims, a cancel is recorded")
    func noticesReachTheWorker() async throws {
        try await TestDatabase.withConnection { db in
            let url = try await databaseURL(db)
            let worker = PushWorker(configuration: try workerConfiguration(databaseURL: url, apnsURL: "https://127.0.0.1:9"),
                                    logger: quietLogger)
            let connection = try await PGConnection.connect(url, logger: quietLogger)
            let pid = try await connection.query("SELECT pg_backend_pid()").decode(Int.self, 0, 0) ?? 0
            let loop = Task {
                var listens = ListenLoop(worker: worker, connection: connection)
                await listens.run()
            }
            func listening() async throws -> Bool {
                try await scalar(db, "SELECT count(*) FROM pg_stat_activity WHERE pid = \(pid) AND state = 'idle' AND query LIKE 'LISTEN%'") == 1
            }
            #expect(try await eventually(listening), "the listener says LISTEN")

            try await db.query("INSERT INTO pushq.lanes (name, paused) VALUES ('campaign', true)")
            #expect(try await eventually { worker.state.withLock { $0.laneStops.stops("campaign") } }, "the pause reached the worker")
            #expect(!worker.state.withLock { $0.laneStops.stops("digest") })
            #expect(!worker.state.withLock { $0.enqueued }, "a lane change is no new row")
            #expect(try await eventually(listening), "LISTEN again after reading the lanes")

            try await db.query("SELECT pg_notify('pushq_enqueued', '')")
            #expect(try await eventually { worker.state.withLock { $0.enqueued } }, "the insert notice marks new rows for the claim loop")

            #expect(worker.state.withLock { $0.laneCancels["campaign"] } == nil)
            try await db.query("SELECT pg_notify($1, $2)", [LaneStops.laneChannel, LaneStops.cancelPayloadPrefix + "campaign"])
            #expect(try await eventually { worker.state.withLock { $0.laneCancels["campaign"] != nil } }, "the cancel's time is recorded")
            #expect(worker.state.withLock { $0.laneCancels.count } == 1)

            try await db.query("UPDATE pushq.lanes SET paused = false WHERE name = 'campaign'")
            #expect(try await eventually { !worker.state.withLock { $0.laneStops.stops("campaign") } }, "the resume reached the worker")

            worker.requestStop()
            connection.interrupt()
            await loop.value
            await connection.close()
        }
    }
}
