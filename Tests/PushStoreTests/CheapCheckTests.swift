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
            #expect(r.count == 32)  // 31 + notifications_notify_channel_reserved (schema 58)
            for row in 0..<r.count {
                let name = r.string(row, 0) ?? "", definition = r.string(row, 1) ?? ""
                // `{m}`, `{m,}` or `{m,n}` inside a pattern: PostgreSQL builds m (or n) copies of the atom.
                #expect(definition.range(of: #"~\*? '[^']*\{[0-9]+(,[0-9]*)?\}"#, options: .regularExpression) == nil, "\(name): \(definition)")
                #expect(r.string(row, 2) == "t", "\(name) is not validated")
            }
        }
    }

    @Test("a version 24 database whose rows use the three columns upgrades to 26: every row kept, the rules validated, an old producer's INSERT accepted")
    func upgradeFromVersion24() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await c.migrate(Array(Migration.all.prefix(24)), logger: TestDatabase.logger) == Array(1...24))
            // The longest values each old rule admitted, in rows waiting and final.
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, status, topic, lane, notify_channel)
                SELECT lpad(to_hex(g), 64, '0'), '{"aps":{"alert":"x"}}', CASE WHEN g % 2 = 0 THEN 'queued' ELSE 'sent' END,
                       CASE g % 3 WHEN 0 THEN repeat('t', 255) WHEN 1 THEN 'com.example.App_2-x' END,
                       CASE g % 4 WHEN 0 THEN repeat('l', 64) WHEN 1 THEN 'campaign:2026.q4_x-1' ELSE 'default' END,
                       CASE g % 5 WHEN 0 THEN '_' || repeat('z', 62) WHEN 1 THEN 'order_events' END
                  FROM generate_series(1, 1000) g
                """)
            let before = try await MigrationUpgradeTests.rowsDigest(c)
            #expect(try await c.migrate(Array(Migration.all.prefix(26)), logger: TestDatabase.logger) == [25, 26])
            #expect(try await MigrationUpgradeTests.rowsDigest(c) == before)
            let validated = try await c.query("""
                SELECT count(*) FROM pg_constraint WHERE conrelid = 'pushq.notifications'::regclass AND convalidated
                   AND conname IN ('notifications_topic_shape', 'notifications_lane_name', 'notifications_notify_channel_name')
                """)
            #expect(validated.string(0, 0) == "3")
            // A version-24 producer's INSERT, as it wrote it.
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, topic, lane, notify_channel)
                VALUES (repeat('c', 64), '{}', 'com.example.app', 'campaign', 'order_events')
                """)
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications").string(0, 0) == "1001")
            await c.close()
        }
    }
}
