import Foundation
import PushStore
import Testing
import PGClient

/// The constraints of migration 4 (and the lane and notify-channel rules of 12, as schema 25
/// wrote them): values that would harm the queue or the request are refused at INSERT with a
/// constraint that names the problem; final rows are let be.
@Suite("Row constraints")
struct RowConstraintTests {
    typealias BadRow = SchemaConstraintTests.BadRow

    /// `{"k": "xxx…"}` printed by jsonb in exactly `size` bytes.
    static func metadata(bytes size: Int) -> String {
        #"{"k": ""# + String(repeating: "x", count: size - 9) + #""}"#
    }

    static let badRows: [BadRow] = [
        BadRow(label: "expires_at infinity", columns: ["expires_at": "infinity"], constraint: "notifications_expires_at_finite"),
        BadRow(label: "expires_at -infinity", columns: ["expires_at": "-infinity"], constraint: "notifications_expires_at_finite"),
        BadRow(label: "scheduled_at infinity", columns: ["scheduled_at": "infinity"], constraint: "notifications_scheduled_at_finite"),
        BadRow(label: "scheduled_at -infinity", columns: ["scheduled_at": "-infinity"], constraint: "notifications_scheduled_at_finite"),
        BadRow(label: "topic with a space", columns: ["topic": "com.example app"], constraint: "notifications_topic_shape"),
        BadRow(label: "topic with CR LF and a header", columns: ["topic": "com.example\r\napns-priority: 10"], constraint: "notifications_topic_shape"),
        BadRow(label: "topic with a trailing LF", columns: ["topic": "com.example.app\n"], constraint: "notifications_topic_shape"),
        BadRow(label: "topic of 256 bytes", columns: ["topic": String(repeating: "a", count: 256)], constraint: "notifications_topic_shape"),
        BadRow(label: "topic not ASCII", columns: ["topic": "com.exämple.app"], constraint: "notifications_topic_shape"),
        BadRow(label: "topic empty", columns: ["topic": ""], constraint: "notifications_topic_shape"),
        BadRow(label: "collapse id with LF", columns: ["collapse_id": "a\nb"], constraint: "notifications_collapse_id_printable"),
        BadRow(label: "collapse id with TAB", columns: ["collapse_id": "a\tb"], constraint: "notifications_collapse_id_printable"),
        BadRow(label: "collapse id with DEL", columns: ["collapse_id": "a\u{7F}"], constraint: "notifications_collapse_id_printable"),
        BadRow(label: "credential with CR", columns: ["credential": "team\r"], constraint: "notifications_credential_printable"),
        BadRow(label: "credential with ESC", columns: ["credential": "\u{1B}[31mred"], constraint: "notifications_credential_printable"),
        BadRow(label: "metadata of 65 537 bytes", columns: ["metadata": metadata(bytes: 65_537)], constraint: "notifications_metadata_size"),
        // The rules schema 25 rewrote without bounded repetitions (CheapCheckTests) refuse as before.
        BadRow(label: "lane of 65 characters", columns: ["lane": String(repeating: "a", count: 65)], constraint: "notifications_lane_name"),
        BadRow(label: "lane empty", columns: ["lane": ""], constraint: "notifications_lane_name"),
        BadRow(label: "lane with a space", columns: ["lane": "no spaces"], constraint: "notifications_lane_name"),
        BadRow(label: "lane with a trailing LF", columns: ["lane": "campaign\n"], constraint: "notifications_lane_name"),
        BadRow(label: "lane not ASCII", columns: ["lane": "campagne-é"], constraint: "notifications_lane_name"),
        BadRow(label: "topic with a leading LF", columns: ["topic": "\ncom.example.app"], constraint: "notifications_topic_shape"),
        BadRow(label: "topic with a slash", columns: ["topic": "com.example/app"], constraint: "notifications_topic_shape"),
        BadRow(label: "notify channel with a trailing LF", columns: ["notify_channel": "orders\n"], constraint: "notifications_notify_channel_name"),
    ]

    @Test("bad row is refused with a named constraint", arguments: badRows)
    func badRowRefused(_ row: BadRow) async throws {
        try await TestDatabase.withConnection { c in
            let error = await #expect(throws: PGError.self) { try await SchemaConstraintTests.insert(c, row.columns) }
            #expect(error?.sqlState == "23514")
            #expect(error?.constraint == row.constraint)
            #expect(error?.description.contains(row.constraint) == true)
            let count = try await c.query("SELECT count(*) FROM pushq.notifications").decode(Int.self, 0, 0)
            #expect(count == 0)
        }
    }

    @Test("valid edge cases are accepted and stored as given")
    func validEdgeCases() async throws {
        try await TestDatabase.withConnection { c in
            let longest = String(repeating: "a", count: 250) + ".b-_9"
            let collapse = "spaces, ünïcode and 😀 are fine"
            let id = try await SchemaConstraintTests.insert(c, [
                "topic": longest, "collapse_id": collapse, "credential": "team key #2 (prod)", "metadata": Self.metadata(bytes: 65_536),
                "expires_at": "9999-12-31 23:59:59+00", "scheduled_at": "1970-01-01 00:00:00+00"])
            try await SchemaConstraintTests.insert(c, ["topic": "com.example.app.push-type.liveactivity", "push_type": "liveactivity",
                                                      "payload": #"{"aps":{"timestamp":1700000000,"event":"end"}}"#])
            try await SchemaConstraintTests.insert(c, ["topic": "A.Z-a_z.0-9"])
            let r = try await c.query("""
                SELECT topic, collapse_id, credential, octet_length(metadata::text),
                       expires_at = '9999-12-31 23:59:59+00', scheduled_at = '1970-01-01 00:00:00+00'
                  FROM pushq.notifications WHERE id = $1
                """, [id])
            #expect(r.string(0, 0) == longest && r.string(0, 1) == collapse && r.string(0, 2) == "team key #2 (prod)")
            #expect(try r.decode(Int.self, 0, 3) == 65_536)
            #expect(r.string(0, 4) == "t" && r.string(0, 5) == "t")
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications").decode(Int.self, 0, 0) == 3)
        }
    }

    @Test("a final row is let be; sending it back to the queue checks it again")
    func finalRowsLetBe() async throws {
        try await TestDatabase.withConnection { c in
            let id = try await SchemaConstraintTests.insert(c, ["status": "cancelled", "expires_at": "infinity", "topic": "bad topic"])
            let error = await #expect(throws: PGError.self) {
                try await c.query("UPDATE pushq.notifications SET status = 'queued' WHERE id = $1", [id])
            }
            #expect(error?.sqlState == "23514")
            #expect(["notifications_expires_at_finite", "notifications_topic_shape"].contains(error?.constraint ?? ""))
            #expect(try await c.query("SELECT status FROM pushq.notifications WHERE id = $1", [id]).string(0, 0) == "cancelled")
        }
    }

    @Test("the rules are in force: validated constraints (every row of a migrated database meets them) or rules of the trigger")
    func validated() async throws {
        try await TestDatabase.withConnection { c in
            let enforced = try await TableRules.enforced(c)
            #expect(Set(Self.names).subtracting(enforced).isEmpty, "not in force: \(Set(Self.names).subtracting(enforced).sorted())")
        }
    }

    static let names = ["notifications_expires_at_finite", "notifications_scheduled_at_finite", "notifications_topic_shape",
                        "notifications_collapse_id_printable", "notifications_credential_printable", "notifications_metadata_size"]
}
