import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// The dashboard's queries (`pushq serve`): what they find, and that they read indexes only.
@Suite("Dashboard queries")
struct DashboardQueryTests {
    static let tokenA = String(repeating: "ab", count: 32)
    static let tokenB = String(repeating: "cd", count: 32)

    /// on a table of a million rows, analysed: every dashboard statement reads an index of notifications,
    /// none scans the table (the walks of the newest rows with enable_seqscan off, as the dashboard runs
    /// them; the others with it on)
    @Test("on a million analysed rows every dashboard statement reads an index of notifications; none scans the table")
    func plansOnAMillionRows() async throws {
        try await TestDatabase.withConnection { c in
            // A day of traffic: 900 000 sent, 60 000 failed, 40 000 waiting in two lanes, with tokens and metadata.
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, status, finished_at, created_at, scheduled_at, last_reason, lane, metadata)
                SELECT lpad(to_hex(g % 200000), 64, '0'), '{}',
                       CASE WHEN g <= 900000 THEN 'sent' WHEN g <= 960000 THEN 'failed' ELSE 'queued' END,
                       CASE WHEN g <= 960000 THEN now() - (g % 86400) * interval '1 second' END,
                       now() - (g % 86400) * interval '1 second', now() - (g % 86400) * interval '1 second',
                       CASE WHEN g > 900000 AND g <= 960000 THEN (ARRAY['Unregistered', 'BadDeviceToken', 'TransportTimeout'])[g % 3 + 1] END,
                       CASE WHEN g % 2 = 0 THEN 'default' ELSE 'campaign' END,
                       jsonb_build_object('campaign', 'c' || (g % 1000), 'order', g)
                  FROM generate_series(1, 1000000) g
                """)
            try await c.execute("VACUUM ANALYZE pushq.notifications")
            #expect(try await c.query("SHOW enable_seqscan").string(0, 0) == "on")
            let whole = try await StatusQueryTests.plan(c, "SELECT count(*) FROM pushq.notifications WHERE metadata @> '{\"order\": 5}'", [])
            #expect(whole.contains("Seq Scan on notifications"), "without a bound the planner scans the table: \(whole)")
            for (sql, parameters, seqscanOff) in PGConnection.dashboardStatements {
                // As the dashboard runs it: the walks of the newest rows with sequential scans off.
                try await c.execute("SET enable_seqscan = \(seqscanOff ? "off" : "on")")
                let plan = try await StatusQueryTests.plan(c, sql, parameters)
                #expect(!plan.contains("Seq Scan on notifications"), "\(sql)\n\(plan)")
                #expect(plan.contains("on notifications_") || plan.contains("using notifications_"), "an index of notifications is used: \(sql)\n\(plan)")
            }
            try await c.execute("SET enable_seqscan = on")
            // The search by token: every row through schema 47's index (by the token's hash); the
            // indexes of schemas 24, 28 and 30, keyed by the token or by status, are gone.
            let byToken = try await StatusQueryTests.plan(c, PGConnection.rowsByTokenSQL, [[Self.tokenA, Self.tokenA.uppercased()], 100])
            #expect(byToken.contains("notifications_token_created"), "\(byToken)")
            #expect(try await c.query("""
                SELECT count(*) FROM pg_indexes
                 WHERE indexname IN ('notifications_device_token', 'notifications_device_token_settled', 'notifications_token_hash')
                """).decode(Int.self, 0, 0) == 0)
            // The plans are those of the queries that run: they answer on this table.
            let failed = try await c.failedRows(reason: "BadDeviceToken", minutes: 1_440, limit: 100)
            #expect(failed.count == 100 && failed.allSatisfy { $0.status == "failed" && $0.lastReason == "BadDeviceToken" })
            let series = try await c.minuteSeries()
            #expect(series.minutes.count == MinuteSeries.minutes)
        }
    }

    @Test("failures: the rows of a reason in the last hour or the day, newest first")
    func failures() async throws {
        try await TestDatabase.withConnection { c in
            try await PruneTests.insert(c, 30, status: "failed", finishedAgo: 600)
            try await PruneTests.insert(c, 20, status: "failed", finishedAgo: 7_200)
            try await PruneTests.insert(c, 500, status: "sent", finishedAgo: 60)
            try await c.query("UPDATE pushq.notifications SET last_reason = 'BadDeviceToken' WHERE status = 'failed' AND finished_at > now() - interval '1 hour' AND id % 3 = 0")
            try await c.query("UPDATE pushq.notifications SET last_reason = 'TransportTimeout' WHERE status = 'failed' AND last_reason IS NULL")
            let rows = try await c.failedRows(reason: "TransportTimeout", minutes: 60, limit: 100)
            #expect(rows.count == 20 && rows.allSatisfy { $0.status == "failed" && $0.lastReason == "TransportTimeout" })
            #expect(zip(rows, rows.dropFirst()).allSatisfy { ($0.finishedAt ?? .distantPast) >= ($1.finishedAt ?? .distantPast) })
            #expect(try await c.failedRows(reason: "TransportTimeout", minutes: 1_440, limit: 5).count == 5)
        }
    }

    /// search: a notification's every column; a token's rows in any case and its devices; a user's devices
    /// and rows; metadata as a string or a number
    @Test("search: a notification's every column; a token's rows and devices; a user's devices and rows; metadata values")
    func search() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.devices (device_token, user_ref, topic) VALUES ($1, 'user-7', 'com.example.app'), ($2, 'user-7', NULL)
                """, [Self.tokenA, Self.tokenB])
            let ids = try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, metadata, lane, dedupe_key)
                VALUES ($1, '{"aps":{"alert":"one"}}', '{"campaign":"spring","order":42}', 'promo', 'k-1'),
                       ($2, '{"aps":{"alert":"two"}}', '{"campaign":"autumn","order":"42"}', 'default', NULL),
                       ($3, '{"aps":{"alert":"three"}}', NULL, 'default', NULL)
                RETURNING id
                """, [Self.tokenA.uppercased(), Self.tokenB, String(repeating: "ef", count: 32)])
            let first = try ids.decode(Int64.self, 0, 0) ?? 0
            let record = try #require(try await c.notificationRecord(id: first))
            #expect(record.columns.map(\.name) == NotificationRecord.names)
            #expect(record["payload"] == #"{"aps":{"alert":"one"}}"# && record["lane"] == "promo" && record["dedupe_key"] == "k-1")
            #expect(record["status"] == "queued" && record["channel"] == nil && record["device_token"] == Self.tokenA.uppercased())
            let columns = try await c.query("""
                SELECT column_name FROM information_schema.columns WHERE table_schema = 'pushq' AND table_name = 'notifications'
                """)
            #expect(Set((0..<columns.count).map { columns.string($0, 0) ?? "" }) == Set(NotificationRecord.names), "every column of the table is shown")
            #expect(try await c.notificationRecord(id: first + 100) == nil)

            let byToken = try await c.rows(forToken: Self.tokenA)
            #expect(byToken.rows.map(\.id) == [first], "stored upper case, found lower case")
            #expect(byToken.devices.map(\.userRef) == ["user-7"])
            let user = try await c.userPage(userRef: "user-7")
            #expect(Set(user.devices.map(\.deviceToken)) == [Self.tokenA, Self.tokenB])
            #expect(user.rows.map(\.id) == [first + 1, first], "newest first, the third row is another user's")
            #expect(try await c.userPage(userRef: "nobody").devices.isEmpty)
            // A row being sent is found as any other (notifications_token_created has every row).
            try await c.query("""
                UPDATE pushq.notifications SET status = 'sending', attempts = 1, locked_by = 'w1', locked_until = now() + interval '1 minute'
                 WHERE id = $1
                """, [first])
            try await c.giveLeaseRows() // the lease row its claim wrote
            #expect(try await c.rows(forToken: Self.tokenA).rows.map { "\($0.id) \($0.status)" } == ["\(first) sending"])
            #expect(try await c.userPage(userRef: "user-7").rows.map(\.id) == [first + 1, first], "in flight or not, newest first")

            #expect(try await c.rows(metadataKey: "campaign", value: "spring").map(\.id) == [first])
            #expect(try await c.rows(metadataKey: "order", value: "42").map(\.id) == [first + 1, first], "the number 42 and the string \"42\"")
            #expect(try await c.rows(metadataKey: "campaign", value: "winter").isEmpty)
        }
    }

    @Test("actions: cancel a lane's waiting rows in batches; pause and resume a lane; lift a hold")
    func actions() async throws {
        try await TestDatabase.with { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await PruneTests.insert(c, 1, status: "sending", finishedAgo: nil, createdAgo: 10)
            try await PruneTests.insert(c, 30_000, status: "queued", finishedAgo: nil, createdAgo: 10)
            try await c.query("UPDATE pushq.notifications SET lane = 'campaign' WHERE status = 'queued' AND id % 5 <> 0")
            let campaign = try await c.query("SELECT count(*) FROM pushq.notifications WHERE lane = 'campaign' AND status = 'queued'").decode(Int.self, 0, 0) ?? 0
            #expect(campaign > PGConnection.laneCancelBatch * 2, "more than two batches")
            let audit = AuditEntry(actor: "ops", keyID: nil, action: "lane.cancel", target: "lane campaign", rows: 0, via: "dashboard")
            #expect(try await c.cancelLane("campaign", audit: audit) == campaign)
            let audited = try await c.query("SELECT sum(rows), count(*) FROM pushq.audit_log WHERE action = 'lane.cancel' AND actor = 'ops'")
            #expect(try audited.decode(Int.self, 0, 0) == campaign && audited.decode(Int.self, 0, 1) == 3, "one audit row per batch, with its rows")
            #expect(try await c.cancelLane("campaign", audit: audit) == 0)
            #expect(try await PruneTests.counts(c)["queued"] == 30_000 - campaign, "the other lane's rows still wait")
            // A row a claim holds locked is skipped, not waited for, and the cancellation ends.
            let late = try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane) SELECT lpad(to_hex(g), 64, 'd'), '{}', 'campaign'
                  FROM generate_series(1, 3) g RETURNING id
                """)
            let held = try late.decode(Int64.self, 0, 0) ?? 0
            let claimer = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await claimer.execute("BEGIN")
            try await claimer.query("SELECT 1 FROM pushq.notifications WHERE id = $1 FOR UPDATE", [held])
            #expect(try await c.cancelLane("campaign", audit: audit) == 2)
            try await claimer.execute("COMMIT")
            await claimer.close()
            #expect(try await c.query("SELECT status FROM pushq.notifications WHERE id = $1", [held]).string(0, 0) == "queued")
            #expect(try await c.cancelLane("campaign", audit: audit) == 1)
            #expect(try await PruneTests.counts(c)["sending"] == 1)

            let pause = AuditEntry(actor: "ops", keyID: nil, action: "lane.pause", target: "lane campaign", rows: 0, via: "dashboard")
            try await c.setLanePaused("campaign", paused: true, audit: pause)
            #expect(try await c.query("SELECT paused FROM pushq.lanes WHERE name = 'campaign'").decode(Bool.self, 0, 0) == true)
            try await c.setLanePaused("campaign", paused: false, audit: pause)
            // `campaign` had no row of its own: the pause made one (copying default's rank and cap,
            // schema 58), and the resume deleted it, so the lane follows `default` again.
            #expect(try await c.query("SELECT count(*) FROM pushq.lanes WHERE name = 'campaign'").decode(Int.self, 0, 0) == 0)
            try await c.query("INSERT INTO pushq.lanes (name, rank) VALUES ('campaign', 150)")
            try await c.setLanePaused("campaign", paused: true, audit: pause)
            try await c.setLanePaused("campaign", paused: false, audit: pause)
            // A lane with a row of its own keeps it, resumed.
            #expect(try await c.query("SELECT paused FROM pushq.lanes WHERE name = 'campaign'").decode(Bool.self, 0, 0) == false)
            #expect(try await c.query("SELECT rank FROM pushq.lanes WHERE name = 'campaign'").decode(Int.self, 0, 0) == 150)

            try await c.query("""
                INSERT INTO pushq.credential_pauses (credential, environment, reason, message, paused_until)
                VALUES ('default', 'production', 'InvalidProviderToken', 'check the key', now() + interval '10 minutes')
                """)
            let lift = AuditEntry(actor: "ops", keyID: nil, action: "hold.lift", target: "hold default production", rows: 0, via: "dashboard")
            #expect(try await c.liftHold(credential: "default", environment: "production", audit: lift))
            #expect(try await c.holds().isEmpty)
            #expect(try await !c.liftHold(credential: "default", environment: "production", audit: lift))
            let log = try await c.query("SELECT action, rows FROM pushq.audit_log WHERE actor = 'ops' ORDER BY id")
            #expect((0..<log.count).map { "\(log.string($0, 0) ?? "") \(log.string($0, 1) ?? "")" }
                    == ["lane.cancel 10000", "lane.cancel 10000", "lane.cancel \(campaign - 20_000)", "lane.cancel 0",
                        "lane.cancel 2", "lane.cancel 1", "lane.pause 1", "lane.pause 1", "lane.pause 1", "lane.pause 1", "hold.lift 1", "hold.lift 0"])
            await c.close()
        }
    }
}
