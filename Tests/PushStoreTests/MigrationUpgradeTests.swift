import Foundation
import PushCore
@testable import PushStore
import Testing
import PGClient

/// Upgrading a database made by the previous schema: every row kept, every old INSERT accepted.
@Suite("Migration upgrades")
struct MigrationUpgradeTests {
    /// A digest of every column of the rows of `pushq.notifications` (those with an `id` of at
    /// most `upTo`), in `id` order: equal before and after an upgrade when no row was changed.
    static func rowsDigest(_ c: PGConnection, upTo: Int = .max) async throws -> String? {
        try await c.query("SELECT md5(string_agg(n::text, ',' ORDER BY id)) FROM pushq.notifications n WHERE id <= $1", [upTo]).string(0, 0)
    }

    /// A digest of `columns` (a select list over `n`) of every row of `pushq.notifications`, in
    /// `id` order: for an upgrade that adds columns.
    static func rowsDigest(_ c: PGConnection, columns: String) async throws -> String? {
        try await c.query("SELECT md5(string_agg(ROW(\(columns))::text, ',' ORDER BY id)) FROM pushq.notifications n").string(0, 0)
    }

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
            let before = try await c.query("SELECT md5(string_agg(to_jsonb(n)::text, ',' ORDER BY id)) FROM pushq.notifications n").string(0, 0)

