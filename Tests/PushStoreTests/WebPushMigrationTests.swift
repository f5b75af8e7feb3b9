import Foundation
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// Migration 105 (Web Push) beside what runs while it is applied: rows and devices of 0.4.0 kept,
/// the tables' files the same (catalog only), 0.4.0 producers' statements unchanged, and a 0.4.0
/// worker, whose claim names only `apns` and `fcm`, leaving Web Push rows to a worker that knows them.
@Suite("Web Push migration")
struct WebPushMigrationTests {
    static let webPush: Int = 105

    /// The claim of a 0.4.0 worker (before Web Push): `Fixtures/release-0.4.0-claim.sql`.
    static let claim040 = Result { try PreviousRelease.fixture("release-0.4.0-claim.sql") }

    /// Claims as a 0.4.0 worker with the default APNs and FCM credentials; returns the ids and
    /// verdicts of the rows it took.
    static func claimAs040(_ c: PGConnection) async throws -> [(id: Int64, verdict: String, provider: String)] {
        let none: String? = nil, noCap: Double? = nil, noRank: Int? = nil
        let parameters: [(any PGParameter)?] = [200, "w-0.4.0", 30.0, "production", ["default"], true, ["default"], true, 0, none, noCap, noRank]
        let r = try await c.query(try claim040.get(), parameters)
        return try (0..<r.count).compactMap { i in
            guard let id = try r.decode(Int64.self, i, 0), id != 0 else { return nil }
            return (id, r.string(i, 1) ?? "", try r.decodeOptional(String.self, i, "provider") ?? "")
        }
    }

