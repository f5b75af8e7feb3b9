import Foundation
import PushServe
import PushStore
import PushTestSupport
import Testing

/// Web Push over the API (issue 47 item 3): `PUT /api/v1/devices` takes a browser's
/// `PushSubscription` as `toJSON()` gives it, with a `user_ref`; bad input is a 400 naming the
/// field; the per-user fan-out reaches a user's browsers with `webpush_payload`; a single Web Push
/// row can be enqueued with its `webpush_keys`.
@Suite("API: Web Push")
struct WebPushAPITests {
    static let p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
    static let endpoint = "https://fcm.googleapis.com/fcm/send/dY3-Qx:APA91bHr_kQ"

    static func subscription(endpoint: String = endpoint, keys: String = #"{"p256dh":"\#(p256dh)","auth":"\#(auth)"}"#,
                             extra: String = #","user_ref":"ann""#) -> String {
        #"{"endpoint":"\#(endpoint)","expirationTime":null,"keys":\#(keys)\#(extra)}"#
    }

    @Test("PUT /devices takes a PushSubscription as the browser gives it: endpoint byte for byte, keys, user_ref; again: refreshed")
    func registersSubscription() async throws {
        try await ServeHarness.with { serve, db in
            let put = try await serve.call("PUT", "/api/v1/devices", key: "devices", json: Self.subscription())
            #expect(put.status == 201, "\(put.body)")
            let row = try await db.query("""
                SELECT provider, device_token, environment, user_ref, webpush_keys ->> 'p256dh', webpush_keys ->> 'auth' FROM pushq.devices
                """)
            #expect(row.count == 1 && row.string(0, 0) == "webpush" && row.string(0, 1) == Self.endpoint && row.string(0, 2) == "production")
            #expect(row.string(0, 3) == "ann" && row.string(0, 4) == Self.p256dh && row.string(0, 5) == Self.auth)
            // Invalidated (a 410), then subscribed again: registered anew, valid.
            try await db.query("UPDATE pushq.devices SET invalidated_at = now(), invalid_reason = 'Gone'")
            let again = try await serve.call("PUT", "/api/v1/devices", key: "devices", json: Self.subscription())
            #expect(again.status == 200, "\(again.body)")
            let valid = try await db.query("SELECT NOT pushq.token_is_invalid(registered_at, invalidated_at) FROM pushq.devices")
            #expect(valid.string(0, 0) == "t")
        }
    }

    /// The auth secret is what lets anyone encrypt to the browser: stored for the worker, it never
    /// leaves through the API. The answers keep `webpush_keys` with its `p256dh` alone; the other
    /// columns as they are.
    @Test("PUT /devices and GET /users/{u}/devices answer webpush_keys with p256dh alone, never the auth secret")
    func answersWithoutAuthSecret() async throws {
        try await ServeHarness.with { serve, db in
            let put = try await serve.call("PUT", "/api/v1/devices", key: "devices", json: Self.subscription())
            #expect(put.status == 201, "\(put.body)")
            let again = try await serve.call("PUT", "/api/v1/devices", key: "devices", json: Self.subscription())
            #expect(again.status == 200, "\(again.body)")
            try await db.query("INSERT INTO pushq.devices (device_token, user_ref) VALUES (repeat('ab', 32), 'ann')")
            let list = try await serve.call("GET", "/api/v1/users/ann/devices", key: "devices")
            #expect(list.status == 200, "\(list.body)")
            for answer in [put, again, list] {
                #expect(!answer.body.contains(Self.auth) && !answer.body.contains(#""auth""#), "\(answer.body)")
            }
            for answer in [put, again] {
                let keys = try #require(try answer.json["webpush_keys"] as? [String: Any], "\(answer.body)")
                #expect(keys.count == 1 && keys["p256dh"] as? String == Self.p256dh)
                #expect(try answer.json["device_token"] as? String == Self.endpoint && answer.json["user_ref"] as? String == "ann")
            }
            let devices = try #require(try list.json["devices"] as? [[String: Any]])
            let browser = try #require(devices.first { $0["provider"] as? String == "webpush" })
            #expect((browser["webpush_keys"] as? [String: Any])?.count == 1 && (browser["webpush_keys"] as? [String: Any])?["p256dh"] as? String == Self.p256dh)
            let phone = try #require(devices.first { $0["provider"] as? String == "apns" })
            #expect(phone["webpush_keys"] is NSNull, "an APNs device keeps webpush_keys null")
            // Stored whole for the worker.
            #expect(try await db.query("SELECT webpush_keys ->> 'auth' FROM pushq.devices WHERE provider = 'webpush'").string(0, 0) == Self.auth)
        }
    }

