import Foundation
import PushCore
@testable import PushStore
import Testing
import PGClient

/// pushq.due (schema 33): one entry per waiting row, kept in step by triggers whatever writes the
/// row (producers, workers of this release and of the previous one, operators), claimed from by
/// this release's workers, and swept of entries whose row no longer waits.
@Suite("The due table")
struct DueTableTests {
    /// Each entry of pushq.due as `id lane due_at expires_at status` (its `retrying`, schema 43),
    /// and each waiting row of pushq.notifications the same way: the two must agree.
    static func entries(_ c: PGConnection) async throws -> (due: [String], waiting: [String]) {
        func list(_ sql: String) async throws -> [String] {
            let r = try await c.query(sql)
            return (0..<r.count).map { r.string($0, 0) ?? "" }
        }
        return (try await list("""
                    SELECT concat_ws(' ', id, lane, due_at, expires_at, CASE retrying WHEN true THEN 'retrying' WHEN false THEN 'queued' END)
                      FROM pushq.due ORDER BY id
                    """),
                try await list("""
                    SELECT concat_ws(' ', id, lane, scheduled_at, expires_at, status) FROM pushq.notifications
                     WHERE status IN ('queued', 'retrying') ORDER BY id
                    """))
    }

    static let insert = "INSERT INTO pushq.notifications (device_token, payload, lane, scheduled_at) VALUES ($1, '{}', $2, now() - interval '1 minute') RETURNING id"

