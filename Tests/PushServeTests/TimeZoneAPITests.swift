import Foundation
import PushServe
import PushStore
import PushTestSupport
import Testing

/// The recipient's time zone over the API (issue 48, items 1 and 2): `PUT /api/v1/devices` takes
/// `time_zone`, `POST /api/v1/notifications` takes `time_zone` and `user_ref`, and the per-user
/// fan-out `POST /api/v1/users/{user_ref}/notifications` takes `local_time`.
@Suite("API: time zones")
struct TimeZoneAPITests {
    static func token(_ i: Int) -> String { String(repeating: "0", count: 64 - String(i, radix: 16).count) + String(i, radix: 16) }

    @Test("PUT /devices takes time_zone (an IANA name, or null); an unknown one is 400 naming time_zone")
    func deviceTimeZone() async throws {
        try await ServeHarness.with { serve, db in
            let put = try await serve.call("PUT", "/api/v1/devices", key: "devices",
                                           json: #"{"device_token":"\#(Self.token(1))","user_ref":"ann","time_zone":"Asia/Kolkata"}"#)
            #expect(put.status == 201, "\(put.body)")
            #expect(try put.json["time_zone"] as? String == "Asia/Kolkata")
            let bad = try await serve.call("PUT", "/api/v1/devices", key: "devices",
                                           json: #"{"device_token":"\#(Self.token(1))","time_zone":"Asia/Calcutta_"}"#)
            #expect(try bad.status == 400 && bad.error("field") == "time_zone" && bad.error("constraint") == "devices_time_zone_known", "\(bad.body)")
            // Left out, a registration keeps the zone; null clears it.
            #expect(try await serve.call("PUT", "/api/v1/devices", key: "devices", json: #"{"device_token":"\#(Self.token(1))"}"#).status == 200)
            #expect(try await db.query("SELECT time_zone FROM pushq.devices").string(0, 0) == "Asia/Kolkata")
            #expect(try await serve.call("PUT", "/api/v1/devices", key: "devices",
                                         json: #"{"device_token":"\#(Self.token(1))","time_zone":null}"#).status == 200)
            #expect(try await db.query("SELECT time_zone FROM pushq.devices").string(0, 0) == nil)
        }
    }

    @Test("POST /notifications takes time_zone and user_ref; an unknown zone is 400 naming time_zone")
    func notificationTimeZone() async throws {
        try await ServeHarness.with { serve, db in
            let answer = try await serve.call("POST", "/api/v1/notifications", key: "enqueue",
                                              json: #"{"device_token":"\#(Self.token(1))","payload":{},"time_zone":"Pacific/Kiritimati","user_ref":"ann"}"#)
            #expect(answer.status == 201, "\(answer.body)")
            let row = try await db.query("SELECT time_zone, user_ref FROM pushq.notifications")
            #expect(row.string(0, 0) == "Pacific/Kiritimati" && row.string(0, 1) == "ann")
            let bad = try await serve.call("POST", "/api/v1/notifications", key: "enqueue",
                                           json: #"[{"device_token":"\#(Self.token(2))","payload":{}},{"device_token":"\#(Self.token(3))","payload":{},"time_zone":"UTC+2"}]"#)
            #expect(try bad.status == 400 && bad.error("field") == "time_zone" && bad.error("index") == "1", "\(bad.body)")
        }
    }

    // 2030-12-01 09:00 local: 03:30Z in Kolkata (+05:30), 19:00Z the day before in Kiritimati (+14),
    // 09:00Z for a device without a zone (UTC, whatever the server's TimeZone).
    @Test("the fan-out's local_time: each device's row at that local time in its zone (else UTC), its zone and user_ref copied")
    func fanOutLocalTime() async throws {
        try await ServeHarness.with { serve, db in
            try await db.query("""
                INSERT INTO pushq.devices (device_token, user_ref, time_zone) VALUES ($1, 'ann', 'Asia/Kolkata'), ($2, 'ann', 'Pacific/Kiritimati'),
                       ($3, 'ann', NULL)
                """, [Self.token(1), Self.token(2), Self.token(3)])
            let answer = try await serve.call("POST", "/api/v1/users/ann/notifications", key: "enqueue",
                                              json: #"{"payload":{"aps":{}},"local_time":"2030-12-01T09:00:00"}"#)
            #expect(answer.status == 201, "\(answer.body)")
            let rows = try await db.query("""
                SELECT device_token, COALESCE(time_zone, '-'), user_ref, to_char(scheduled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI')
                  FROM pushq.notifications ORDER BY device_token
                """)
            #expect(rows.count == 3)
            #expect(rows.string(0, 1) == "Asia/Kolkata" && rows.string(0, 3) == "2030-12-01 03:30")
            #expect(rows.string(1, 1) == "Pacific/Kiritimati" && rows.string(1, 3) == "2030-11-30 19:00")
            #expect(rows.string(2, 1) == "-" && rows.string(2, 3) == "2030-12-01 09:00")
            for i in 0..<3 { #expect(rows.string(i, 2) == "ann") }

            let both = try await serve.call("POST", "/api/v1/users/ann/notifications", key: "enqueue",
                                            json: #"{"payload":{},"local_time":"2030-12-01T09:00","scheduled_at":"2030-12-01T09:00:00Z"}"#)
            #expect(try both.status == 400 && both.error("field") == "local_time" && both.error("constraint") == "enqueue_for_user_local_time",
                    "\(both.body)")
            let offset = try await serve.call("POST", "/api/v1/users/ann/notifications", key: "enqueue",
                                              json: #"{"payload":{},"local_time":"2030-12-01T09:00:00+01:00"}"#)
            #expect(try offset.status == 400 && offset.error("field") == "local_time", "\(offset.body)")
            #expect(try await db.query("SELECT count(*) FROM pushq.notifications").string(0, 0) == "3", "nothing more enqueued")
        }
    }
}
