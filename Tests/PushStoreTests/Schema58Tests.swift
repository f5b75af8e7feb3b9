import Foundation
import PushCore
import PushStore
import PushTestSupport
import Testing
import PGClient

/// Schema 58 (issue 45, item 9): notify_channel cannot be the workers' own; a channel id must be a
/// header value; a dashboard pause and resume of a lane with no row keeps `default`'s rank and cap.
@Suite("Schema 58")
struct Schema58Tests {
    static let audit = AuditEntry(actor: "test", keyID: nil, action: "lane.pause", target: "promo", rows: 0, via: "dashboard")

    /// The error of `sql`, which must fail.
    static func refusal(_ c: PGConnection, _ sql: String, _ parameters: [(any PGParameter)?] = []) async -> PGError? {
        await #expect(throws: PGError.self, "\(sql)") { try await c.query(sql, parameters) }
    }

    @Test("a producer's notify_channel 'pushq_enqueued' (any pushq_ name) is refused with a clear error; other names still work")
    func reservedNotifyChannel() async throws {
        try await TestDatabase.withConnection { c in
            let insert = "INSERT INTO pushq.notifications (device_token, payload, notify_channel) VALUES (repeat('a', 64), '{\"aps\":{}}', $1)"
            for name in ["pushq_enqueued", "pushq_anything"] {
                let error = await Self.refusal(c, insert, [name])
                #expect(error?.sqlState == "23514")
                #expect(error?.constraint == "notifications_notify_channel_reserved")
                #expect(error?.detail?.contains("reserved") == true, "\(String(describing: error))")
            }
            try await c.query(insert, ["orders_done"])
            // Changing a row's notify_channel to a reserved one is refused too.
            let error = await Self.refusal(c, "UPDATE pushq.notifications SET notify_channel = 'pushq_enqueued'")
            #expect(error?.constraint == "notifications_notify_channel_reserved")
        }
    }

    @Test("an apns_channel_id with CR/LF (or anything but Apple's base64) is refused by the table")
    func channelIDShape() async throws {
        try await TestDatabase.withConnection { c in
            let error = await Self.refusal(c, "INSERT INTO pushq.channels (name, status, apns_channel_id) VALUES ('x', 'deleting', $1)",
                                           ["a\r\nx-evil: 1"])
            #expect(error?.constraint == "channels_apns_channel_id_shape")
            try await c.query("INSERT INTO pushq.channels (name, status, apns_channel_id) VALUES ('y', 'active', 'dHN0LXNyY2gtY2hubA==')")
        }
    }

    @Test("dashboard pause then resume of a lane with no row: paused with default's rank and cap, then follows default again")
    func pauseKeepsDefaultsCap() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("UPDATE pushq.lanes SET max_per_second = 20, rank = 7 WHERE name = 'default'")
            try await c.setLanePaused("promo", paused: true, audit: Self.audit)
            let paused = try await c.query("SELECT paused, rank, max_per_second FROM pushq.lanes WHERE name = 'promo'")
            #expect(paused.count == 1)
            #expect(paused.string(0, 0) == "t" && paused.string(0, 1) == "7" && paused.string(0, 2) == "20")
            try await c.setLanePaused("promo", paused: false, audit: Self.audit)
            #expect(try await c.query("SELECT 1 FROM pushq.lanes WHERE name = 'promo'").count == 0,
                    "the resume leaves no row: the lane follows default's rank and cap again")
        }
    }

    @Test("dashboard pause then resume of a lane with its own row: the row keeps its rank and cap, only paused changes")
    func pauseKeepsOwnRow() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, rank, max_per_second) VALUES ('promo', 50, 5)")
            try await c.setLanePaused("promo", paused: true, audit: Self.audit)
            try await c.setLanePaused("promo", paused: false, audit: Self.audit)
            let row = try await c.query("SELECT paused, rank, max_per_second FROM pushq.lanes WHERE name = 'promo'")
            #expect(row.count == 1 && row.string(0, 0) == "f" && row.string(0, 1) == "50" && row.string(0, 2) == "5")
        }
    }
}
