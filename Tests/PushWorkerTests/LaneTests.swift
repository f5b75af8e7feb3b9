import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// Lanes through real workers and the mock: order between ranks with several workers, a cap
/// held by a fleet that changes, a pause while rows are in flight.
@Suite("Lanes with workers")
struct LaneTests {
    /// Records, in a table of the test's own, every row a claim turns `sending`: its lane and the
    /// claim's transaction start (`now()`, the clock the budgets use) and the moment its rows were
    /// written (`clock_timestamp()`, after the claim's scans). The worker knows nothing of it.
    static func recordClaims(_ db: PGConnection) async throws {
        try await db.execute("""
            CREATE TABLE public.claims (id bigint, lane text, started timestamptz, written timestamptz);
            CREATE FUNCTION public.record_claim() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO public.claims VALUES (NEW.id, NEW.lane, now(), clock_timestamp());
                RETURN NULL;
            END $$;
            CREATE TRIGGER record_claim AFTER UPDATE OF status ON pushq.notifications
                FOR EACH ROW WHEN (NEW.status = 'sending' AND OLD.status <> 'sending') EXECUTE FUNCTION public.record_claim();
            """)
    }

    /// Over every stretch between two claims (recorded by ``recordClaims(_:)``) of the rows of
    /// `credential` (all rows when nil), the most rows claimed beyond what `cap` refills over that
    /// stretch.
    static func mostOverCap(_ db: PGConnection, cap: Double, credential: String? = nil) async throws -> Double {
        try await db.query("""
            WITH c AS (SELECT started, count(*) AS n FROM public.claims c JOIN pushq.notifications n USING (id)
                        WHERE $2::text IS NULL OR n.credential = $2 GROUP BY started),
                 w AS (SELECT a.started AS t0, b.started AS t1,
                              (SELECT sum(n) FROM c WHERE c.started BETWEEN a.started AND b.started) AS n
                         FROM c a JOIN c b ON b.started >= a.started)
            SELECT max(n - $1 * extract(epoch FROM t1 - t0)) FROM w
            """, [cap, credential]).decode(Double.self, 0, 0) ?? .infinity
    }

    /// Starts a worker; the task ends when it stops.
    static func start(_ configuration: WorkerConfiguration) -> (PushWorker, Task<Void, any Error>) {
        let worker = PushWorker(configuration: configuration, logger: quietLogger)
        return (worker, Task { try await worker.run() })
    }

    @Test("three workers: every claim of an urgent row began before any claim of a bulk row wrote, though bulk became due first")
    func strictOrderThreeWorkers() async throws {
        try await TestDatabase.with { url in
            let db = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await Self.recordClaims(db)
            try await db.query("INSERT INTO pushq.lanes (name, rank) VALUES ('bulk', 200), ('urgent', 10)")
            // Bulk became due first: by due time alone it would all go first.
            try await db.execute("""
                INSERT INTO pushq.notifications (device_token, payload, lane, scheduled_at)
                SELECT 'b' || lpad(to_hex(g), 63, '0'), '{"aps":{}}', 'bulk', now() - interval '1 hour' + g * interval '1 ms'
                  FROM generate_series(1, 1500) g;
                INSERT INTO pushq.notifications (device_token, payload, lane, scheduled_at)
                SELECT 'c' || lpad(to_hex(g), 63, '0'), '{"aps":{}}', 'urgent', now() - interval '1 minute'
                  FROM generate_series(1, 300) g
                """)
            try await withMock { _, apnsURL in
                var configurations: [WorkerConfiguration] = []
                for i in 1...3 {
                    var c = try workerConfiguration(databaseURL: url, apnsURL: apnsURL, workerID: "w\(i)")
                    c.claimBatchSize = 50
                    configurations.append(c)
                }
                try await withWorker(configurations[0]) { _ in
                    try await withWorker(configurations[1]) { _ in
                        try await withWorker(configurations[2]) { _ in
                            try await waitUntilAllFinal(db)
                        }
                    }
                }
            }
            // A bulk row may be claimed only once every urgent row is taken: a claim that took
            // bulk rows wrote them after the claim of every urgent row had begun (it found them
            // locked or gone). Were ranks ignored, most bulk rows would be written first.
            let r = try await db.query("""
                SELECT (SELECT max(first) FROM (SELECT min(started) AS first FROM public.claims WHERE lane = 'urgent' GROUP BY id) u)
                       <= (SELECT min(written) FROM public.claims WHERE lane = 'bulk'),
                       (SELECT count(DISTINCT id) FROM public.claims)
                """)
            // (A row given back unsent, its send window over on a busy machine, is claimed again
            // later: its first claim is the one that counts.)
            #expect(r.string(0, 0) == "t", "an urgent row was first claimed after a bulk claim had finished")
            #expect(try r.decode(Int.self, 0, 1) == 1800, "every row claimed")
            #expect(try await statusCounts(db) == ["sent": 1800])
            await db.close()
        }
    }

