import Foundation
import PushStore
import Testing

/// Upgrading a database made by the previous schema: every row kept, every old INSERT accepted.
@Suite("Migration upgrades")
struct MigrationUpgradeTests {
    @Test("a version 1 database with rows in every state upgrades: rows, devices and pauses kept; old producers' INSERTs still work")
    func upgradeFromVersion1() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await c.migrate(Array(Migration.all.prefix(1)), logger: TestDatabase.logger) == [1])
            // Rows as a version-1 producer and worker left them.
            try await c.execute("""
                INSERT INTO pushq.notifications (device_token, payload, status, attempts, last_reason, expires_at, environment, credential)
                SELECT lpad(to_hex(g), 64, 'a'), '{"aps":{"alert":"v1"}}',
                       (ARRAY['queued','retrying','sent','failed','expired','cancelled'])[1 + g % 6], g % 3,
                       CASE WHEN g % 6 = 3 THEN 'Unregistered' END,
                       CASE WHEN g % 2 = 0 THEN now() + interval '1 day' END,
                       CASE WHEN g % 4 = 0 THEN 'production' END, CASE WHEN g % 5 = 0 THEN 'other' END
                  FROM generate_series(1, 3000) g;
                INSERT INTO pushq.devices (device_token, environment, user_ref) VALUES (repeat('b', 64), 'production', 'u1');
                INSERT INTO pushq.credential_pauses (credential, environment, reason, message, paused_until)
                VALUES ('default', 'production', 'BadDeviceTokenBurst', 'm', now() + interval '1 minute'),
                       ('other', 'production', 'InvalidProviderToken', 'm', now() + interval '1 minute');
                """)
            let before = try await c.query("SELECT md5(string_agg(n::text, ',' ORDER BY id)) FROM pushq.notifications n").string(0, 0)

            #expect(try await c.migrate(logger: TestDatabase.logger) == Array(Migration.all.map(\.version).dropFirst()))
            let after = try await c.query("SELECT md5(string_agg(n::text, ',' ORDER BY id)) FROM pushq.notifications n").string(0, 0)
            #expect(after == before, "every notification row unchanged, column for column")
            #expect(try await c.query("SELECT count(*) FROM pushq.devices").decode(Int.self, 0, 0) == 1)
            let kinds = try await c.query("SELECT credential, kind FROM pushq.credential_pauses ORDER BY credential")
            #expect(kinds.string(0, 1) == "burst")
            #expect(kinds.string(1, 1) == "credential")
            let index = try await c.query("""
                SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'notifications_expiry'
                """)
            #expect(try index.decode(Bool.self, 0, 0) == true)
            // A version-1 producer's INSERTs, unchanged.
            try await c.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\":{}}')", [String(repeating: "c", count: 64)])
            try await c.query("INSERT INTO pushq.notifications (device_token, payload, environment, credential, topic) VALUES ($1, '{}', 'development', 'x', 'com.example.x')",
                              [String(repeating: "d", count: 64)])
            try await c.query("INSERT INTO pushq.devices (device_token, user_ref) VALUES ($1, 'u2') ON CONFLICT (device_token, environment) DO NOTHING",
                              [String(repeating: "e", count: 64)])
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications").decode(Int.self, 0, 0) == 3002)
            await c.close()
        }
    }

    @Test("an interrupted concurrent index build is dropped and built again by the next migrate")
    func invalidIndexRebuilt() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await c.migrate(Array(Migration.all.prefix(2)), logger: TestDatabase.logger)
            // What an interrupted CREATE INDEX CONCURRENTLY leaves: an index marked invalid.
            try await c.execute("CREATE INDEX notifications_expiry ON pushq.notifications (expires_at)")
            try await c.execute("UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'pushq.notifications_expiry'::regclass")
            #expect(try await c.migrate(logger: TestDatabase.logger) == Migration.all.map(\.version).filter { $0 >= 3 })
            let index = try await c.query("""
                SELECT i.indisvalid, pg_get_expr(i.indpred, i.indrelid) FROM pg_index i WHERE i.indexrelid = 'pushq.notifications_expiry'::regclass
                """)
            #expect(try index.decode(Bool.self, 0, 0) == true)
            #expect(index.string(0, 1)?.contains("expires_at IS NOT NULL") == true, "the partial index of migration 3, not the leftover")
            await c.close()
        }
    }
}