    @Test("105 on a populated table: catalog only, every row and device kept, 0.4.0 producers' INSERTs and calls work")
    func catalogOnlyAndOlderProducers() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            _ = try await c.migrate(Migration.all.filter { $0.version < Self.webPush }, logger: TestDatabase.logger)
            try await c.execute("""
                INSERT INTO pushq.notifications (device_token, payload, lane, status)
                SELECT lpad(to_hex(g), 64, 'a'), '{"aps":{}}', 'l' || g % 3, (ARRAY['queued','sent','failed'])[1 + g % 3]
                  FROM generate_series(1, 3000) g;
                INSERT INTO pushq.notifications (provider, device_token, payload) SELECT 'fcm', 'tok' || g, '{"data":{}}' FROM generate_series(1, 300) g;
                INSERT INTO pushq.devices (device_token, user_ref) SELECT lpad(to_hex(g), 64, '0'), 'u' || g % 10 FROM generate_series(1, 300) g;
                INSERT INTO pushq.devices (device_token, provider, user_ref, registered_at, invalidated_at, invalid_reason)
                SELECT 'fcm' || g, 'fcm', 'u' || g % 10, now() - interval '1 day',
                       CASE WHEN g % 7 = 0 THEN now() END, CASE WHEN g % 7 = 0 THEN 'UNREGISTERED' END
                  FROM generate_series(1, 300) g;
                """)
            let files = "SELECT pg_relation_filenode('pushq.notifications') || '/' || pg_relation_filenode('pushq.devices')"
            let devices = "SELECT md5(string_agg(d::text, ',' ORDER BY device_token, environment, provider)) FROM pushq.devices d"
            let before = (try await c.query(files).string(0, 0), try await MigrationUpgradeTests.rowsDigest(c), try await c.query(devices).string(0, 0))
            #expect(try await c.migrate(Migration.all.filter { $0.version <= Self.webPush }, logger: TestDatabase.logger) == [Self.webPush])
            #expect(try await c.query(files).string(0, 0) == before.0, "no table rewritten")
            // The rows as 0.4.0 had them: every column but the new ones.
            let old = try await c.query("""
                SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute
                 WHERE attrelid = 'pushq.notifications'::regclass AND attnum > 0 AND NOT attisdropped AND attname NOT LIKE 'webpush%'
                """).string(0, 0) ?? ""
            let rows = try await c.query("SELECT md5(string_agg(ROW(\(old))::text, ',' ORDER BY id)) FROM pushq.notifications").string(0, 0)
            let noKeys = try await c.query("SELECT count(*) FROM pushq.notifications WHERE webpush_keys IS NOT NULL OR webpush_location IS NOT NULL")
            #expect(rows == before.1 && noKeys.string(0, 0) == "0", "every row kept, the new columns NULL")
            let oldDevices = try await c.query("""
                SELECT md5(string_agg(ROW(device_token, environment, user_ref, topic, registered_at, invalidated_at, invalid_reason, provider,
                                          kind, activity_id, installation_id, ended_at, ended_by)::text, ',' ORDER BY device_token, environment, provider))
                  FROM pushq.devices d
                """).string(0, 0)
            // (before: each whole row's text, which is these columns in table order)
            #expect(oldDevices == before.2, "every device kept")
            // 0.4.0 producers: an APNs row, an FCM row, a registration, an invalidation, enqueue_for_user's calls.
            try await c.execute("""
                INSERT INTO pushq.notifications (device_token, payload, topic) VALUES (repeat('cd', 32), '{"aps":{"alert":"hi"}}', 'com.example');
                INSERT INTO pushq.notifications (provider, device_token, payload) VALUES ('fcm', 'tok-new', '{"notification":{"title":"hi"}}');
                INSERT INTO pushq.devices (device_token, user_ref, topic, registered_at) VALUES (repeat('ef', 32), 'u1', 'com.example', now() - interval '1 hour')
                    ON CONFLICT (device_token, environment) DO UPDATE SET user_ref = EXCLUDED.user_ref;
                UPDATE pushq.devices SET invalidated_at = now(), invalid_reason = 'Unregistered' WHERE device_token = repeat('ef', 32);
                """)
            let fanOut = try await c.query("""
                SELECT count(*) FROM pushq.enqueue_for_user('u1', '{"aps":{"alert":"hi"}}', 'com.example', 'alert', 10, NULL, NULL, NULL, now(), 10,
                                                          NULL, '{"data":{}}', 'default', 'k1', NULL)
                """).string(0, 0)
            #expect(fanOut == "56", "u1's 30 APNs devices and 26 FCM devices (4 of its 30 invalidated), by the 0.4.0 positional call")
            let named = try await c.query("SELECT count(*) FROM pushq.enqueue_for_user(user_ref => 'u2', payload => '{\"aps\":{}}', topic => 'com.example')")
            #expect(named.string(0, 0) == "30")
            await c.close()
        }
    }

    @Test("a 0.4.0 worker's claim beside 105 takes APNs and FCM rows and leaves Web Push rows waiting")
    func olderWorkerLeavesWebPushRows() async throws {
        try await TestDatabase.withConnection { c in
            for i in 0..<3 {
                try await WebPushSchemaTests.insert(c, ["device_token": WebPushSchemaTests.endpoint + "\(i)"])
            }
            try await c.execute("""
                INSERT INTO pushq.notifications (device_token, payload, topic) VALUES (repeat('ab', 32), '{"aps":{}}', 'com.example');
                INSERT INTO pushq.notifications (provider, device_token, payload) VALUES ('fcm', 'tok', '{"data":{}}');
                """)
            let taken = try await Self.claimAs040(c)
            #expect(taken.map(\.provider).sorted() == ["apns", "fcm"] && taken.allSatisfy { $0.verdict == "sending" })
            let waiting = try await c.query("""
                SELECT count(*) FILTER (WHERE n.status = 'queued' AND n.attempts = 0 AND n.locked_by IS NULL),
                       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM pushq.due d WHERE d.id = n.id))
                  FROM pushq.notifications n WHERE n.provider = 'webpush'
                """)
            #expect(waiting.string(0, 0) == "3" && waiting.string(0, 1) == "3", "untouched, each with its entry in pushq.due")
            #expect(try await Self.claimAs040(c).isEmpty, "and never taken later")
        }
    }
}