    /// A read key sees a Web Push row through `GET /notifications/{id}` with every column, but its
    /// `webpush_keys` with the `p256dh` alone.
    @Test("GET /notifications/{id} answers a Web Push row's webpush_keys with p256dh alone, never the auth secret")
    func notificationWithoutAuthSecret() async throws {
        try await ServeHarness.with { serve, db in
            let keys = #"{"p256dh":"\#(Self.p256dh)","auth":"\#(Self.auth)"}"#
            let made = try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: """
                {"provider":"webpush","device_token":"\(Self.endpoint)","webpush_keys":\(keys),"payload":{"web_push":8030}}
                """)
            #expect(made.status == 201, "\(made.body)")
            let id = try #require(try made.json["id"] as? Int)
            let row = try await serve.call("GET", "/api/v1/notifications/\(id)", key: "read")
            #expect(row.status == 200 && !row.body.contains(Self.auth) && !row.body.contains(#""auth""#), "\(row.body)")
            #expect(try (row.json["webpush_keys"] as? [String: Any])?.count == 1 && (row.json["webpush_keys"] as? [String: Any])?["p256dh"] as? String == Self.p256dh)
            #expect(try row.json["device_token"] as? String == Self.endpoint && row.json["status"] as? String == "queued")
            #expect(try await db.query("SELECT webpush_keys ->> 'auth' FROM pushq.notifications").string(0, 0) == Self.auth)
        }
    }

    struct Bad: Sendable, CustomTestStringConvertible {
        var label: String
        var body: String
        var field: String
        var testDescription: String { label }
    }

    static let bad: [Bad] = [
        Bad(label: "http endpoint", body: subscription(endpoint: "http://push.example.com/x"), field: "endpoint"),
        Bad(label: "userinfo", body: subscription(endpoint: "https://a:b@push.example.com/x"), field: "endpoint"),
        Bad(label: "keys missing", body: #"{"endpoint":"\#(endpoint)","user_ref":"ann"}"#, field: "keys"),
        Bad(label: "keys a string", body: subscription(keys: #""abc""#), field: "keys"),
        Bad(label: "p256dh missing", body: subscription(keys: #"{"auth":"\#(auth)"}"#), field: "keys.p256dh"),
        Bad(label: "p256dh short", body: subscription(keys: #"{"p256dh":"BCVx","auth":"\#(auth)"}"#), field: "keys.p256dh"),
        Bad(label: "auth of 15 bytes", body: subscription(keys: #"{"p256dh":"\#(p256dh)","auth":"BTBZMqHH6r4Tts7J_aSI"}"#), field: "keys.auth"),
        Bad(label: "another provider", body: subscription(extra: #","provider":"fcm""#), field: "provider"),
        Bad(label: "endpoint and device_token", body: subscription(extra: #","device_token":"x""#), field: "device_token"),
        Bad(label: "expirationTime a string", body: #"{"endpoint":"\#(endpoint)","expirationTime":"soon","keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"}}"#,
            field: "expirationTime"),
        Bad(label: "keys without an endpoint", body: #"{"keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"}}"#, field: "endpoint"),
        Bad(label: "neither endpoint nor device_token", body: #"{"user_ref":"ann"}"#, field: "device_token"),
        Bad(label: "a development subscription", body: subscription(extra: #","environment":"development""#), field: "environment"),
    ]

    @Test("a malformed PushSubscription is 400 invalid_field naming the field; nothing is registered", arguments: bad)
    func refused(_ bad: Bad) async throws {
        try await ServeHarness.with { serve, db in
            let answer = try await serve.call("PUT", "/api/v1/devices", key: "devices", json: bad.body)
            #expect(try answer.status == 400 && answer.error("field") == bad.field, "\(answer.body)")
            #expect(!answer.body.contains("dY3-Qx"), "the endpoint's path is not repeated")
            #expect(try await db.query("SELECT count(*) FROM pushq.devices").string(0, 0) == "0")
        }
    }

    @Test("the fan-out reaches a user's browsers with webpush_payload, keys copied; without it, none of them")
    func fanOut() async throws {
        try await ServeHarness.with { serve, db in
            #expect(try await serve.call("PUT", "/api/v1/devices", key: "devices", json: Self.subscription()).status == 201)
            try await db.query("INSERT INTO pushq.devices (device_token, user_ref) VALUES (repeat('ab', 32), 'ann')")
            let both = try await serve.call("POST", "/api/v1/users/ann/notifications", key: "enqueue", json: """
                {"payload":{"aps":{"alert":"hi"}},"webpush_payload":{"web_push":8030,"notification":{"title":"hi","navigate":"https://example.com/"}},
                 "priority":5,"dedupe_key":"k1"}
                """)
            #expect(both.status == 201, "\(both.body)")
            let rows = try await db.query("""
                SELECT provider, device_token, payload::text, priority, webpush_keys ->> 'auth', topic FROM pushq.notifications ORDER BY provider
                """)
            #expect(rows.count == 2 && rows.string(0, 0) == "apns" && rows.string(1, 0) == "webpush")
            #expect(rows.string(1, 1) == Self.endpoint && rows.string(1, 2) == #"{"web_push":8030,"notification":{"title":"hi","navigate":"https://example.com/"}}"#)
            #expect(rows.string(1, 3) == "5" && rows.string(1, 4) == Self.auth && rows.string(1, 5) == nil)
            let apnsOnly = try await serve.call("POST", "/api/v1/users/ann/notifications", key: "enqueue", json: #"{"payload":{"aps":{}}}"#)
            #expect(apnsOnly.status == 201)
            #expect(try await db.query("SELECT count(*) FROM pushq.notifications WHERE provider = 'webpush'").string(0, 0) == "1")
        }
    }

    @Test("POST /notifications takes one Web Push row with its webpush_keys; a bad Topic is 400 naming collapse_id")
    func singleRow() async throws {
        try await ServeHarness.with { serve, db in
            let keys = #"{"p256dh":"\#(Self.p256dh)","auth":"\#(Self.auth)"}"#
            let ok = try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: """
                {"provider":"webpush","device_token":"\(Self.endpoint)","webpush_keys":\(keys),"payload":{"web_push":8030},"collapse_id":"news"}
                """)
            #expect(ok.status == 201, "\(ok.body)")
            #expect(try await db.query("SELECT webpush_keys ->> 'p256dh' FROM pushq.notifications").string(0, 0) == Self.p256dh)
            let bad = try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: """
                {"provider":"webpush","device_token":"\(Self.endpoint)","webpush_keys":\(keys),"payload":{},"collapse_id":"news.1"}
                """)
            #expect(try bad.status == 400 && bad.error("field") == "collapse_id" && bad.error("constraint") == "notifications_webpush_topic",
                    "\(bad.body)")
        }
    }
}
