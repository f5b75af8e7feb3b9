import Foundation
import PushStore
import Testing
import PGClient

/// Upgrading a version 3 database to the row constraints of migrations 4 and 5.
@Suite("Migration to row constraints")
struct MigrationRowConstraintTests {
    /// What breaks a constraint, numbered as in `max_attempts` = problem * 10 + status.
    static let problems = ["expires_at infinity", "expires_at -infinity", "scheduled_at infinity", "scheduled_at -infinity",
                           "topic with CR LF", "collapse_id with LF", "credential with CR", "metadata of 70 000 bytes"]
    static let statuses = ["queued", "retrying", "sending", "sent", "failed", "expired", "cancelled"]

    /// a version 3 database with rows that break the constraints, in every status, upgrades: every row kept,
    /// final rows untouched, open rows fixed or ended
    @Test("a version 3 database with rows breaking the constraints upgrades: every row kept, final ones untouched, open ones fixed")
    func upgradeWithBreakingRows() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await c.migrate(Array(Migration.all.prefix(3)), logger: TestDatabase.logger) == [1, 2, 3])
            // Good rows (max_attempts 10), and one row per problem and status (max_attempts problem * 10 + status).
            try await c.execute("""
                INSERT INTO pushq.notifications (device_token, payload, status, attempts, topic, expires_at, collapse_id, metadata)
                SELECT lpad(to_hex(g), 64, 'a'), '{"aps":{"alert":"v3"}}',
                       (ARRAY['queued','retrying','sent','failed','expired','cancelled'])[1 + g % 6], g % 3,
                       CASE WHEN g % 3 = 0 THEN 'com.example.app' END, CASE WHEN g % 2 = 0 THEN now() + interval '1 day' END,
                       CASE WHEN g % 5 = 0 THEN 'group ' || g END, CASE WHEN g % 7 = 0 THEN jsonb_build_object('user', g) END
                  FROM generate_series(1, 2000) g
                """)
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, status, attempts, max_attempts, expires_at, scheduled_at,
                                                 topic, collapse_id, credential, metadata, locked_by, locked_until, last_reason)
                SELECT repeat('b', 64), '{"aps":{}}', s.status, 1, p.n * 10 + s.n,
                       CASE p.n WHEN 1 THEN 'infinity'::timestamptz WHEN 2 THEN '-infinity' END,
                       CASE p.n WHEN 3 THEN 'infinity'::timestamptz WHEN 4 THEN '-infinity' ELSE now() - interval '1 minute' END,
                       CASE WHEN p.n = 5 THEN E'com.example\\r\\napns-priority: 10' END,
                       CASE WHEN p.n = 6 THEN E'a\\nb' END,
                       CASE WHEN p.n = 7 THEN E'team\\r' END,
                       CASE WHEN p.n = 8 THEN jsonb_build_object('k', repeat('x', 70000)) END,
                       CASE WHEN s.status = 'sending' THEN 'old-worker' END,
                       CASE WHEN s.status = 'sending' THEN now() + interval '1 minute' END,
                       'Before'
                  FROM generate_series(1, 8) p(n), unnest($1::text[]) WITH ORDINALITY s(status, n)
                """, [Self.statuses])
            // Columns added since (provider, fcm_message_name, lane, dedupe_key, notify_channel, channel, Web Push's) left out.
            let kept = """
                SELECT md5(string_agg((to_jsonb(n) - 'provider' - 'fcm_message_name' - 'lane' - 'dedupe_key' - 'notify_channel' - 'channel'
                                       - 'webpush_keys' - 'webpush_location' - 'time_zone' - 'user_ref' - 'tenant')::text, ',' ORDER BY id)) FROM pushq.notifications n
                 WHERE max_attempts = 10 OR max_attempts % 10 >= 4
                """
            let before = try await c.query(kept).string(0, 0)
            let count = try await c.query("SELECT count(*) FROM pushq.notifications").decode(Int.self, 0, 0)
            let migratedAfter = try await c.query("SELECT now()").decode(Date.self, 0, 0)!

            #expect(try await c.migrate(logger: TestDatabase.logger) == Migration.all.map(\.version).filter { $0 >= 4 })
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications").decode(Int.self, 0, 0) == count, "every row kept")
            #expect(try await c.query(kept).string(0, 0) == before, "good rows and final rows unchanged, column for column")

            let r = try await c.query("""
                SELECT max_attempts / 10, max_attempts % 10, status, last_reason, locked_by, expires_at::text, scheduled_at,
                       finished_at IS NOT NULL, topic IS NOT NULL OR collapse_id IS NOT NULL OR credential IS NOT NULL OR metadata IS NOT NULL
                  FROM pushq.notifications WHERE max_attempts % 10 BETWEEN 1 AND 3 AND max_attempts > 10 ORDER BY max_attempts
                """)
            #expect(r.count == 8 * 3)
            for row in 0..<r.count {
                let problem = try #require(try r.decode(Int.self, row, 0))
                let was = Self.statuses[try #require(try r.decode(Int.self, row, 1)) - 1]
                let label = "\(Self.problems[problem - 1]), \(was)"
                let status = r.string(row, 2), reason = r.string(row, 3), lockedBy = r.string(row, 4)
                switch problem {
                case 1:  // no expiry: the same meaning, fixed; the row goes on
                    #expect(status == was && reason == "Before" && r.string(row, 5) == nil, "\(label)")
                    #expect(lockedBy == (was == "sending" ? "old-worker" : nil), "\(label)")
                case 2:  // expired before it was written
                    #expect(status == "expired" && reason == "Before" && lockedBy == nil && r.string(row, 7) == "t", "\(label)")
                case 4:  // due at once
                    #expect(status == was && reason == "Before", "\(label)")
                    #expect(try #require(try r.decode(Date.self, row, 6)) >= migratedAfter, "\(label)")
                default:  // ended, with what broke the constraint kept
                    #expect(status == "failed" && reason == "InvalidRow" && lockedBy == nil && r.string(row, 7) == "t", "\(label)")
                    if problem != 3 { #expect(r.string(row, 8) == "t", "\(label)") }
                }
            }
            #expect(Set(RowConstraintTests.names).isSubset(of: try await TableRules.enforced(c)), "validated, or rules of the trigger (56)")
            // A version 3 producer's INSERTs, unchanged.
            try await c.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\":{}}')", [String(repeating: "c", count: 64)])
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, topic, collapse_id, credential, expires_at, metadata)
                VALUES ($1, '{}', 'com.example.x.voip', 'c1', 'other', now() + interval '1 hour', '{"user": 7}')
                """, [String(repeating: "d", count: 64)])
            await c.close()
        }
    }

    @Test("adding the constraints waits for its lock 1 s at a time: a producer is not held up behind a long transaction")
    func lockWaitGivesWay() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let migrator = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await migrator.migrate(Array(Migration.all.prefix(3)), logger: TestDatabase.logger) == [1, 2, 3])
            // A long transaction that read the table: ALTER TABLE must wait for it.
            let reader = try await LockWait.reader(url, reading: "pushq.notifications")
            async let applied = migrator.migrate(logger: TestDatabase.logger)
            let observer = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await LockWait.untilWaiting(observer, on: "pushq.notifications"), "migration 4 waits for the lock")
            // A producer meanwhile: without the 1 s tries it would wait behind the migration until the reader ends
            // (never: the reader ends after it), and its statement timeout would fail it.
            let producer = try await LockWait.produce(url) { producer in
                try await producer.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{}')", [String(repeating: "e", count: 64)])
            }
            #expect(await reader.inTransaction)
            try await reader.execute("COMMIT")  // before any expectation can end the test: the migration waits for it
            #expect(producer.error == nil, "the INSERT waited behind the migration: \(String(describing: producer.error))")
            #expect(try await applied == Migration.all.map(\.version).filter { $0 >= 4 })
            #expect(try await observer.query("SELECT count(*) FROM pushq.notifications").decode(Int.self, 0, 0) == 1)
            for c in [migrator, reader, observer] { await c.close() }
        }
    }
}
