import Foundation
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// Web Push in the schema (migration 105): a row breaking one of the contract's rules is refused
/// with SQLSTATE 23514 naming its rule; a valid row is kept byte for byte; the registry takes
/// subscriptions under rules of its own; APNs and FCM rows and devices are as before.
@Suite("Web Push schema")
struct WebPushSchemaTests {
    /// RFC 8291 Appendix A's subscription: its user agent's public key and auth secret.
    static let p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
    static let keys = #"{"p256dh":"\#(p256dh)","auth":"\#(auth)"}"#
    /// Mixed case and a query: stored and matched exactly as the browser gave it.
    static let endpoint = "https://fcm.googleapis.com/fcm/send/dY3-Qx:APA91bHr_kQ?up=1"

    /// Inserts one Web Push notification built from defaults plus `columns`; returns its id.
    @discardableResult
    static func insert(_ c: PGConnection, _ columns: [String: String?]) async throws -> Int64 {
        var all: [String: String?] = ["provider": "webpush", "device_token": endpoint, "webpush_keys": keys,
                                      "payload": #"{"web_push":8030,"notification":{"title":"Hi","navigate":"https://example.com/"}}"#]
        for (k, v) in columns { all[k] = v }
        let names = all.keys.sorted()
        let placeholders = names.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        let sql = "INSERT INTO pushq.notifications (\(names.joined(separator: ", "))) VALUES (\(placeholders)) RETURNING id"
        return try await c.query(sql, names.map { all[$0]! }).decode(Int64.self, 0, "id")
    }

    /// A payload of exactly `size` bytes: {"k":"xxx…"}.
    static func payload(bytes size: Int) -> String {
        #"{"k":""# + String(repeating: "x", count: size - 8) + #""}"#
    }

    /// `keys` with `p256dh` and `auth` replaced.
    static func keys(p256dh: String = p256dh, auth: String = auth) -> String {
        #"{"p256dh":"\#(p256dh)","auth":"\#(auth)"}"#
    }

    struct BadRow: Sendable, CustomTestStringConvertible {
        var label: String
        var columns: [String: String?]
        var constraint: String
        var testDescription: String { label }
    }

    /// A point whose first byte is 0x02 (compressed form's tag), otherwise as long as the real one.
    static let compressedTag = "A" + p256dh.dropFirst()

    static let badRows: [BadRow] = [
        BadRow(label: "unknown provider", columns: ["provider": "web-push"], constraint: "notifications_provider_known"),
        // Endpoint: the form WebPushEndpoint accepts.
        BadRow(label: "http endpoint", columns: ["device_token": "http://push.example.com/x"], constraint: "notifications_webpush_endpoint"),
        BadRow(label: "another scheme", columns: ["device_token": "wss://push.example.com/x"], constraint: "notifications_webpush_endpoint"),
        BadRow(label: "userinfo", columns: ["device_token": "https://user:pw@push.example.com/x"], constraint: "notifications_webpush_endpoint"),
        BadRow(label: "no path", columns: ["device_token": "https://push.example.com"], constraint: "notifications_webpush_endpoint"),
        BadRow(label: "query without a path", columns: ["device_token": "https://push.example.com?x=1"], constraint: "notifications_webpush_endpoint"),
        BadRow(label: "fragment", columns: ["device_token": "https://push.example.com/x#y"], constraint: "notifications_webpush_endpoint"),
        // The hold of an origin is keyed by its text (port without leading zeros): :08443 would be another origin's key.
        BadRow(label: "port with a leading zero", columns: ["device_token": "https://push.example.com:08443/x"],
               constraint: "notifications_webpush_endpoint"),
        BadRow(label: "backslash", columns: ["device_token": #"https://push.example.com\@evil/x"#], constraint: "notifications_webpush_endpoint"),
        BadRow(label: "percent-encoded host", columns: ["device_token": "https://%31%32%37.0.0.1/x"], constraint: "notifications_webpush_endpoint"),
        BadRow(label: "a space", columns: ["device_token": "https://push.example.com/a b"], constraint: "notifications_webpush_endpoint"),
        BadRow(label: "non-ASCII", columns: ["device_token": "https://push.example.com/é"], constraint: "notifications_webpush_endpoint"),
        BadRow(label: "empty endpoint", columns: ["device_token": ""], constraint: "notifications_webpush_endpoint"),
        BadRow(label: "2049-byte endpoint", columns: ["device_token": "https://push.example.com/" + String(repeating: "a", count: 2049 - 25)],
               constraint: "notifications_webpush_endpoint"),
        // Keys: PushSubscription.toJSON().keys.
        BadRow(label: "no keys", columns: ["webpush_keys": nil], constraint: "notifications_webpush_keys"),
        BadRow(label: "keys not an object", columns: ["webpush_keys": #"["a","b"]"#], constraint: "notifications_webpush_keys"),
        BadRow(label: "p256dh missing", columns: ["webpush_keys": #"{"auth":"\#(auth)"}"#], constraint: "notifications_webpush_keys"),
        BadRow(label: "auth missing", columns: ["webpush_keys": #"{"p256dh":"\#(p256dh)"}"#], constraint: "notifications_webpush_keys"),
        BadRow(label: "p256dh a number", columns: ["webpush_keys": #"{"p256dh":4,"auth":"\#(auth)"}"#], constraint: "notifications_webpush_keys"),
        BadRow(label: "p256dh of 64 bytes", columns: ["webpush_keys": keys(p256dh: String(p256dh.prefix(86)))], constraint: "notifications_webpush_keys"),
        BadRow(label: "p256dh of 66 bytes", columns: ["webpush_keys": keys(p256dh: p256dh + "AA")], constraint: "notifications_webpush_keys"),
        BadRow(label: "p256dh not starting 0x04", columns: ["webpush_keys": keys(p256dh: compressedTag)], constraint: "notifications_webpush_keys"),
        BadRow(label: "p256dh in standard base64", columns: ["webpush_keys": keys(p256dh: p256dh.replacingOccurrences(of: "-", with: "+"))],
               constraint: "notifications_webpush_keys"),
        BadRow(label: "auth of 15 bytes", columns: ["webpush_keys": keys(auth: "BTBZMqHH6r4Tts7J_aSI")], constraint: "notifications_webpush_keys"),
        BadRow(label: "auth of 17 bytes", columns: ["webpush_keys": keys(auth: auth + "AA")], constraint: "notifications_webpush_keys"),
        BadRow(label: "auth with a dot", columns: ["webpush_keys": keys(auth: "BTBZMqHH6r4Tts7J.aSIgg")], constraint: "notifications_webpush_keys"),
        BadRow(label: "keys on an APNs row", columns: ["provider": "apns", "device_token": String(repeating: "ab", count: 32)],
               constraint: "notifications_webpush_keys_provider"),
        BadRow(label: "keys on an FCM row", columns: ["provider": "fcm", "device_token": "fcm-token"], constraint: "notifications_webpush_keys_provider"),
        // APNs-only columns, as for FCM.
        BadRow(label: "a topic", columns: ["topic": "com.example.app"], constraint: "notifications_webpush_no_apns_columns"),
        BadRow(label: "an environment", columns: ["environment": "production"], constraint: "notifications_webpush_no_apns_columns"),
        BadRow(label: "a push type", columns: ["push_type": "background"], constraint: "notifications_webpush_no_apns_columns"),
        // Payload: at most 3 993 bytes (RFC 8291 §4), an object like every row's.
        BadRow(label: "payload 3994 bytes", columns: ["payload": payload(bytes: 3994)], constraint: "notifications_webpush_payload_size"),
        BadRow(label: "payload an array", columns: ["payload": "[1]"], constraint: "notifications_payload_object"),
        // Topic (collapse_id): 1–32 of A-Z a-z 0-9 - _ (RFC 8030 §5.4).
        BadRow(label: "Topic of 33 characters", columns: ["collapse_id": String(repeating: "t", count: 33)], constraint: "notifications_webpush_topic"),
        BadRow(label: "empty Topic", columns: ["collapse_id": ""], constraint: "notifications_webpush_topic"),
        BadRow(label: "Topic with a dot", columns: ["collapse_id": "news.1"], constraint: "notifications_webpush_topic"),
        BadRow(label: "Topic with a slash", columns: ["collapse_id": "news/1"], constraint: "notifications_webpush_topic"),
        BadRow(label: "Topic with padding", columns: ["collapse_id": "bmV3cw=="], constraint: "notifications_webpush_topic"),
        BadRow(label: "priority 7", columns: ["priority": "7"], constraint: "notifications_priority_valid"),
    ]

    @Test("a Web Push row breaking one of the contract's rules is refused with 23514 naming its rule", arguments: badRows)
    func badRowRefused(_ row: BadRow) async throws {
        try await TestDatabase.withConnection { c in
            let error = await #expect(throws: PGError.self) { try await Self.insert(c, row.columns) }
            #expect(error?.sqlState == "23514")
            #expect(error?.constraint == row.constraint)
            let count = try await c.query("SELECT count(*) FROM pushq.notifications").decode(Int.self, 0, 0)
            #expect(count == 0)
        }
    }

    struct GoodRow: Sendable, CustomTestStringConvertible {
        var label: String
        var columns: [String: String?]
        var testDescription: String { label }
    }

    static let goodRows: [GoodRow] = [
        GoodRow(label: "the defaults", columns: [:]),
        GoodRow(label: "a port and a path with every visible character but # and backslash",
                columns: ["device_token": "https://push.example.com:8443/a!$&'()*+,;=:@~%2F-._?q=[x]&r={y}|^`\""]),
        GoodRow(label: "an IPv6 literal host", columns: ["device_token": "https://[2001:db8::1]:443/p"]),
        GoodRow(label: "upper-case scheme", columns: ["device_token": "HTTPS://Push.Example.COM/AbC"]),
        GoodRow(label: "a 2048-byte endpoint", columns: ["device_token": "https://push.example.com/" + String(repeating: "a", count: 2048 - 25)]),
        GoodRow(label: "padded keys", columns: ["webpush_keys": keys(p256dh: p256dh + "=", auth: auth + "==")]),
        GoodRow(label: "keys with another member", columns: ["webpush_keys": #"{"p256dh":"\#(p256dh)","auth":"\#(auth)","x":1}"#]),
        GoodRow(label: "payload 3993 bytes", columns: ["payload": payload(bytes: 3993)]),
        GoodRow(label: "Topic of 32 characters", columns: ["collapse_id": "Aa0-_" + String(repeating: "z", count: 27)]),
        GoodRow(label: "Topic of 1 character", columns: ["collapse_id": "x"]),
        GoodRow(label: "Urgency low", columns: ["priority": "1"]),
        GoodRow(label: "Urgency normal", columns: ["priority": "5"]),
        GoodRow(label: "Urgency high", columns: ["priority": "10"]),
        GoodRow(label: "a credential, an expiry, a lane", columns: ["credential": "site-b", "expires_at": "2030-01-01T00:00:00Z", "lane": "web"]),
    ]

    @Test("a valid Web Push row is kept as written: endpoint and keys byte for byte", arguments: goodRows)
    func goodRowKept(_ row: GoodRow) async throws {
        try await TestDatabase.withConnection { c in
            let id = try await Self.insert(c, row.columns)
            let r = try await c.query("""
                SELECT provider, device_token, webpush_keys::text AS keys, payload::text AS payload, collapse_id, status,
                       webpush_location, (SELECT count(*) FROM pushq.due d WHERE d.id = n.id) AS due
                  FROM pushq.notifications n WHERE id = $1
                """, [id])
            let endpoint = row.columns["device_token"] ?? Self.endpoint
            #expect(try r.decodeOptional(String.self, 0, "provider") == "webpush" && r.decodeOptional(String.self, 0, "device_token") == endpoint)
            let keys = try #require(row.columns["webpush_keys"] ?? Self.keys)
            let stored = try await c.query("SELECT $1::jsonb::text = $2", [keys, try r.decodeOptional(String.self, 0, "keys")]).string(0, 0)
            #expect(stored == "t")
            if let payload = row.columns["payload"] { #expect(try r.decodeOptional(String.self, 0, "payload") == payload) }
            #expect(try r.decodeOptional(String.self, 0, "collapse_id") == row.columns["collapse_id"] ?? nil)
            #expect(try r.decodeOptional(String.self, 0, "status") == "queued" && r.decodeOptional(String.self, 0, "webpush_location") == nil)
            #expect(try r.decode(Int.self, 0, "due") == 1, "the row waits in pushq.due")
        }
    }

    @Test("a Web Push row's keys changed by UPDATE are checked again; a final row keeps them")
    func updateChecked() async throws {
        try await TestDatabase.withConnection { c in
            let id = try await Self.insert(c, [:])
            let error = await #expect(throws: PGError.self) {
                try await c.query("UPDATE pushq.notifications SET webpush_keys = '{\"p256dh\":\"x\",\"auth\":\"y\"}' WHERE id = $1", [id])
            }
            #expect(error?.constraint == "notifications_webpush_keys")
            try await c.query("UPDATE pushq.notifications SET status = 'sent', finished_at = now() WHERE id = $1", [id])
            let kept = try await c.query("SELECT webpush_keys IS NOT NULL FROM pushq.notifications WHERE id = $1", [id]).string(0, 0)
            #expect(kept == "t")
        }
    }

    // The registry.
    static func register(_ c: PGConnection, _ columns: [String: String?]) async throws {
        var all: [String: String?] = ["provider": "webpush", "device_token": endpoint, "webpush_keys": keys, "user_ref": "u1"]
        for (k, v) in columns { all[k] = v }
        let names = all.keys.sorted()
        let placeholders = names.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        try await c.query("INSERT INTO pushq.devices (\(names.joined(separator: ", "))) VALUES (\(placeholders))", names.map { all[$0]! })
    }

    static let badDevices: [BadRow] = [
        BadRow(label: "unknown provider", columns: ["provider": "wns"], constraint: "devices_provider_known"),
        BadRow(label: "http endpoint", columns: ["device_token": "http://push.example.com/x"], constraint: "devices_webpush_endpoint"),
        BadRow(label: "userinfo", columns: ["device_token": "https://u@push.example.com/x"], constraint: "devices_webpush_endpoint"),
        BadRow(label: "fragment", columns: ["device_token": "https://push.example.com/x#f"], constraint: "devices_webpush_endpoint"),
        BadRow(label: "no keys", columns: ["webpush_keys": nil], constraint: "devices_webpush_keys"),
        BadRow(label: "p256dh of 64 bytes", columns: ["webpush_keys": keys(p256dh: String(p256dh.prefix(86)))], constraint: "devices_webpush_keys"),
        BadRow(label: "auth of 15 bytes", columns: ["webpush_keys": keys(auth: "BTBZMqHH6r4Tts7J_aSI")], constraint: "devices_webpush_keys"),
        BadRow(label: "development environment", columns: ["environment": "development"], constraint: "devices_webpush_environment_default"),
        BadRow(label: "keys on an APNs device", columns: ["provider": "apns", "device_token": String(repeating: "ab", count: 32)],
               constraint: "devices_webpush_keys_provider"),
        BadRow(label: "keys on an FCM device", columns: ["provider": "fcm", "device_token": "fcm-token"], constraint: "devices_webpush_keys_provider"),
        BadRow(label: "an unknown invalid_reason", columns: ["invalidated_at": "2030-01-01T00:00:00Z", "invalid_reason": "Vanished"],
               constraint: "devices_invalid_reason_known"),
        BadRow(label: "an unknown invalid_reason on an APNs device",
               columns: ["provider": "apns", "device_token": String(repeating: "ab", count: 32), "webpush_keys": nil,
                         "invalidated_at": "2030-01-01T00:00:00Z", "invalid_reason": "Vanished"],
               constraint: "devices_invalid_reason_known"),
    ]

    @Test("a Web Push subscription breaking a rule of the registry is refused with 23514 naming it", arguments: badDevices)
    func badDeviceRefused(_ row: BadRow) async throws {
        try await TestDatabase.withConnection { c in
            let error = await #expect(throws: PGError.self) { try await Self.register(c, row.columns) }
            #expect(error?.sqlState == "23514")
            #expect(error?.constraint == row.constraint)
            let count = try await c.query("SELECT count(*) FROM pushq.devices").decode(Int.self, 0, 0)
            #expect(count == 0)
        }
    }

    @Test("subscriptions are kept byte for byte beside APNs and FCM devices; Gone and NotFound are invalid reasons")
    func devicesKept() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.register(c, [:])
            // The same endpoint in another case is another subscription (no case folding).
            let upper = Self.endpoint.replacingOccurrences(of: "send", with: "SEND")
            try await Self.register(c, ["device_token": upper, "invalidated_at": "2030-01-01T00:00:00Z", "invalid_reason": "Gone"])
            try await Self.register(c, ["device_token": Self.endpoint + "2", "invalidated_at": "2030-01-01T00:00:00Z", "invalid_reason": "NotFound"])
            try await c.execute("""
                INSERT INTO pushq.devices (device_token, user_ref) VALUES (repeat('AB', 32), 'u1');
                INSERT INTO pushq.devices (device_token, provider, user_ref) VALUES ('Fcm-Token', 'fcm', 'u1');
                """)
            let r = try await c.query("SELECT provider, device_token, environment FROM pushq.devices ORDER BY provider, device_token")
            let rows = (0..<r.count).map { "\(r.string($0, 0) ?? "")|\(r.string($0, 1) ?? "")|\(r.string($0, 2) ?? "")" }
            #expect(Set(rows) == [
                "apns|\(String(repeating: "ab", count: 32))|production", "fcm|Fcm-Token|production",
                "webpush|\(Self.endpoint)|production", "webpush|\(Self.endpoint)2|production", "webpush|\(upper)|production",
            ] && rows.count == 5)
        }
    }
}

extension WebPushSchemaTests {
    // What the worker's write-back records after a 404/410 to an endpoint nobody registered: the
    // endpoint, invalid, without keys. It may never become a valid subscription without them.
    @Test("an invalid endpoint may be recorded without keys; made valid again without keys it is refused")
    func invalidRecordWithoutKeys() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.register(c, ["webpush_keys": nil, "registered_at": nil, "invalidated_at": "2030-01-01T00:00:00Z",
                                        "invalid_reason": "NotFound"])
            let error = await #expect(throws: PGError.self) {
                try await c.query("UPDATE pushq.devices SET registered_at = '2031-01-01T00:00:00Z' WHERE provider = 'webpush'")
            }
            #expect(error?.constraint == "devices_webpush_keys")
            try await c.query("UPDATE pushq.devices SET registered_at = '2031-01-01T00:00:00Z', webpush_keys = $1 WHERE provider = 'webpush'",
                              [Self.keys])
        }
    }
}