    /// a lane capped at 100/s: workers starting and stopping never claim more than the cap over any stretch
    /// of time (plus its quarter-second burst)
    @Test("a lane capped at 100/s: workers starting and stopping never claim more than the cap (plus its burst) over any stretch")
    func capHeldByChangingFleet() async throws {
        try await TestDatabase.with { url in
            let db = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await Self.recordClaims(db)
            let cap = 100.0
            try await db.query("INSERT INTO pushq.lanes (name, max_per_second) VALUES ('capped', $1)", [cap])
            try await db.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane)
                SELECT 'd' || lpad(to_hex(g), 63, '0'), '{"aps":{}}', 'capped' FROM generate_series(1, 450) g
                """)
            func claimed() async throws -> Int { try await scalar(db, "SELECT count(*) FROM public.claims") }
            try await withMock { _, apnsURL in
                let (w1, t1) = Self.start(try workerConfiguration(databaseURL: url, apnsURL: apnsURL, workerID: "w1"))
                #expect(try await eventually { try await claimed() >= 100 })
                let (w2, t2) = Self.start(try workerConfiguration(databaseURL: url, apnsURL: apnsURL, workerID: "w2"))
                let (w3, t3) = Self.start(try workerConfiguration(databaseURL: url, apnsURL: apnsURL, workerID: "w3"))
                #expect(try await eventually { try await claimed() >= 250 })
                w1.requestStop()
                try await t1.value
                try await waitUntilAllFinal(db)
                w2.requestStop()
                w3.requestStop()
                try await t2.value
                try await t3.value
            }
            // Over every stretch between two claims, the rows claimed fit in the cap's refill over
            // that stretch plus the burst; the slack (50 ms of the cap, one row) covers a claim
            // that began a moment before another but took the budget after it.
            let worst = try await Self.mostOverCap(db, cap: cap)
            #expect(worst <= cap * 0.25 + cap * 0.05 + 1, "rows over the cap in some stretch: \(worst)")
            #expect(try await statusCounts(db) == ["sent": 450])
            await db.close()
        }
    }

    /// a credential capped at 40/s (the credentials file's max_per_second) by two workers: its rows never go
    /// out faster; every row of both credentials is sent
    @Test("a credential capped at 40/s by two workers never goes out faster; every row of both credentials is sent")
    func credentialCap() async throws {
        try await TestDatabase.with { url in
            let db = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await Self.recordClaims(db)
            let cap = 40.0
            try await db.execute("""
                INSERT INTO pushq.notifications (device_token, payload, credential)
                SELECT 'a' || lpad(to_hex(g), 63, '0'), '{"aps":{}}', 'capped' FROM generate_series(1, 120) g;
                INSERT INTO pushq.notifications (device_token, payload)
                SELECT 'b' || lpad(to_hex(g), 63, '0'), '{"aps":{}}' FROM generate_series(1, 500) g
                """)
            try await withMock { _, apnsURL in
                var configurations: [WorkerConfiguration] = []
                for i in 1...2 {
                    var c = try workerConfiguration(databaseURL: url, apnsURL: apnsURL, workerID: "w\(i)")
                    c.credentials[CredentialKey(.apns, "capped")] = c.credentials[CredentialKey(.apns, WorkerConfiguration.defaultCredentialName)]
                    c.credentialCaps = [RateBudget(provider: .apns, credential: "capped", perSecond: cap)]
                    configurations.append(c)
                }
                try await withWorker(configurations[0]) { _ in
                    try await withWorker(configurations[1]) { _ in
                        try await waitUntilAllFinal(db)
                    }
                }
            }
            let worst = try await Self.mostOverCap(db, cap: cap, credential: "capped")
            #expect(worst <= cap * 0.25 + cap * 0.05 + 1, "rows over the cap in some stretch: \(worst)")
            #expect(try await scalar(db, "SELECT count(DISTINCT c.id) FROM public.claims c JOIN pushq.notifications n USING (id) WHERE n.credential IS NULL") == 500)
            #expect(try await statusCounts(db) == ["sent": 620])
            await db.close()
        }
    }

    /// a default row enqueued while the worker's window is full of campaign rows is claimed at once and goes
    /// out on the next free stream, ahead of the campaign rows already claimed
    @Test("a default row enqueued while the window is full of campaign rows is claimed at once and goes out first")
    func urgentClaimWhileFull() async throws {
        try await TestDatabase.with { url in
            let db = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await Self.recordClaims(db)
            try await db.query("INSERT INTO pushq.lanes (name, rank) VALUES ('campaign', 200)")
            try await db.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane)
                SELECT 'e' || lpad(to_hex(g), 63, '0'), '{"aps":{}}', 'campaign' FROM generate_series(1, 200) g
                """)
            try await withMock { server, apnsURL in
                // 10 streams answered slowly, 50 rows claimed ahead: the window (60) stays full.
                server.answerEverything(with: MockAnswer(kind: .status, status: 200, delayMilliseconds: 1500))
                var configuration = try workerConfiguration(databaseURL: url, apnsURL: apnsURL)
                configuration.apns.streamsPerConnection = 10
                configuration.prefetch = 50
                try await withWorker(configuration) { _ in
                    #expect(try await eventually { try await scalar(db, "SELECT count(*) FROM public.claims") >= 60 })
                    try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ('f' || repeat('0', 63), '{\"aps\":{}}')")
                    #expect(try await eventually { try await scalar(db, "SELECT count(*) FROM public.claims WHERE lane = 'default'") == 1 })
                    server.answerEverything(with: nil)
                    try await waitUntilAllFinal(db)
                }
                // Its claim came while the window was full: it is the 11th request, or near it; claimed only
                // once 15 answers freed room (the smallest claim), it would come after the 20th.
                let order = server.requests().map { $0.deviceToken ?? "" }
                let position = order.firstIndex(of: "f" + String(repeating: "0", count: 63))
                #expect(position.map { $0 <= 15 } == true, "the default row was request \(position.map(String.init) ?? "none") of \(order.count)")
            }
            #expect(try await statusCounts(db) == ["sent": 201])
            await db.close()
        }
    }

    /// pausing a lane while its rows are in flight: those finish sent, no claim begun after the pause takes
    /// its rows, other lanes go on; resumed, the rest is sent
    @Test("pausing a lane with rows in flight: those finish, no later claim takes its rows, others go on; resumed, the rest is sent")
    func pauseInFlight() async throws {
        try await TestDatabase.with { url in
            let db = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await Self.recordClaims(db)
            try await db.query("INSERT INTO pushq.lanes (name) VALUES ('campaign')")
            try await db.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane)
                SELECT 'e' || lpad(to_hex(g), 63, '0'), '{"aps":{}}', 'campaign' FROM generate_series(1, 1000) g
                """)
            try await withMock { server, apnsURL in
                // Answers take a while: rows are in flight when the lane is paused.
                server.answerEverything(with: MockAnswer(kind: .status, status: 200, delayMilliseconds: 1000))
                try await withWorker(try workerConfiguration(databaseURL: url, apnsURL: apnsURL)) { _ in
                    try await server.waitForRequests(count: 1, timeout: .seconds(30))
                    try await db.query("UPDATE pushq.lanes SET paused = true WHERE name = 'campaign'")
                    let pausedAt = try await databaseNow(db)
                    server.answerEverything(with: nil)
                    try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ('f' || repeat('0', 63), '{\"aps\":{}}')")
                    // The default row goes out, through a claim begun after the pause...
                    #expect(try await eventually {
                        try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE lane = 'default' AND status = 'sent'") == 1
                    })
                    // ...and the rows in flight at the pause finish normally.
                    #expect(try await eventually {
                        try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sending'") == 0
                    })
                    #expect(try await scalar(db, "SELECT count(*) FROM public.claims WHERE lane = 'campaign' AND started > '\(pausedAt)'") == 0,
                            "no claim begun after the pause took a campaign row")
                    let counts = try await db.query("""
                        SELECT count(*) FILTER (WHERE n.status = 'sent'), count(*) FILTER (WHERE n.status = 'queued'),
                               (SELECT count(*) FROM public.claims c WHERE c.lane = 'campaign')
                          FROM pushq.notifications n WHERE n.lane = 'campaign'
                        """)
                    let (sent, queued, claimed) = (try counts.decode(Int.self, 0, 0) ?? 0, try counts.decode(Int.self, 0, 1) ?? 0,
                                                   try counts.decode(Int.self, 0, 2) ?? 0)
                    // Rows claimed and not started at the pause went back to waiting (a claim of them
                    // is recorded, and they are queued again).
                    #expect(sent <= claimed && queued == 1000 - sent && queued > 0, "sent \(sent), queued \(queued), claimed \(claimed)")
                    try await db.query("UPDATE pushq.lanes SET paused = false WHERE name = 'campaign'")
                    try await waitUntilAllFinal(db)
                }
            }
            #expect(try await statusCounts(db) == ["sent": 1001])
            await db.close()
        }
    }
}
