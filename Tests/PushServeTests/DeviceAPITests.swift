import Foundation
import PushServe
import PushStore
import PushTestSupport
import Testing

/// `PUT /api/v1/devices`, `DELETE /api/v1/devices`, `GET /api/v1/users/{user_ref}/devices`.
@Suite("API: devices")
struct DeviceAPITests {
    static let upper = String(repeating: "AB", count: 32)

    /// register (201), refresh (200, registered_at moved, given columns changed, others kept), an APNs token
    /// stored lower-case, FCM and Live Activity kinds; list a user's devices newest first
    @Test("register (201), refresh (200, given columns changed, others kept), every kind; list a user's devices newest first")
    func register() async throws {
        try await ServeHarness.with { serve, db in
            let first = try await serve.call("PUT", "/api/v1/devices", key: "devices",
                                             json: #"{"device_token":"\#(Self.upper)","user_ref":"alice","topic":"com.example.app"}"#)
            #expect(first.status == 201, "\(first.body)")
            #expect(try first.json["device_token"] as? String == Self.upper.lowercased())
            #expect(try first.json["provider"] as? String == "apns" && first.json["environment"] as? String == "production")
            try await db.query("UPDATE pushq.devices SET registered_at = now() - interval '1 day', invalidated_at = now() - interval '1 hour', invalid_reason = 'Unregistered'")
            let again = try await serve.call("PUT", "/api/v1/devices", key: "devices", json: #"{"device_token":"\#(Self.upper)","user_ref":"bob"}"#)
            #expect(again.status == 200, "\(again.body)")
            let row = try await db.query("""
                SELECT user_ref, topic, registered_at > now() - interval '1 minute', pushq.token_is_invalid(registered_at, invalidated_at), count(*) OVER ()
                  FROM pushq.devices
                """)
            #expect(row.string(0, 0) == "bob" && row.string(0, 1) == "com.example.app" && row.string(0, 2) == "t")
            #expect(row.string(0, 3) == "f" && row.string(0, 4) == "1", "refreshed: valid again, one row")

            let fcm = try await serve.call("PUT", "/api/v1/devices", key: "admin", json: #"{"device_token":"fcm:Tok-1","provider":"fcm","user_ref":"bob"}"#)
            #expect(try fcm.status == 201 && (fcm.json["device_token"] as? String) == "fcm:Tok-1", "FCM tokens keep their case")
            let activity = try await serve.call("PUT", "/api/v1/devices", key: "devices",
                                                json: #"{"device_token":"\#(String(repeating: "c", count: 64))","kind":"live_activity","activity_id":"match-1","user_ref":"bob"}"#)
            #expect(activity.status == 201, "\(activity.body)")
            let list = try await serve.call("GET", "/api/v1/users/bob/devices", key: "read")
            #expect(list.status == 200)
            let devices = try #require(try list.json["devices"] as? [[String: Any]])
            #expect(devices.count == 3)
            #expect(devices.first?["device_token"] as? String == String(repeating: "c", count: 64), "newest first")
            let limited = try await serve.call("GET", "/api/v1/users/bob/devices?limit=1", key: "devices")
            #expect((try limited.json["devices"] as? [Any])?.count == 1)
            #expect(try await serve.call("GET", "/api/v1/users/bob/devices?limit=0", key: "devices").status == 400)
            #expect((try await serve.call("GET", "/api/v1/users/nobody/devices", key: "read").json["devices"] as? [Any])?.isEmpty == true)
        }
    }

    /// User ids as producers have them: an e-mail address, a plus, a slash, a percent sign, a
    /// space, non-ASCII letters. Clients percent-encode each of these in a path.
    static let awkwardUserRefs = ["ann@example.com", "ann+news@example.com", "team/ann", "50%off", "%41", "ann smith", "zoë", "用户-7"]

    /// `ref` as a path segment, every byte but letters, digits and `-._~` percent-encoded.
    static func pathSegment(_ ref: String) -> String {
        ref.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"))!
    }

    @Test("user refs with @ + / % space and non-ASCII, percent-encoded in the path, reach their devices and their fan-out")
    func awkwardUserRefsInThePath() async throws {
        try await ServeHarness.with { serve, _ in
            for (i, ref) in Self.awkwardUserRefs.enumerated() {
                let token = String(repeating: "0", count: 63) + String(i)
                let json = try String(decoding: JSONSerialization.data(withJSONObject: ["device_token": token, "user_ref": ref, "topic": "com.example.app"]),
                                      as: UTF8.self)
                #expect(try await serve.call("PUT", "/api/v1/devices", key: "devices", json: json).status == 201)
                let path = "/api/v1/users/\(Self.pathSegment(ref))"
                let list = try await serve.call("GET", path + "/devices", key: "read")
                let devices = try #require(try list.json["devices"] as? [[String: Any]], "\(ref): \(list.status) \(list.body)")
                #expect(devices.map { $0["device_token"] as? String } == [token], "\(ref) → \(path): \(list.body)")
                let sent = try await serve.call("POST", path + "/notifications", key: "enqueue", json: #"{"payload":{}}"#)
                #expect(try sent.status == 201 && (sent.json["ids"] as? [Int])?.count == 1, "\(ref) → \(path): \(sent.status) \(sent.body)")
            }
        }
    }

    /// the table's rules answer 400 with field, rule and constraint: a short APNs token, an unknown kind, a
    /// live_activity token without activity_id, an FCM device in development
    @Test("the table's rules answer 400 with field, rule and constraint")
    func refused() async throws {
        try await ServeHarness.with { serve, db in
            let cases: [(String, String, String)] = [
                (#"{"device_token":"abcd"}"#, "device_token", "devices_device_token_length"),
                (#"{"device_token":"\#(Self.upper)","kind":"watch"}"#, "kind", "devices_kind_known"),
                (#"{"device_token":"\#(Self.upper)","kind":"live_activity"}"#, "activity_id", "devices_activity_id_kind"),
                (#"{"device_token":"t1","provider":"fcm","environment":"development"}"#, "environment", "devices_fcm_environment_default"),
                (#"{"user_ref":"x"}"#, "device_token", ""),
            ]
            for (body, field, constraint) in cases {
                let answer = try await serve.call("PUT", "/api/v1/devices", key: "devices", json: body)
                #expect(answer.status == 400, "\(body): \(answer.body)")
                #expect(try answer.error("field") == field, "\(body): \(answer.body)")
                #expect(try answer.error("constraint") ?? "" == constraint, "\(body): \(answer.body)")
            }
            #expect(try await db.query("SELECT count(*) FROM pushq.devices").string(0, 0) == "0")
        }
    }

    /// unregister: 204 and the registration gone (an APNs token in any case), recorded in the audit log with
    /// the token shortened; again 404
    @Test("unregister: 204 and the registration gone, audited with the token shortened; again 404")
    func unregister() async throws {
        try await ServeHarness.with { serve, db in
            _ = try await serve.call("PUT", "/api/v1/devices", key: "devices", json: #"{"device_token":"\#(Self.upper)","environment":"development"}"#)
            _ = try await serve.call("PUT", "/api/v1/devices", key: "devices", json: #"{"device_token":"\#(Self.upper)"}"#)
            let wrongEnvironment = try await serve.call("DELETE", "/api/v1/devices", key: "devices",
                                                        json: #"{"device_token":"\#(Self.upper)","provider":"fcm"}"#)
            #expect(wrongEnvironment.status == 404)
            let answer = try await serve.call("DELETE", "/api/v1/devices", key: "devices", json: #"{"device_token":"\#(Self.upper)"}"#)
            #expect(answer.status == 204, "\(answer.body)")
            #expect(try await db.query("SELECT count(*) FROM pushq.devices").string(0, 0) == "0", "both environments")
            let audit = try await db.query("SELECT actor, action, target, rows FROM pushq.audit_log")
            #expect(audit.count == 1)
            #expect(audit.string(0, 0) == "test-devices" && audit.string(0, 1) == "device.unregister" && audit.string(0, 3) == "2")
            #expect(audit.string(0, 2) == "device ABABABAB…", "shortened: \(audit.string(0, 2) ?? "")")
            #expect(try await serve.call("DELETE", "/api/v1/devices", key: "devices", json: #"{"device_token":"\#(Self.upper)"}"#).status == 404)
        }
    }
}
