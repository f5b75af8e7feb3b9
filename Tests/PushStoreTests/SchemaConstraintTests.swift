import Foundation
import PushStore
import Testing

/// Bad rows are refused at INSERT with a constraint that names the problem;
/// valid edge cases are accepted (contract §1).
@Suite("Schema constraints")
struct SchemaConstraintTests {
    static let token = String(repeating: "ab", count: 32)

    /// A JSON object of exactly `size` bytes: {"aps":{"alert":"xxx…"}}.
    static func payload(bytes size: Int) -> String {
        let shell = #"{"aps":{"alert":""}}"#
        return #"{"aps":{"alert":""# + String(repeating: "x", count: size - shell.utf8.count) + #""}}"#
    }

    struct BadRow: Sendable, CustomTestStringConvertible {
        var label: String
        var columns: [String: String?]
        var constraint: String
        var testDescription: String { label }
    }

    static let badRows: [BadRow] = [
        BadRow(label: "token not hex", columns: ["device_token": String(repeating: "zz", count: 32)], constraint: "notifications_device_token_hex"),
        BadRow(label: "token with spaces", columns: ["device_token": "<" + String(repeating: "ab", count: 32) + ">"], constraint: "notifications_device_token_hex"),
        BadRow(label: "token too short", columns: ["device_token": String(repeating: "ab", count: 31)], constraint: "notifications_device_token_length"),
        BadRow(label: "token odd length", columns: ["device_token": String(repeating: "a", count: 65)], constraint: "notifications_device_token_length"),
        BadRow(label: "token too long", columns: ["device_token": String(repeating: "ab", count: 101)], constraint: "notifications_device_token_length"),
        BadRow(label: "payload an array", columns: ["payload": "[1,2]"], constraint: "notifications_payload_object"),
        BadRow(label: "payload a string", columns: ["payload": #""hello""#], constraint: "notifications_payload_object"),
        BadRow(label: "payload 4097 bytes", columns: ["payload": payload(bytes: 4097)], constraint: "notifications_payload_size"),
        BadRow(label: "voip payload 5121 bytes", columns: ["payload": payload(bytes: 5121), "push_type": "voip"], constraint: "notifications_payload_size"),
        BadRow(label: "unknown push type", columns: ["push_type": "sms"], constraint: "notifications_push_type_known"),
        BadRow(label: "background with priority 10", columns: ["push_type": "background", "priority": "10"], constraint: "notifications_background_priority"),
        BadRow(label: "priority 3", columns: ["priority": "3"], constraint: "notifications_priority_valid"),
        BadRow(label: "collapse id 65 bytes", columns: ["collapse_id": String(repeating: "c", count: 65)], constraint: "notifications_collapse_id_length"),
        BadRow(label: "collapse id 33 two-byte characters", columns: ["collapse_id": String(repeating: "é", count: 33)], constraint: "notifications_collapse_id_length"),
        BadRow(label: "unknown environment", columns: ["environment": "staging"], constraint: "notifications_environment_known"),
        BadRow(label: "max_attempts 0", columns: ["max_attempts": "0"], constraint: "notifications_max_attempts_positive"),
        BadRow(label: "unknown status", columns: ["status": "done"], constraint: "notifications_status_known"),
    ]

    /// Inserts one notification built from defaults plus `columns`; returns its id.
    @discardableResult
    static func insert(_ c: PGConnection, _ columns: [String: String?]) async throws -> Int64 {
        var all: [String: String?] = ["device_token": token, "payload": #"{"aps":{"alert":"hi"}}"#]
        for (k, v) in columns { all[k] = v }
        let names = all.keys.sorted()
        let placeholders = names.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        let sql = "INSERT INTO pushq.notifications (\(names.joined(separator: ", "))) VALUES (\(placeholders)) RETURNING id"
        let result = try await c.query(sql, names.map { all[$0]! })
        return try result.decode(Int64.self, 0, "id")
    }

    @Test("bad row is refused with a named constraint", arguments: badRows)
    func badRowRefused(_ row: BadRow) async throws {
        try await TestDatabase.withConnection { c in
            let error = await #expect(throws: PGError.self) { try await Self.insert(c, row.columns) }
            #expect(error?.sqlState == "23514")
            #expect(error?.constraint == row.constraint)
            #expect(error?.description.contains(row.constraint) == true)
            let count = try await c.query("SELECT count(*) FROM pushq.notifications").decode(Int.self, 0, 0)
            #expect(count == 0)
        }
    }

    @Test("payload that is not JSON is refused with a JSON syntax error")
    func payloadNotJSON() async throws {
        try await TestDatabase.withConnection { c in
            let error = await #expect(throws: PGError.self) { try await Self.insert(c, ["payload": "{aps:"]) }
            #expect(error?.sqlState == "22P02")
        }
    }

    @Test("valid edge cases are accepted and stored as given")
    func validEdgeCases() async throws {
        try await TestDatabase.withConnection { c in
            let alert = Self.payload(bytes: 4096)
            let voip = Self.payload(bytes: 5120)
            let upper = String(repeating: "AB", count: 100)
            let a = try await Self.insert(c, ["payload": alert])
            let v = try await Self.insert(c, ["payload": voip, "push_type": "voip"])
            let u = try await Self.insert(c, ["device_token": upper])
            let b = try await Self.insert(c, ["push_type": "background", "priority": "5"])
            // Every optional column NULL.
            let n = try await Self.insert(c, ["topic": nil, "priority": nil, "expires_at": nil, "collapse_id": nil,
                                              "environment": nil, "credential": nil, "metadata": nil])
            let r = try await c.query("SELECT id, payload, device_token, status, attempts, priority, max_attempts, apns_id, topic FROM pushq.notifications ORDER BY id")
            #expect(r.count == 5)
            #expect(try r.decode(Int64.self, 0, "id") == a)
            #expect(r.bytes(0, 1) == Array(alert.utf8))
            #expect(r.bytes(1, 1) == Array(voip.utf8))
            #expect(try r.decode(Int64.self, 1, "id") == v)
            #expect(try r.decode(String.self, 2, "device_token") == upper)
            #expect(try r.decode(Int64.self, 2, "id") == u)
            #expect(try r.decode(Int64.self, 3, "id") == b)
            #expect(try r.decode(Int64.self, 4, "id") == n)
            for row in 0..<r.count {
                #expect(try r.decode(String.self, row, "status") == "queued")
                #expect(try r.decode(Int.self, row, "attempts") == 0)
                #expect(try r.decode(Int.self, row, "max_attempts") == 10)
                _ = try r.decode(UUID.self, row, "apns_id")
            }
            #expect(try r.decodeOptional(Int.self, 4, "priority") == nil)
            #expect(try r.decodeOptional(String.self, 4, "topic") == nil)
        }
    }

    @Test("payload bytes are kept exactly: whitespace, key order, duplicate keys, escapes")
    func payloadByteForByte() async throws {
        try await TestDatabase.withConnection { c in
            let payload = "{ \"b\" :1,\n\t\"a\":[ 1 , 2 ],\"a\":\"\\u00e9 é 😀\"  }"
            let id = try await Self.insert(c, ["payload": payload])
            let r = try await c.query("SELECT payload FROM pushq.notifications WHERE id = $1", [id])
            #expect(r.bytes(0, 0) == Array(payload.utf8))
        }
    }

    @Test("every waiting row is covered by the claim index")
    func claimIndexExists() async throws {
        try await TestDatabase.withConnection { c in
            let r = try await c.query("SELECT indexdef FROM pg_indexes WHERE schemaname = 'pushq' AND indexname = 'notifications_due'")
            let def = try #require(try r.decode(String.self, 0, 0))
            #expect(def.contains("WHERE (status = ANY (ARRAY['queued'::text, 'retrying'::text]))"))
        }
    }

    @Test("an INSERT statement sends one NOTIFY on pushq_enqueued")
    func insertNotifies() async throws {
        try await TestDatabase.with { url in
            let listener = try await PGConnection.connect(url)
            try await listener.listen("pushq_enqueued")
            let producer = try await PGConnection.connect(url)
            try await producer.query("""
                INSERT INTO pushq.notifications (device_token, payload)
                SELECT $1, '{}' FROM generate_series(1, 50)
                """, [Self.token])
            var received: [PGNotification] = []
            let deadline = ContinuousClock.now + .seconds(10)
            while received.isEmpty && ContinuousClock.now < deadline {
                received += try await listener.waitForNotifications(timeout: .seconds(5))
            }
            #expect(received.count == 1)
            #expect(received.first?.channel == "pushq_enqueued")
            #expect(received.first?.senderPID == (await producer.backendPID))
            await listener.close()
            await producer.close()
        }
    }
}