    /// every INSERT gives each waiting row it makes one entry, with the row's lane and due time: one row,
    /// many, enqueue_for_user's fan-out
    @Test("every INSERT gives each waiting row one entry with its lane and due time, enqueue_for_user's fan-out too")
    func insertsMakeEntries() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query(Self.insert, [String(repeating: "a", count: 64), "default"])
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, scheduled_at)
                SELECT lpad(to_hex(g), 64, '0'), '{}', CASE WHEN g % 2 = 0 THEN 'bulk' ELSE 'default' END, now() + g * interval '1 second'
                  FROM generate_series(1, 50) g
                """)
            try await c.query("""
                INSERT INTO pushq.devices (user_ref, device_token, environment)
                SELECT 'u1', lpad(to_hex(g), 64, 'c'), 'production' FROM generate_series(1, 3) g
                """)
            try await c.query("SELECT * FROM pushq.enqueue_for_user('u1', '{}')")
            let (due, waiting) = try await Self.entries(c)
            #expect(due.count == 54)
            #expect(due == waiting)
        }
    }

    @Test("an UPDATE that reschedules a waiting row or moves its lane moves its entry; one that cancels it, and expiry, delete it")
    func updatesMoveEntries() async throws {
        try await TestDatabase.withConnection { c in
            var ids: [Int64] = []
            for i in 1...4 {
                ids.append(try await c.query(Self.insert, [String(format: "%064x", i), "default"]).decode(Int64.self, 0, 0) ?? 0)
            }
            try await c.query("UPDATE pushq.notifications SET scheduled_at = now() + interval '1 hour' WHERE id = $1", [ids[0]])
            try await c.query("UPDATE pushq.notifications SET lane = 'bulk' WHERE id = $1", [ids[1]])
            try await c.query("UPDATE pushq.notifications SET status = 'cancelled', finished_at = now() WHERE id = $1", [ids[2]])
            try await c.query("UPDATE pushq.notifications SET expires_at = now() - interval '1 second' WHERE id = $1", [ids[3]])
            #expect(try await c.expireWaiting(limit: 10).reduce(0) { $0 + $1.rows } == 1)
            let (due, waiting) = try await Self.entries(c)
            #expect(due == waiting)
            #expect(due.count == 2 && due[0].hasPrefix("\(ids[0]) default ") && due[1].hasPrefix("\(ids[1]) bulk "), "\(due)")
        }
    }

    /// the claim takes a row's entry; a write-back that retries the row gives it back with the retry's due
    /// time; a sent row has none
    @Test("the claim takes a row's entry; a retrying write-back gives it back with the retry's due time; a sent row has none")
    func claimAndWriteBack() async throws {
        try await TestDatabase.withConnection { c in
            for i in 1...2 { try await c.query(Self.insert, [String(format: "%064x", i), "default"]) }
            let batch = try await c.claim(limit: 10, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production)
            #expect(batch.rows.count == 2)
            #expect(try await Self.entries(c).due == [], "claimed rows have no entry")
            let retry = Disposition(status: .retrying, reason: "InternalServerError", retryDelay: 30)
            let sent = Disposition(status: .sent, reason: nil)
            let completions = zip(batch.rows, [retry, sent]).map { row, disposition in
                RowCompletion(id: row.id, attempt: row.attempts, lease: row.lease, disposition: disposition, httpStatus: 500, apnsUniqueID: nil)
            }
            #expect(try await c.complete(completions, invalidations: [], holds: [], resumed: [], workerID: "w1").updated == 2)
            let (due, waiting) = try await Self.entries(c)
            #expect(due == waiting && due.count == 1 && due[0].hasPrefix("\(batch.rows[0].id) default "), "\(due)")
            let later = try await c.query("SELECT due_at > now() + interval '20 seconds' FROM pushq.due").decode(Bool.self, 0, 0)
            #expect(later == true, "due when the retry is")
            #expect(try await c.claim(limit: 10, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production).rows.isEmpty,
                    "not before its due time")
        }
    }

    /// a row a worker of the previous release claims keeps an entry that this release's claim skips and the
    /// sweep deletes; when that worker retries it, the row is waiting again and claimed
    @Test("a previous release's claimed row keeps an entry this claim skips and the sweep deletes; its retry makes it due again")
    func previousReleaseWorker() async throws {
        try await TestDatabase.withConnection { c in
            var ids: [Int64] = []
            for i in 1...3 { ids.append(try await c.query(Self.insert, [String(format: "%064x", i), "default"]).decode(Int64.self, 0, 0) ?? 0) }
            let old = try await PreviousRelease.claim(c, workerID: "old", leaseSeconds: 60)
            #expect(old.map(\.id).sorted() == ids, "the previous release claims through its own indexes")
            #expect(try await Self.entries(c).due.count == 3, "it leaves the entries behind")
            #expect(try await c.claim(limit: 10, workerID: "new", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production).rows.isEmpty,
                    "this release's claim skips entries of rows in flight")
            // Its write-back: the first retried now, the others sent.
            let completions = old.enumerated().map { i, row in
                RowCompletion(id: row.id, attempt: row.attempts, lease: row.lease,
                              disposition: i == 0 ? Disposition(status: .retrying, reason: "InternalServerError", retryDelay: 0) : Disposition(status: .sent, reason: nil),
                              httpStatus: i == 0 ? 500 : 200, apnsUniqueID: nil)
            }
            #expect(try await c.complete(completions, invalidations: [], holds: [], resumed: [], workerID: "old").updated == 3)
            #expect(try await c.sweepDue(limit: 100) == 2, "the sent rows' entries are deleted")
            let (due, waiting) = try await Self.entries(c)
            #expect(due == waiting && due.count == 1)
            let retaken = try await c.claim(limit: 10, workerID: "new", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production)
            #expect(retaken.rows.map(\.id) == [ids[0]], "the retried row is claimed by this release")
            #expect(try await c.sweepDue(limit: 100) == 0)
        }
    }

    /// the sweep deletes the entries of rows deleted while waiting and of rows no longer waiting, leaves
    /// waiting rows' entries, and skips a row another transaction holds
    @Test("the sweep deletes entries of deleted or no longer waiting rows, keeps waiting ones, and skips locked rows")
    func sweep() async throws {
        try await TestDatabase.with { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            var ids: [Int64] = []
            for i in 1...4 { ids.append(try await c.query(Self.insert, [String(format: "%064x", i), "default"]).decode(Int64.self, 0, 0) ?? 0) }
            try await c.query("DELETE FROM pushq.notifications WHERE id = $1", [ids[0]])
            // As a worker of the previous release marks the rows it claims.
            try await c.query("UPDATE pushq.notifications SET status = 'sending', locked_by = 'old', locked_until = now() + interval '1 minute', attempts = 1 WHERE id = ANY($1)",
                              [[ids[1], ids[2]]])
            let holder = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await holder.execute("BEGIN")
            try await holder.query("SELECT 1 FROM pushq.notifications WHERE id = $1 FOR UPDATE", [ids[2]])
            #expect(try await c.sweepDue(limit: 100) == 2, "the deleted row's and the unheld claimed row's")
            #expect(try await c.query("SELECT array_agg(id ORDER BY id) FROM pushq.due").string(0, 0) == "{\(ids[2]),\(ids[3])}")
            try await holder.execute("COMMIT")
            #expect(try await c.sweepDue(limit: 100) == 1, "the held row's, once it is not held")
            #expect(try await Self.entries(c).due.count == 1)
            for connection in [holder, c] { await connection.close() }
        }
    }

    // Rows as 0.3.0 (schema 11) left them: no lanes yet, so every row is in 'default'.
    @Test("a 0.3.0 database with waiting, in-flight and final rows upgrades: pushq.due holds its waiting rows, claimed in due order")
    func upgradeFills() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let released = Migration.all.filter { $0.version <= SchemaHistory.release030 }
            #expect(try await c.migrate(released, logger: TestDatabase.logger) == Array(1...11))
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, status, scheduled_at, attempts, locked_by, locked_until, finished_at,
                                                 expires_at)
                SELECT lpad(to_hex(g), 64, '0'), '{}', (ARRAY['queued', 'retrying', 'sending', 'sent', 'failed'])[g % 5 + 1],
                       now() - g * interval '1 second', CASE WHEN g % 5 >= 1 THEN 1 ELSE 0 END,
                       CASE WHEN g % 5 = 2 THEN 'old' END, CASE WHEN g % 5 = 2 THEN now() + interval '1 hour' END,
                       CASE WHEN g % 5 >= 3 THEN now() END,
                       CASE WHEN g % 3 = 0 THEN now() + g * interval '1 hour' END
                  FROM generate_series(1, 100) g
                """)
            #expect(try await c.migrate(logger: TestDatabase.logger) == Migration.all.map(\.version).filter { $0 > 11 })
            let (due, waiting) = try await Self.entries(c)
            #expect(due.count == 40 && due == waiting, "each entry with its row's lane, due time and expiry")
            #expect(try await c.query("SELECT count(*) FROM pushq.due WHERE expires_at IS NOT NULL").decode(Int.self, 0, 0) == 13)
            let expected = try await c.query("""
                SELECT string_agg(id::text, ',' ORDER BY scheduled_at, id) FROM pushq.notifications WHERE status IN ('queued', 'retrying')
                """).string(0, 0)
            let batch = try await c.claim(limit: 100, workerID: "new", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production)
            #expect(batch.rows.map { String($0.id) }.joined(separator: ",") == expected)
            #expect(try await Self.entries(c).due == [])
            await c.close()
        }
    }

    @Test("on a large analysed table, the sweep reads pushq.due and pushq.notifications by index only, never whole")
    func sweepPlan() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, status, finished_at)
                SELECT lpad(to_hex(g), 64, '0'), '{}', CASE WHEN g % 10 = 0 THEN 'queued' ELSE 'sent' END,
                       CASE WHEN g % 10 = 0 THEN NULL ELSE now() END
                  FROM generate_series(1, 100000) g
                """)
            try await c.query("ANALYZE pushq.notifications, pushq.due")
            let r = try await c.query("EXPLAIN (FORMAT JSON) " + PGConnection.sweepDueSQL, [1000])
            let plan = try JSONSerialization.jsonObject(with: Data((r.string(0, 0) ?? "").utf8))
            #expect(ClaimPlanTests.tableScans(plan) == [], "\(r.string(0, 0) ?? "")")
            #expect(try await c.sweepDue(limit: 1000) == 0, "every entry's row waits")
        }
    }

    /// The statement docs/upgrading.md gives for rows written with triggers disabled.
    static let refill = """
        INSERT INTO pushq.due (id, lane, due_at, expires_at, retrying, tenant)
        SELECT id, lane, scheduled_at, expires_at, status = 'retrying', tenant FROM pushq.notifications WHERE status IN ('queued', 'retrying')
        ON CONFLICT (id) DO NOTHING;
        """

    /// on a large analysed table, the expiry of rows no worker claims walks due_expiry and reads rows by
    /// primary key, never a table whole; it ends only waiting rows past their expiry
    @Test("the expiry of unclaimed rows walks due_expiry by primary key, never a whole table, and ends only expired waiting rows")
    func expiryPlan() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, status, finished_at, expires_at)
                SELECT lpad(to_hex(g), 64, '0'), '{}', CASE WHEN g % 10 = 0 THEN 'queued' ELSE 'sent' END,
                       CASE WHEN g % 10 = 0 THEN NULL ELSE now() END,
                       CASE WHEN g % 1000 = 0 THEN now() - interval '1 second' WHEN g % 7 = 0 THEN now() + interval '1 hour' END
                  FROM generate_series(1, 100000) g
                """)
            try await c.query("ANALYZE pushq.notifications, pushq.due")
            let r = try await c.query("EXPLAIN (FORMAT JSON) " + PGConnection.expireWaitingSQL, [1000])
            let text = r.string(0, 0) ?? ""
            let plan = try JSONSerialization.jsonObject(with: Data(text.utf8))
            #expect(ClaimPlanTests.tableScans(plan) == [], "\(text)")
            #expect(text.contains("due_expiry"), "\(text)")
            #expect(try await c.expireWaiting(limit: 1000).reduce(0) { $0 + $1.rows } == 100, "the waiting rows past expiry, not the sent ones")
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications WHERE status = 'expired'").decode(Int.self, 0, 0) == 100)
        }
    }

    /// entries whose row cannot expire (deleted while waiting, in flight) ahead in expiry order are passed
    /// over: the expiry still ends the rows behind them
    @Test("stale entries ahead in expiry order are passed over: the expiry still ends the rows behind them")
    func expiryPassesOverStaleEntries() async throws {
        try await TestDatabase.withConnection { c in
            // 600 rows waiting, due in two days, whose expiry passed an hour ago, then deleted: their entries stay.
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, scheduled_at, expires_at)
                SELECT lpad(to_hex(g), 64, 'a'), '{}', now() + interval '2 days', now() - interval '1 hour' FROM generate_series(1, 600) g
                """)
            try await c.query("DELETE FROM pushq.notifications")
            // 30 rows in flight whose entry (from before their claim) kept an expiry that passed.
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, status, attempts, locked_by, locked_until, expires_at)
                SELECT lpad(to_hex(g), 64, 'b'), '{}', 'sending', 1, 'w', now() + interval '1 minute', now() - interval '30 minutes'
                  FROM generate_series(1, 30) g
                """)
            try await c.query("""
                INSERT INTO pushq.due (id, lane, due_at, expires_at)
                SELECT id, lane, now() - interval '1 hour', expires_at FROM pushq.notifications WHERE status = 'sending'
                """)
            // 50 waiting rows past their expiry, later in expiry order.
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, expires_at)
                SELECT lpad(to_hex(g), 64, 'c'), '{}', now() - interval '1 minute' FROM generate_series(1, 50) g
                """)
            #expect(try await c.expireWaiting(limit: 500).reduce(0) { $0 + $1.rows } == 50)
            #expect(try await c.query("SELECT string_agg(DISTINCT status, ',') FROM pushq.notifications").string(0, 0) == "expired,sending")
        }
    }

    @Test("a row written with triggers disabled has no entry and is not claimed until docs/upgrading.md's statement gives it one")
    func triggersDisabled() async throws {
        let doc = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../docs/upgrading.md").standardizedFileURL, encoding: .utf8)
        #expect(doc.contains("```sql\n" + Self.refill + "\n```"), "upgrading.md gives the statement tested here")
        try await TestDatabase.withConnection { c in
            try await c.query(Self.insert, [String(repeating: "b", count: 64), "default"])
            try await c.execute("SET session_replication_role = replica")
            let replicated = try await c.query(Self.insert, [String(repeating: "c", count: 64), "default"]).decode(Int64.self, 0, 0)
            try await c.execute("RESET session_replication_role")
            #expect(try await Self.entries(c).due.count == 1)
            let first = try await c.claim(limit: 10, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production)
            #expect(first.rows.count == 1 && first.rows[0].id != replicated)
            try await c.execute(Self.refill)
            let (due, waiting) = try await Self.entries(c)
            #expect(due == waiting && due.count == 1)
            let second = try await c.claim(limit: 10, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production)
            #expect(second.rows.map(\.id) == [replicated].compactMap { $0 })
        }
    }
}