            #expect(try await c.migrate(logger: TestDatabase.logger) == Array(Migration.all.map(\.version).dropFirst()))
            // Columns added since (provider, fcm_message_name, lane, dedupe_key, notify_channel, …, tenant) left out: every version-1 column compared.
            let after = try await c.query("""
                SELECT md5(string_agg((to_jsonb(n) - 'provider' - 'fcm_message_name' - 'lane' - 'dedupe_key' - 'notify_channel' - 'channel' - 'webpush_keys' - 'webpush_location' - 'time_zone' - 'user_ref' - 'tenant')::text, ',' ORDER BY id)) FROM pushq.notifications n
                """).string(0, 0)
            #expect(after == before, "every notification row unchanged, column for column")
            #expect(try await c.query("SELECT count(*) FROM pushq.devices").decode(Int.self, 0, 0) == 1)
            let kinds = try await c.query("SELECT credential, kind FROM pushq.credential_pauses ORDER BY credential")
            #expect(kinds.string(0, 1) == "burst")
            #expect(kinds.string(1, 1) == "credential")
            let index = try await c.query("""
                SELECT bool_and(i.indisvalid), count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                 WHERE c.relname IN ('notifications_created', 'notifications_token_created', 'notifications_expiry')
                """)
            #expect(try index.decode(Bool.self, 0, 0) == true && index.decode(Int.self, 0, 1) == 2,
                    "the indexes by created_at built and valid; schema 3's, built on the way, dropped by 51")
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

    /// a version 6 database (rows in every status, devices, holds, throttles, workers) upgrades to FCM: every
    /// row kept with its values, all APNs, devices keyed by provider
    @Test("a version 6 database upgrades to FCM: every row kept with its values, all APNs, devices keyed by provider")
    func upgradeFromVersion6() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await c.migrate(Array(Migration.all.prefix(6)), logger: TestDatabase.logger) == [1, 2, 3, 4, 5, 6])
            try await c.execute("""
                INSERT INTO pushq.notifications (device_token, payload, status, attempts, last_status, last_reason, expires_at,
                                                 environment, credential, topic, push_type, priority, collapse_id, metadata,
                                                 locked_by, locked_until, sent_at, finished_at, apns_unique_id)
                SELECT CASE WHEN g % 7 = 1 THEN upper(lpad(to_hex(g), 64, 'c')) ELSE lpad(to_hex(g), 64, 'a') END,
                       CASE WHEN g % 11 = 0 THEN '{"aps":{"alert":"v6"},  "k" : [1, 2]}' ELSE '{"aps":{"alert":"v6"}}' END::json,
                       s.status, CASE WHEN s.status = 'queued' THEN 0 ELSE 1 + g % 3 END,
                       CASE WHEN s.status IN ('sent', 'failed') THEN (ARRAY[200, 410])[1 + g % 2] END,
                       CASE WHEN s.status = 'failed' THEN 'Unregistered' WHEN s.status = 'retrying' THEN 'InternalServerError' END,
                       CASE WHEN g % 2 = 0 THEN now() + interval '1 day' END,
                       (ARRAY[NULL, 'production', 'development'])[1 + g % 3], CASE WHEN g % 5 = 0 THEN 'other' END,
                       CASE WHEN g % 4 = 0 THEN 'com.example.app.voip' END, CASE WHEN g % 4 = 0 THEN 'voip' ELSE 'alert' END,
                       CASE WHEN g % 4 = 1 THEN 5 END, CASE WHEN g % 6 = 0 THEN 'c' || g END,
                       CASE WHEN g % 3 = 0 THEN jsonb_build_object('user', g) END,
                       CASE WHEN s.status = 'sending' THEN 'worker-1' END,
                       CASE WHEN s.status = 'sending' THEN now() + interval '1 minute' END,
                       CASE WHEN s.status = 'sent' THEN now() END,
                       CASE WHEN s.status IN ('sent', 'failed', 'expired', 'cancelled') THEN now() END,
                       CASE WHEN s.status = 'sent' AND g % 2 = 0 THEN gen_random_uuid() END
                  FROM generate_series(1, 2800) g,
                       LATERAL (SELECT (ARRAY['queued','sending','retrying','sent','failed','expired','cancelled'])[1 + g % 7] AS status) s;
                INSERT INTO pushq.devices (device_token, environment, user_ref, topic, registered_at, invalidated_at, invalid_reason)
                SELECT lpad(to_hex(g), 64, '0'), (ARRAY['production', 'development'])[1 + g % 2], 'u' || (g % 10),
                       CASE WHEN g % 3 = 0 THEN 'com.example.app' END, now() - interval '2 days',
                       CASE WHEN g % 4 = 0 THEN now() - interval '1 day' END,
                       CASE WHEN g % 4 = 0 THEN (ARRAY['Unregistered', 'ExpiredToken', 'BadDeviceToken'])[1 + g % 3] END
                  FROM generate_series(1, 300) g;
                INSERT INTO pushq.credential_pauses (credential, environment, reason, message, paused_until, kind)
                VALUES ('default', 'production', 'BadDeviceTokenBurst', 'm', now() + interval '1 minute', 'burst'),
                       ('other', 'development', 'InvalidProviderToken', 'm', now() + interval '1 minute', 'credential');
                INSERT INTO pushq.token_throttles (device_token, environment, until) VALUES (repeat('f', 64), 'production', now() + interval '1 hour');
                INSERT INTO pushq.workers (id, host, pid, version, credentials) VALUES ('worker-1', 'h', 1, 'v', '[{"name":"default"}]');
                """)
            #expect(try await c.query("SELECT count(DISTINCT status) FROM pushq.notifications").decode(Int.self, 0, 0) == 7)
            func digest(_ sql: String) async throws -> String? { try await c.query(sql).string(0, 0) }
            let notifications = "SELECT md5(string_agg((to_jsonb(n) - 'provider' - 'fcm_message_name' - 'lane' - 'dedupe_key' - 'notify_channel' - 'channel' - 'webpush_keys' - 'webpush_location' - 'time_zone' - 'user_ref' - 'tenant')::text, ',' ORDER BY id)) FROM pushq.notifications n"
            // Columns added since (provider; kind, activity_id, installation_id, ended_at, ended_by) left out.
            let devices = """
                SELECT md5(string_agg((to_jsonb(d) - 'provider' - 'kind' - 'activity_id' - 'installation_id' - 'ended_at' - 'ended_by' - 'webpush_keys' - 'time_zone')::text,
                                      ',' ORDER BY device_token, environment)) FROM pushq.devices d
                """
            let others = """
                SELECT md5((SELECT string_agg(p::text, ',' ORDER BY credential) FROM pushq.credential_pauses p)
                        || (SELECT string_agg(t::text, ',') FROM pushq.token_throttles t)
                        || (SELECT string_agg((to_jsonb(w) - 'schema_known')::text, ',') FROM pushq.workers w))
                """
            let before = (try await digest(notifications), try await digest(devices), try await digest(others))
            let file = try await c.query("SELECT pg_relation_filenode('pushq.notifications')::text").string(0, 0)

            // worker-1, of a release before schema 35, is live: the gated migrations wait for it.
            #expect(try await c.migrate(logger: TestDatabase.logger) == Migration.all.filter { (try? MigrationGate(of: $0)) == nil }.map(\.version).filter { $0 > 6 })
            #expect(try await c.migrationWait()?.workers.map(\.id) == ["worker-1"])
            #expect(try await digest(notifications) == before.0, "every notification kept, column for column")
            #expect(try await digest(devices) == before.1, "every device kept, column for column")
            #expect(try await digest(others) == before.2, "holds, throttles and workers kept")
            #expect(try await c.query("SELECT pg_relation_filenode('pushq.notifications')::text").string(0, 0) == file, "not rewritten")
            let counts = try await c.query("""
                SELECT (SELECT count(*) FROM pushq.notifications WHERE provider = 'apns' AND fcm_message_name IS NULL),
                       (SELECT count(*) FROM pushq.devices WHERE provider = 'apns' AND kind = 'device')
                """)
            #expect(counts.string(0, 0) == "2800" && counts.string(0, 1) == "300")
            let key = try await c.query("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'devices_pkey'")
            #expect(key.string(0, 0) == "PRIMARY KEY (device_token, environment, provider)")
            // Old producers, unchanged.
            try await c.query("""
                INSERT INTO pushq.devices (device_token, environment, user_ref) VALUES ($1, 'production', 'u99')
                ON CONFLICT (device_token, environment) DO UPDATE SET user_ref = EXCLUDED.user_ref, registered_at = now()
                """, [String(repeating: "E", count: 64)])
            #expect(try await c.query("SELECT user_ref FROM pushq.devices WHERE device_token = $1", [String(repeating: "e", count: 64)]).string(0, 0) == "u99")
            let ids = try await c.query("SELECT * FROM pushq.enqueue_for_user('u1', '{\"aps\":{}}', NULL, 'alert', 10)")
            #expect(ids.count > 0)
            // The migrated rows are claimed as APNs rows, invalid tokens still found.
            let rows = try await c.claim(limit: 10_000, workerID: "w2", leaseSeconds: 60, credentials: [.apns: ["default", "other"]],
                                         defaultEnvironment: .production)
            #expect(!rows.isEmpty && rows.allSatisfy { $0.provider == .apns })
            // worker-1 stops: the gated migrations run, and its 400 rows in flight get one lease row.
            try await c.query("DELETE FROM pushq.workers WHERE id = 'worker-1'")
            #expect(try await c.migrate(logger: TestDatabase.logger) == Migration.all.filter { (try? MigrationGate(of: $0)) != nil }.map(\.version))
            let leases = try await c.query("SELECT string_agg(worker || ':' || array_length(ids, 1), ',' ORDER BY worker) FROM pushq.leases")
            #expect(leases.string(0, 0) == "w2:\(rows.filter { $0.verdict == .send }.count),worker-1:400")
            await c.close()
        }
    }

    // A waiting liveactivity row without the keys its event needs ends failed/InvalidRow (the release's part 3).
    @Test("a 0.3.0 database upgrades to Live Activities: waiting liveactivity rows without their keys end InvalidRow, the rest kept")
    func upgradeFromRelease030LiveActivities() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await c.migrate(Array(Migration.all.prefix(11)), logger: TestDatabase.logger) == Array(1...11))
            let good = #"{"aps": {"timestamp": 1700000000, "event": "update", "content-state": {"home": 1}}}"#
            let bad = #"{"aps": {"content-state": {"home": 1}}}"#
            try await c.query("""
                INSERT INTO pushq.notifications (id, device_token, push_type, payload, status, locked_by, locked_until) VALUES
                  (1, repeat('a', 64), 'liveactivity', $1, 'queued', NULL, NULL),
                  (2, repeat('a', 64), 'liveactivity', $2, 'queued', NULL, NULL),
                  (3, repeat('a', 64), 'liveactivity', $2, 'sending', 'w1', now() + interval '1 minute'),
                  (4, repeat('a', 64), 'liveactivity', $2, 'sent', NULL, NULL),
                  (5, repeat('a', 64), 'alert', $2, 'queued', NULL, NULL)
                """, [good, bad])
            try await c.query("INSERT INTO pushq.devices (device_token, user_ref) VALUES (repeat('b', 64), 'u1')")
            #expect(try await c.migrate(logger: TestDatabase.logger) == Migration.all.map(\.version).filter { $0 > 11 })
            let rows = try await c.query("SELECT status, last_reason, locked_by, payload::text FROM pushq.notifications ORDER BY id")
            let expected: [(String, String?, String?, String)] = [
                ("queued", nil, nil, good), ("failed", "InvalidRow", nil, bad), ("sending", nil, "w1", bad),
                ("sent", nil, nil, bad), ("queued", nil, nil, bad),
            ]
            for (i, row) in expected.enumerated() {
                #expect(rows.string(i, 0) == row.0 && rows.string(i, 1) == row.1 && rows.string(i, 2) == row.2 && rows.string(i, 3) == row.3,
                        "row \(i + 1)")
            }
            let device = try await c.query("SELECT kind, activity_id, installation_id, ended_at FROM pushq.devices")
            #expect(device.string(0, 0) == "device" && device.string(0, 1) == nil && device.string(0, 2) == nil && device.string(0, 3) == nil)
            let invalid = try await c.query("""
                SELECT count(*) FROM pg_constraint WHERE NOT convalidated AND conrelid IN ('pushq.notifications'::regclass, 'pushq.devices'::regclass)
                """)
            #expect(invalid.string(0, 0) == "0", "every check validated")
            let index = try await c.query("""
                SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'devices_activity_key'
                """)
            #expect(try index.decode(Bool.self, 0, 0) == true)
            await c.close()
        }
    }

    /// adding provider waits for its locks 1 s at a time: producers of notifications and devices are not held
    /// up behind a long transaction
    @Test("adding provider waits for its locks 1 s at a time: producers of notifications and devices are not held up")
    func providerLockWaitGivesWay() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let migrator = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await migrator.migrate(Array(Migration.all.prefix(6)), logger: TestDatabase.logger) == [1, 2, 3, 4, 5, 6])
            // A long transaction that read the registry: migration 7's ALTER TABLE of devices must wait for it.
            let reader = try await LockWait.reader(url, reading: "pushq.devices")
            async let applied = migrator.migrate(logger: TestDatabase.logger)
            let observer = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await LockWait.untilWaiting(observer, on: "pushq.devices"), "migration 7 waits for the lock on devices")
            let producer = try await LockWait.produce(url) { producer in
                try await producer.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{}')", [String(repeating: "e", count: 64)])
                try await producer.query("INSERT INTO pushq.devices (device_token) VALUES ($1) ON CONFLICT (device_token, environment) DO NOTHING",
                                         [String(repeating: "e", count: 64)])
            }
            try await reader.execute("COMMIT")  // before any expectation can end the test: the migration waits for it
            #expect(producer.error == nil, "a producer waited behind the migration: \(String(describing: producer.error))")
            #expect(try await applied == Migration.all.map(\.version).filter { $0 > 6 })
            let r = try await observer.query("""
                SELECT (SELECT provider FROM pushq.notifications), (SELECT provider FROM pushq.devices)
                """)
            #expect(r.string(0, 0) == "apns" && r.string(0, 1) == "apns")
            for c in [migrator, reader, observer] { await c.close() }
        }
    }

    @Test("an interrupted concurrent index build is dropped and built again by the next migrate")
    func invalidIndexRebuilt() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let part1 = Migration.all.filter { $0.version <= 100 }
            #expect(try await c.migrate(part1, logger: TestDatabase.logger) == part1.map(\.version))
            // What an interrupted CREATE INDEX CONCURRENTLY of part 2 leaves: an index marked invalid.
            try await c.execute("CREATE INDEX notifications_channel_created ON pushq.notifications (expires_at)")
            try await c.execute("UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'pushq.notifications_channel_created'::regclass")
            #expect(try await c.migrate(logger: TestDatabase.logger) == Migration.all.map(\.version).filter { $0 > 100 })
            let index = try await c.query("""
                SELECT i.indisvalid, pg_get_indexdef(i.indexrelid) FROM pg_index i
                 WHERE i.indexrelid = 'pushq.notifications_channel_created'::regclass
                """)
            #expect(try index.decode(Bool.self, 0, 0) == true)
            #expect(index.string(0, 1)?.contains("(channel, created_at) WHERE (channel IS NOT NULL)") == true,
                    "the partial index of the release, not the leftover: \(index.string(0, 1) ?? "")")
            await c.close()
        }
    }
}
