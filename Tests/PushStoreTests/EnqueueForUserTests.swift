import Foundation
import PushStore
import Testing
import PGClient

@Suite("enqueue_for_user")
struct EnqueueForUserTests {
    static func token(_ n: Int) -> String { String(repeating: String(format: "%02x", n), count: 32) }

    @Test("one row per valid device of the user, none for invalidated ones")
    func onePerValidDevice() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.devices (device_token, environment, user_ref, topic, registered_at, invalidated_at, invalid_reason) VALUES
                  ($1, 'production',  'alice', 'com.example.app', now() - interval '1 day', NULL, NULL),
                  ($2, 'development', 'alice', NULL,              now() - interval '1 day', NULL, NULL),
                  ($3, 'production',  'alice', 'com.example.app', now() - interval '2 days', now() - interval '1 day', 'Unregistered'),
                  ($4, 'production',  'alice', 'com.example.app', now(), now() - interval '1 day', 'Unregistered'),
                  ($5, 'production',  'alice', NULL,              NULL, now(), 'BadDeviceToken'),
                  ($6, 'production',  'bob',   NULL,              now(), NULL, NULL)
                """, [Self.token(1).uppercased(), Self.token(2), Self.token(3), Self.token(4), Self.token(5), Self.token(6)])
            let ids = try await c.query("""
                SELECT * FROM pushq.enqueue_for_user('alice', '{"aps":{"alert":"hi"}}', push_type => 'voip', priority => 5,
                                                     metadata => '{"campaign":"x"}')
                """)
            #expect(ids.count == 3)
            let rows = try await c.query("""
                SELECT device_token, environment, topic, push_type, priority, metadata::text AS metadata, payload::text AS payload, status
                  FROM pushq.notifications ORDER BY device_token
                """)
            #expect(rows.count == 3)
            // Token 1 was registered upper-case; devices stores it lower-case.
            #expect(try rows.decode(String.self, 0, "device_token") == Self.token(1))
            #expect(try rows.decode(String.self, 0, "environment") == "production")
            #expect(try rows.decode(String.self, 0, "topic") == "com.example.app.voip")
            #expect(try rows.decode(String.self, 1, "device_token") == Self.token(2))
            #expect(try rows.decode(String.self, 1, "environment") == "development")
            #expect(try rows.decodeOptional(String.self, 1, "topic") == nil)
            // Re-registered after its invalidation: valid again.
            #expect(try rows.decode(String.self, 2, "device_token") == Self.token(4))
            for row in 0..<3 {
                #expect(try rows.decode(String.self, row, "push_type") == "voip")
                #expect(try rows.decode(Int.self, row, "priority") == 5)
                #expect(try rows.decode(String.self, row, "metadata") == #"{"campaign": "x"}"#)
                #expect(try rows.decode(String.self, row, "payload") == #"{"aps":{"alert":"hi"}}"#)
                #expect(try rows.decode(String.self, row, "status") == "queued")
            }
            let none = try await c.query("SELECT * FROM pushq.enqueue_for_user('nobody', '{}')")
            #expect(none.count == 0)
        }
    }

    @Test("its rows pass the same constraints: a bad payload is refused")
    func constraintsApply() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.devices (device_token, user_ref) VALUES ($1, 'alice')", [Self.token(1)])
            let error = await #expect(throws: PGError.self) {
                try await c.query("SELECT * FROM pushq.enqueue_for_user('alice', '[1]')")
            }
            #expect(error?.constraint == "notifications_payload_object")
        }
    }

    @Test("devices refuse bad tokens and unknown reasons by name")
    func deviceConstraints() async throws {
        try await TestDatabase.withConnection { c in
            let bad = await #expect(throws: PGError.self) {
                try await c.query("INSERT INTO pushq.devices (device_token) VALUES ('xyz')")
            }
            #expect(bad?.constraint == "devices_device_token_hex")
            let reason = await #expect(throws: PGError.self) {
                try await c.query("INSERT INTO pushq.devices (device_token, invalid_reason) VALUES ($1, 'Vanished')", [Self.token(1)])
            }
            #expect(reason?.constraint == "devices_invalid_reason_known")
        }
    }
}
