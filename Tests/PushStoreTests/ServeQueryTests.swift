import Foundation
import PushCore
@testable import PushStore
import Testing
import PGClient

/// Every statement `pushq serve` runs is index-backed and bounded: their plans on a table of a
/// million notifications and 200 000 devices (analysed, sequential scans allowed) read indexes,
/// never a whole table. The statements checked are the constants the store runs.
@Suite("Serve queries")
struct ServeQueryTests {
    /// on 1 000 000 notifications and 200 000 devices: no statement of serve's plans a sequential scan of a
    /// big table, nor do the status statements as queueStatus runs them (sequential scans off)
    @Test("on 1 000 000 notifications and 200 000 devices no statement of serve or status plans a sequential scan of a big table")
    func plans() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, status, attempts, finished_at, created_at, lane, dedupe_key, last_reason)
                SELECT lpad(to_hex(g % 200000), 64, '0'), '{"aps":{"alert":"x"}}',
                       CASE WHEN g % 100 = 0 THEN 'queued' WHEN g % 100 = 1 THEN 'failed' ELSE 'sent' END, 1,
                       CASE WHEN g % 100 = 0 THEN NULL ELSE now() - (g % 7200) * interval '1 second' END,
                       now() - (g % 7200) * interval '1 second', CASE WHEN g % 3 = 0 THEN 'marketing' ELSE 'default' END,
                       CASE WHEN g % 2 = 0 THEN 'key-' || g END, CASE WHEN g % 100 = 1 THEN 'BadDeviceToken' END
                  FROM generate_series(1, 1000000) g
                """)
            try await c.query("""
                INSERT INTO pushq.devices (device_token, user_ref, topic)
                SELECT lpad(to_hex(g), 64, '0'), 'user-' || (g % 50000), 'com.example.app' FROM generate_series(1, 200000) g
                """)
            try await c.query("""
                INSERT INTO pushq.api_keys (name, scope, key_hash)
                SELECT 'key-' || g, 'read', encode(sha256(convert_to('k' || g, 'UTF8')), 'hex') FROM generate_series(1, 2000) g
                """)
            try await c.query("""
                INSERT INTO pushq.api_sessions (token_hash, key_id, expires_at)
                SELECT encode(sha256(convert_to('s' || g, 'UTF8')), 'hex'), 1 + g % 2000, now() + interval '1 hour' FROM generate_series(1, 20000) g
                """)
            try await c.execute("VACUUM ANALYZE")
            #expect(try await c.query("SHOW enable_seqscan").string(0, 0) == "on")
            let whole = try await StatusQueryTests.plan(c, "SELECT count(*) FROM pushq.notifications WHERE lane = 'marketing'", [])
            #expect(whole.contains("Seq Scan"), "the tables are big enough for the planner to scan a whole one: \(whole)")

            let hash = String(repeating: "a", count: 64)
            let serve: [(String, [(any PGParameter)?])] = [
                (PGConnection.authenticateKeySQL, [hash]),
                (PGConnection.sessionSQL, [hash]),
                (PGConnection.notificationJSONSQL, [Int64(500_000)]),
                (PGConnection.statusByIDSQL, [Int64(500_000)]),
                (PGConnection.cancelSQL, [Int64(500_000)]),
                (PGConnection.dedupeLookupSQL, [["key-2", "key-4", "key-3"]]),
                (PGConnection.unregisterSQL, [String(repeating: "A", count: 64), nil, nil]),
                (PGConnection.unregisterSQL, [String(repeating: "a", count: 64), "apns", "production"]),
                (PGConnection.userDevicesSQL, ["user-42", PGConnection.userDevicesLimit]),
            ]
            for (sql, parameters) in serve {
                try await Self.expectIndexed(c, sql, parameters)
            }
            // GET /api/v1/status runs the status statements as `queueStatus` does, sequential scans
            // off: on this table the failures of the last hour are half a million rows, which the
            // planner would rather read whole.
            try await c.execute("SET enable_seqscan = off")
            for (sql, parameters) in PGConnection.statusStatements {
                try await Self.expectIndexed(c, sql, parameters)
            }
        }
    }

    static func expectIndexed(_ c: PGConnection, _ sql: String, _ parameters: [(any PGParameter)?]) async throws {
        let plan = try await StatusQueryTests.plan(c, sql, parameters)
        for table in ["notifications", "devices", "api_keys", "api_sessions"] {
            #expect(!plan.contains("Seq Scan on \(table)"), "\(sql)\n\(plan)")
        }
        #expect(plan.contains("Index"), "an index is read: \(sql)\n\(plan)")
    }

    /// every named check and unique constraint of pushq.notifications, pushq.devices and pushq.api_keys, and
    /// the functions' named refusals, has its explanation; every explanation names one
    @Test("every named check, unique constraint and function refusal of the API's tables has its explanation, and vice versa")
    func explanations() async throws {
        try await TestDatabase.withConnection { c in
            let r = try await c.query("""
                SELECT conname FROM pg_constraint
                 WHERE conrelid IN ('pushq.notifications'::regclass, 'pushq.devices'::regclass, 'pushq.api_keys'::regclass)
                   AND contype IN ('c', 'u')
                UNION SELECT 'notifications_channel_known' UNION SELECT 'notifications_channel_endpoint'
                UNION SELECT 'enqueue_for_user_dedupe_key_length'
                UNION SELECT 'enqueue_for_user_local_time' UNION SELECT 'devices_time_zone_known' UNION SELECT 'notifications_time_zone_known'
                UNION SELECT 'notifications_tenant_shape'
                UNION \(TableRules.functionRulesSQL)
                """)
            let named = Set((0..<r.count).compactMap { r.string($0, 0) })
            let explained = Set(ConstraintExplanation.all.keys)
            #expect(named.subtracting(explained).isEmpty, "not explained: \(named.subtracting(explained).sorted())")
            #expect(explained.subtracting(named).isEmpty, "explained but not in the schema: \(explained.subtracting(named).sorted())")
            let functions = try await c.query("SELECT prosrc FROM pg_proc WHERE pronamespace = 'pushq'::regnamespace")
            let sources = (0..<functions.count).compactMap { functions.string($0, 0) }.joined()
            for name in ["notifications_channel_known", "notifications_channel_endpoint", "enqueue_for_user_dedupe_key_length",
                         "enqueue_for_user_local_time"] {
                #expect(sources.contains("CONSTRAINT = '\(name)'"), "\(name) is raised by a function of pushq's")
            }
            // The zone check names the table whose trigger fired it: <table>_time_zone_known.
            #expect(sources.contains("CONSTRAINT = TG_TABLE_NAME || '_time_zone_known'"))
            let zoned = try await c.query("""
                SELECT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE t.tgfoid = 'pushq.time_zone_known'::regproc
                """)
            let tables = Set((0..<zoned.count).compactMap { zoned.string($0, 0) })
            #expect(tables.isSuperset(of: ["devices", "notifications"]), "devices_ and notifications_time_zone_known are raised: \(tables)")
        }
    }

    @Test("the columns the API writes carry the table's types (the enqueue casts its arrays to them)")
    func columnTypes() async throws {
        try await TestDatabase.withConnection { c in
            let r = try await c.query("""
                SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
                 WHERE attrelid = 'pushq.notifications'::regclass AND attnum > 0 AND NOT attisdropped
                """)
            var types: [String: String] = [:]
            for i in 0..<r.count { types[r.string(i, 0)!] = r.string(i, 1)! }
            let spelled = ["timestamptz": "timestamp with time zone"]
            for column in NotificationInsert.writableColumns {
                #expect(types[column.name] == spelled[column.type, default: column.type], "\(column.name)")
            }
        }
    }
}
