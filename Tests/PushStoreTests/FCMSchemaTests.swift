import Foundation
import PushStore
import Testing
import PGClient

/// The `provider` column (migrations 7-11): FCM rows are refused by named constraints when they
/// break FCM's rules or set APNs-only columns; valid FCM rows go in as given; APNs rows and old
/// producers' statements are unchanged.
@Suite("FCM schema")
struct FCMSchemaTests {
    /// Mixed case, `:`, `-` and `_`: an FCM registration token's alphabet.
    static let fcmToken = "bk3RNwTe3H0:CI2k_HHwgIpoDKCIZvvDMExUdFQ3P1-Xy"
    static let apnsToken = String(repeating: "ab", count: 32)

    /// An FCM payload of exactly `size` bytes: {"data":{"k":"xxx…"}}.
    static func fcmPayload(bytes size: Int) -> String {
        let shell = #"{"data":{"k":""}}"#
        return #"{"data":{"k":""# + String(repeating: "x", count: size - shell.utf8.count) + #""}}"#
    }

    /// Inserts one FCM notification built from defaults plus `columns`; returns its id.
    @discardableResult
    static func insert(_ c: PGConnection, _ columns: [String: String?]) async throws -> Int64 {
        var all: [String: String?] = ["provider": "fcm", "device_token": fcmToken, "payload": #"{"notification":{"title":"Hi"}}"#]
        for (k, v) in columns { all[k] = v }
        let names = all.keys.sorted()
        let placeholders = names.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        let sql = "INSERT INTO pushq.notifications (\(names.joined(separator: ", "))) VALUES (\(placeholders)) RETURNING id"
        return try await c.query(sql, names.map { all[$0]! }).decode(Int64.self, 0, "id")
    }

    struct BadRow: Sendable, CustomTestStringConvertible {
        var label: String
        var columns: [String: String?]
        var constraint: String
        var testDescription: String { label }
    }

    static let badRows: [BadRow] = [
        BadRow(label: "unknown provider", columns: ["provider": "gcm"], constraint: "notifications_provider_known"),
        BadRow(label: "FCM token with a dot", columns: ["device_token": "abc.def"], constraint: "notifications_fcm_token_charset"),
        BadRow(label: "FCM token with a space", columns: ["device_token": "abc def"], constraint: "notifications_fcm_token_charset"),
        BadRow(label: "FCM token with a quote", columns: ["device_token": "abc\"def"], constraint: "notifications_fcm_token_charset"),
        BadRow(label: "FCM token empty", columns: ["device_token": ""], constraint: "notifications_fcm_token_length"),
        BadRow(label: "FCM token 4097 characters", columns: ["device_token": String(repeating: "a", count: 4097)],
               constraint: "notifications_fcm_token_length"),
        BadRow(label: "FCM payload naming token", columns: ["payload": #"{"token":"x","data":{}}"#], constraint: "notifications_fcm_payload_target"),
        BadRow(label: "FCM payload naming topic", columns: ["payload": #"{"topic":"news"}"#], constraint: "notifications_fcm_payload_target"),
        BadRow(label: "FCM payload naming condition", columns: ["payload": #"{"condition":"'a' in topics"}"#],
               constraint: "notifications_fcm_payload_target"),
        BadRow(label: "FCM payload an array", columns: ["payload": "[]"], constraint: "notifications_payload_object"),
        BadRow(label: "FCM payload 4097 bytes", columns: ["payload": fcmPayload(bytes: 4097)], constraint: "notifications_payload_size"),
        BadRow(label: "FCM row with a topic", columns: ["topic": "com.example.app"], constraint: "notifications_fcm_no_apns_columns"),
        BadRow(label: "FCM row with a priority", columns: ["priority": "10"], constraint: "notifications_fcm_no_apns_columns"),
        BadRow(label: "FCM row with a collapse id", columns: ["collapse_id": "c"], constraint: "notifications_fcm_no_apns_columns"),
        BadRow(label: "FCM row with an environment", columns: ["environment": "production"], constraint: "notifications_fcm_no_apns_columns"),
        BadRow(label: "FCM row with a push type", columns: ["push_type": "background"], constraint: "notifications_fcm_no_apns_columns"),
        BadRow(label: "APNs row with an FCM token", columns: ["provider": "apns"], constraint: "notifications_device_token_hex"),
        BadRow(label: "APNs row with a short hex token", columns: ["provider": "apns", "device_token": "abcd"],
               constraint: "notifications_device_token_length"),
    ]

    @Test("a bad FCM row is refused with a named constraint", arguments: badRows)
    func badRowRefused(_ row: BadRow) async throws {
        try await TestDatabase.withConnection { c in
            let error = await #expect(throws: PGError.self) { try await Self.insert(c, row.columns) }
            #expect(error?.sqlState == "23514")
            #expect(error?.constraint == row.constraint)
            let count = try await c.query("SELECT count(*) FROM pushq.notifications").decode(Int.self, 0, 0)
            #expect(count == 0)
        }
    }

    @Test("an FCM payload holding \\u0000 is refused (22P05, found while checking the target); an APNs one is kept as before")
    func nulEscape() async throws {
        try await TestDatabase.withConnection { c in
            let payload = #"{"data":{"k":"\u0000"}}"#
            let error = await #expect(throws: PGError.self) { try await Self.insert(c, ["payload": payload]) }
            #expect(error?.sqlState == "22P05")
            try await Self.insert(c, ["provider": "apns", "device_token": Self.apnsToken, "payload": payload])
            let count = try await c.query("SELECT count(*) FROM pushq.notifications").decode(Int.self, 0, 0)
            #expect(count == 1)
        }
    }

    @Test("valid FCM rows are accepted and kept as given: token case, payload bytes, APNs-only columns NULL")
    func validFCMRows() async throws {
        try await TestDatabase.withConnection { c in
            let full = #"{"notification":{"title":"Hi","body":"B"},"data":{"token":"nested is fine"},"android":{"priority":"high"},"apns":{"payload":{"aps":{"badge":1}}}}"#
            let a = try await Self.insert(c, ["payload": full])
            let b = try await Self.insert(c, ["payload": Self.fcmPayload(bytes: 4096), "device_token": String(repeating: "Z", count: 4096)])
            let h = try await Self.insert(c, ["device_token": Self.apnsToken, "payload": "{}", "credential": "firebase",
                                             "expires_at": "2100-01-01T00:00:00Z"])
            let r = try await c.query("""
                SELECT id, provider, device_token, payload, push_type, topic, environment, priority, collapse_id, fcm_message_name
                  FROM pushq.notifications ORDER BY id
                """)
            #expect(r.count == 3)
            #expect(try r.decode(Int64.self, 0, "id") == a && r.bytes(0, 3) == Array(full.utf8))
            #expect(r.string(0, 2) == Self.fcmToken)
            #expect(try r.decode(Int64.self, 1, "id") == b && r.bytes(1, 3)?.count == 4096)
            #expect(try r.decode(Int64.self, 2, "id") == h && r.string(2, 2) == Self.apnsToken)
            for row in 0..<3 {
                #expect(r.string(row, 1) == "fcm" && r.string(row, 4) == "alert")
                #expect(r.string(row, 5) == nil && r.string(row, 6) == nil && r.string(row, 7) == nil && r.string(row, 8) == nil && r.string(row, 9) == nil)
            }
        }
    }

    @Test("the APNs INSERTs of docs/producers.md, naming no provider, still make APNs rows")
    func apnsProducersUnchanged() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload)
                VALUES ($1, '{"aps":{"alert":{"title":"Order 1042","body":"Your order has shipped"},"sound":"default"}}')
                """, [Self.apnsToken])
            try await c.query("""
                INSERT INTO pushq.notifications
                    (device_token, payload, push_type, priority, expires_at, collapse_id, environment, metadata)
                VALUES
                    ($1, '{"aps":{"content-available":1},"sync":"inbox"}', 'background', 5,
                     now() + interval '1 hour', NULL, 'production', '{"user":"u42"}'),
                    ($1, '{"aps":{"alert":"Score: 2-1"}}', 'alert', 10,
                     now() + interval '10 minutes', 'match-77', 'production', '{"campaign":"live-scores"}')
                """, [Self.apnsToken.uppercased()])
            try await c.query("INSERT INTO pushq.notifications (device_token, payload) SELECT token, $2::json FROM unnest($1::text[]) AS token",
                              [[Self.apnsToken, String(repeating: "cd", count: 32)], #"{"aps":{"alert":"x"}}"#])
            // An APNs voip row keeps its 5120 bytes.
            try await c.query("INSERT INTO pushq.notifications (device_token, payload, push_type) VALUES ($1, $2, 'voip')",
                              [Self.apnsToken, Self.fcmPayload(bytes: 5120)])
            let r = try await c.query("SELECT count(*), count(*) FILTER (WHERE provider = 'apns') FROM pushq.notifications")
            #expect(r.string(0, 0) == "6" && r.string(0, 1) == "6")
        }
    }

    /// devices: FCM tokens kept as given, APNs ones lower-cased; the ON CONFLICT (device_token, environment)
    /// of docs/producers.md still works
    @Test("devices: FCM tokens kept as given, APNs ones lower-cased; ON CONFLICT (device_token, environment) still works")
    func devices() async throws {
        try await TestDatabase.withConnection { c in
            let register = """
                INSERT INTO pushq.devices (device_token, environment, user_ref, topic)
                VALUES ($1, 'production', $2, 'com.example.app')
                ON CONFLICT (device_token, environment)
                DO UPDATE SET user_ref = EXCLUDED.user_ref, topic = EXCLUDED.topic, registered_at = now()
                """
            try await c.query(register, [Self.apnsToken.uppercased(), "alice"])
            try await c.query(register, [Self.apnsToken, "bob"])
            try await c.query("""
                INSERT INTO pushq.devices (device_token, provider, user_ref) VALUES ($1, 'fcm', 'alice')
                ON CONFLICT (device_token, environment, provider) DO UPDATE SET user_ref = EXCLUDED.user_ref
                """, [Self.fcmToken])
            try await c.query("""
                INSERT INTO pushq.devices (device_token, provider, user_ref, invalidated_at, invalid_reason)
                VALUES ($1, 'fcm', 'carol', now(), 'UNREGISTERED'), ($2, 'fcm', 'carol', now(), 'INVALID_ARGUMENT')
                """, [Self.fcmToken.lowercased(), Self.fcmToken.uppercased()])
            let r = try await c.query("SELECT device_token, environment, provider, user_ref FROM pushq.devices ORDER BY provider, device_token")
            #expect(r.count == 4)
            #expect(r.string(0, 0) == Self.apnsToken && r.string(0, 2) == "apns" && r.string(0, 3) == "bob")
            #expect(Set((1..<4).map { r.string($0, 0) ?? "" }) == [Self.fcmToken, Self.fcmToken.lowercased(), Self.fcmToken.uppercased()])
            #expect((1..<4).allSatisfy { r.string($0, 1) == "production" && r.string($0, 2) == "fcm" })

            let bad: [(String, String)] = [
                ("INSERT INTO pushq.devices (device_token, provider, environment) VALUES ('tok', 'fcm', 'development')", "devices_fcm_environment_default"),
                ("INSERT INTO pushq.devices (device_token, provider) VALUES ('to.k', 'fcm')", "devices_fcm_token_charset"),
                ("INSERT INTO pushq.devices (device_token, provider) VALUES ('', 'fcm')", "devices_fcm_token_length"),
                ("INSERT INTO pushq.devices (device_token, provider) VALUES ('tok', 'hms')", "devices_provider_known"),
                ("INSERT INTO pushq.devices (device_token) VALUES ('tok:1')", "devices_device_token_hex"),
                ("INSERT INTO pushq.devices (device_token, provider, invalid_reason) VALUES ('tok', 'fcm', 'NOT_FOUND')", "devices_invalid_reason_known"),
            ]
            for (sql, constraint) in bad {
                let error = await #expect(throws: PGError.self) { try await c.query(sql) }
                #expect(error?.constraint == constraint, "\(sql)")
            }
        }
    }

    /// the registry's key is (device_token, environment, provider); (device_token, environment) stays unique;
    /// every new constraint is validated
    @Test("the registry's key is (device_token, environment, provider); (device_token, environment) stays unique")
    func keysAndValidation() async throws {
        try await TestDatabase.withConnection { c in
            let keys = try await c.query("""
                SELECT conname, contype::text, pg_get_constraintdef(oid) FROM pg_constraint
                 WHERE conrelid = 'pushq.devices'::regclass AND contype IN ('p', 'u') ORDER BY conname
                """)
            #expect(keys.count == 2)
            #expect(keys.string(0, 0) == "devices_pkey" && keys.string(0, 2) == "PRIMARY KEY (device_token, environment, provider)")
            #expect(keys.string(1, 0) == "devices_token_environment_key" && keys.string(1, 2) == "UNIQUE (device_token, environment)")
            // The registry's are validated constraints; the notifications' are rules of its trigger since schema 56.
            let r = try await c.query("""
                SELECT conname FROM pg_constraint WHERE conrelid = 'pushq.devices'::regclass AND convalidated
                """)
            let enforced = try await TableRules.enforced(c).union((0..<r.count).compactMap { r.string($0, 0) })
            #expect(Set(Self.constraints).subtracting(enforced).isEmpty, "not in force: \(Set(Self.constraints).subtracting(enforced).sorted())")
            // No index left invalid by the concurrent builds.
            #expect(try await c.query("SELECT count(*) FROM pg_index WHERE NOT indisvalid").decode(Int.self, 0, 0) == 0)
        }
    }

    static let constraints = [
        "notifications_provider_known", "notifications_device_token_hex", "notifications_device_token_length",
        "notifications_fcm_token_charset", "notifications_fcm_token_length", "notifications_fcm_payload_target",
        "notifications_payload_size", "notifications_fcm_no_apns_columns",
        "devices_provider_known", "devices_device_token_hex", "devices_device_token_length", "devices_fcm_token_charset",
        "devices_fcm_token_length", "devices_fcm_environment_default", "devices_invalid_reason_known",
    ]

    @Test("enqueue_for_user: APNs devices get payload, FCM devices fcm_payload; either may be left out; old calls unchanged")
    func enqueueForUser() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.devices (device_token, environment, provider, user_ref, topic) VALUES
                  ($1, 'development', 'apns', 'alice', 'com.example.app'),
                  ($2, 'production',  'fcm',  'alice', 'ignored.for.fcm'),
                  ($3, 'production',  'fcm',  'alice', NULL)
                """, [Self.apnsToken, Self.fcmToken, "Zz:1"])
            try await c.query("INSERT INTO pushq.devices (device_token, provider, user_ref, registered_at, invalidated_at, invalid_reason) VALUES ('Gone:1', 'fcm', 'alice', NULL, now(), 'UNREGISTERED')")
            // Version 1 calls: positional and named, APNs devices only.
            let old = try await c.query("""
                SELECT * FROM pushq.enqueue_for_user('alice', '{"aps":{"alert":"a"}}', NULL, 'voip', 10, NULL, 'c1', NULL, now(), 5, '{"m":1}')
                """)
            #expect(old.count == 1)
            let named = try await c.query("SELECT * FROM pushq.enqueue_for_user('alice', '{\"aps\":{}}', collapse_id => 'c2')")
            #expect(named.count == 1)
            // Both providers.
            let both = try await c.query("""
                SELECT * FROM pushq.enqueue_for_user('alice', '{"aps":{"alert":"b"}}', push_type => 'alert', priority => 5,
                                                     collapse_id => 'c3', credential => 'shared', metadata => '{"m":2}',
                                                     fcm_payload => '{"notification":{"title":"b"}}')
                """)
            #expect(both.count == 3)
            // FCM only: payload NULL skips the APNs devices.
            let fcmOnly = try await c.query("""
                SELECT * FROM pushq.enqueue_for_user('alice', NULL, fcm_payload => '{"data":{"k":"v"}}')
                """)
            #expect(fcmOnly.count == 2)
            let r = try await c.query("""
                SELECT provider, device_token, payload::text, topic, push_type, priority, collapse_id, environment, credential, metadata::text
                  FROM pushq.notifications WHERE id = ANY ($1::bigint[]) ORDER BY id
                """, [(0..<both.count).compactMap { try? both.decode(Int64.self, $0, 0) }])
            #expect((0..<3).map { r.string($0, 0) ?? "" } == ["apns", "fcm", "fcm"], "ordered by (provider, token)")
            #expect(r.string(0, 1) == Self.apnsToken && r.string(0, 3) == "com.example.app" && r.string(0, 5) == "5"
                    && r.string(0, 6) == "c3" && r.string(0, 7) == "development")
            #expect(r.string(1, 1) == "Zz:1" && r.string(2, 1) == Self.fcmToken)
            for row in 1...2 {
                #expect(r.string(row, 2) == #"{"notification":{"title":"b"}}"#)
                #expect(r.string(row, 3) == nil && r.string(row, 4) == "alert" && r.string(row, 5) == nil && r.string(row, 6) == nil && r.string(row, 7) == nil)
                #expect(r.string(row, 8) == "shared" && r.string(row, 9) == #"{"m": 2}"#)
            }
            let fcmRows = try await c.query("SELECT count(*) FROM pushq.notifications WHERE provider = 'fcm' AND payload::text = '{\"data\":{\"k\":\"v\"}}'")
            #expect(fcmRows.string(0, 0) == "2")
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications").decode(Int.self, 0, 0) == 7)
        }
    }
}
