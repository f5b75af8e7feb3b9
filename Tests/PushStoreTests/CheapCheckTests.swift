import PushStore
import Testing
import PGClient

/// Migration 25: the topic, lane and notify-channel rules without bounded repetitions, which
/// PostgreSQL's regular expressions expand into a state per repetition and which every claim
/// and write-back paid (docs/performance.md). Each rule admits what it admitted before; what
/// they refuse is in ``RowConstraintTests/badRows``.
@Suite("Cheap row checks")
struct CheapCheckTests {
    @Test("what the old rules admitted, the new ones admit: the longest names, every character of each class")
    func admittedAsBefore() async throws {
        try await TestDatabase.withConnection { c in
            let rows: [[String: String?]] = [
                ["lane": String(repeating: "l", count: 64)],
                ["lane": "ABCXYZabcxyz0189_.:-"],
                ["lane": "x"],
                ["topic": String(repeating: "t", count: 255)],
                ["topic": "ABCXYZabcxyz0189._-"],
                ["topic": "t"],
                ["notify_channel": "_" + String(repeating: "z", count: 62)],
            ]
            for row in rows {
                let id = try await SchemaConstraintTests.insert(c, row)
                let (column, value) = try #require(row.first)
                #expect(try await c.query("SELECT \(column) FROM pushq.notifications WHERE id = $1", [id]).string(0, 0) == value)
            }
        }
    }

    /// no rule of pushq.notifications (its CHECK constraints, its rules trigger) uses a bounded repetition in
    /// a regular expression, and every constraint is validated
    @Test("no rule of pushq.notifications uses a bounded repetition in a regex, and every constraint is validated")
    func noBoundedRepetition() async throws {
        try await TestDatabase.withConnection { c in
            // Since schema 56 most rules are one `WHEN (…) IS FALSE THEN '<name>'` each in pushq.notifications_rules().
            let r = try await c.query("""
                SELECT conname, pg_get_constraintdef(oid), convalidated FROM pg_constraint
                 WHERE conrelid = 'pushq.notifications'::regclass AND contype = 'c'
                UNION ALL SELECT m[2], m[1], true FROM pg_proc p,
                      regexp_matches(p.prosrc, 'WHEN (.*?) IS FALSE\\s+THEN ''(notifications_[a-z0-9_]+)''', 'g') m
                 WHERE p.oid = 'pushq.notifications_rules'::regproc
                ORDER BY 1
                """)
            // 31 + notifications_notify_channel_reserved (0.4.0) + Web Push's six (migration 105).
            #expect(r.count >= 38 && (0..<r.count).filter { (r.string($0, 0) ?? "").hasPrefix("notifications_webpush_") }.count == 6)
            for row in 0..<r.count {
                let name = r.string(row, 0) ?? "", definition = r.string(row, 1) ?? ""
                // `{m}`, `{m,}` or `{m,n}` inside a pattern: PostgreSQL builds m (or n) copies of the atom.
                #expect(definition.range(of: #"~\*? '[^']*\{[0-9]+(,[0-9]*)?\}"#, options: .regularExpression) == nil, "\(name): \(definition)")
                #expect(r.string(row, 2) == "t", "\(name) is not validated")
            }
        }
    }

    // The longest topic 0.3.0's check admitted ({1,255}), in waiting and final rows; the rule is now the trigger's.
    /// a 0.3.0 database whose rows use the longest topics upgrades: every row kept, the rule enforced, an old
    /// producer's INSERT accepted
    @Test("a 0.3.0 database with the longest topics upgrades: rows kept, the rule enforced, an old producer's INSERT accepted")
    func upgradeFromRelease030() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let released = Migration.all.filter { $0.version <= SchemaHistory.release030 }
            #expect(try await c.migrate(released, logger: TestDatabase.logger) == Array(1...11))
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, status, topic)
                SELECT lpad(to_hex(g), 64, '0'), '{"aps":{"alert":"x"}}', CASE WHEN g % 2 = 0 THEN 'queued' ELSE 'sent' END,
                       CASE g % 3 WHEN 0 THEN repeat('t', 255) WHEN 1 THEN 'com.example.App_2-x' END
                  FROM generate_series(1, 1000) g
                """)
            let before = try await MigrationUpgradeTests.rowsDigest(c, columns: "id, device_token, payload::text, status, topic")
            #expect(try await c.migrate(logger: TestDatabase.logger) == Migration.all.map(\.version).filter { $0 > 11 })
            #expect(try await MigrationUpgradeTests.rowsDigest(c, columns: "id, device_token, payload::text, status, topic") == before)
            #expect(try await TableRules.enforced(c).contains("notifications_topic_shape"))
            // A 0.3.0 producer's INSERT, as it wrote it; a topic the rule refuses is still refused.
            try await c.query("INSERT INTO pushq.notifications (device_token, payload, topic) VALUES (repeat('c', 64), '{}', 'com.example.app')")
            let refused = await #expect(throws: PGError.self) {
                try await c.query("INSERT INTO pushq.notifications (device_token, payload, topic) VALUES (repeat('c', 64), '{}', repeat('t', 256))")
            }
            #expect(refused?.constraint == "notifications_topic_shape")
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications").string(0, 0) == "1001")
            await c.close()
        }
    }
}
