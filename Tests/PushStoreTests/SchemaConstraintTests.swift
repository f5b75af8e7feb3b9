import Foundation
@testable import PushStore
import Testing
import PGClient

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

    /// The columns the `UPDATE pushq.notifications … SET` clauses of `sql` assign: the name
    /// before each `=` at the clause's top level, up to its `FROM`, `WHERE` or `RETURNING`.
    static func assignedColumns(_ sql: String) -> [String] {
        var out: [String] = []
        var rest = Substring(sql)
        while let update = rest.range(of: #"UPDATE pushq\.notifications( \w+)?\s+SET\s"#, options: .regularExpression) {
            rest = rest[update.upperBound...]
            var depth = 0
            var item = ""
            var items: [String] = []
            var i = rest.startIndex
            scan: while i < rest.endIndex {
                let ch = rest[i]
                if depth == 0 {
                    for end in ["FROM ", "WHERE ", "RETURNING "] where rest[i...].hasPrefix(end) && (item.last?.isWhitespace ?? true) { break scan }
                }
                if ch == "(" { depth += 1 } else if ch == ")" { depth -= 1 }
                if ch == "," && depth == 0 { items.append(item); item = "" } else { item.append(ch) }
                i = rest.index(after: i)
            }
            items.append(item)
            out += items.compactMap { $0.split(separator: "=").first?.trimmingCharacters(in: .whitespacesAndNewlines) }
            rest = rest[i...]
        }
        return out
    }

    /// no index of pushq.notifications holds a column the claim or the write-back sets (in its key,
    /// expressions or predicate), so that both can be HOT; the table keeps room on its pages (fillfactor 33)
    @Test("no index of pushq.notifications holds a column the claim or write-back sets, so both can be HOT; fillfactor 33")
    func claimAndWriteBackCanBeHOT() async throws {
        try await TestDatabase.withConnection { c in
            // Every column the claim and the write-back assign (`name = ` in their SQL).
            let statements = [ClaimStatement.bound(limit: 10, workerID: "w", leaseSeconds: 60, credentials: [.apns: ["default"]],
                                                   defaultEnvironment: .production, only: nil, row: nil, excluding: [],
                                                   rotation: 0, budget: nil, belowRank: nil).sql,
                              PGConnection.completeSQL]
            let columns = try await c.query("""
                SELECT attname FROM pg_attribute WHERE attrelid = 'pushq.notifications'::regclass AND attnum > 0 AND NOT attisdropped
                """)
            let names = Set((0..<columns.count).compactMap { columns.string($0, 0) })
            let set = Set(statements.flatMap(Self.assignedColumns)).intersection(names)
            #expect(set.isSuperset(of: ["status", "attempts", "locked_by", "locked_until", "scheduled_at", "finished_at", "last_reason"]), "\(set.sorted())")
            let indexed = try await c.query("""
                SELECT DISTINCT a.attname FROM pg_index i
                  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum > 0
                 WHERE i.indrelid = 'pushq.notifications'::regclass
                   AND (a.attnum = ANY (i.indkey::int2[])
                        OR pg_get_expr(i.indexprs, i.indrelid) ~ ('\\m' || a.attname || '\\M')
                        OR pg_get_expr(i.indpred, i.indrelid) ~ ('\\m' || a.attname || '\\M'))
                """)
            let indexedNames = Set((0..<indexed.count).compactMap { indexed.string($0, 0) })
            #expect(indexedNames.isDisjoint(with: set), "indexed and set by the hot path: \(indexedNames.intersection(set).sorted())")
            #expect(indexedNames.contains("created_at") && indexedNames.contains("device_token"), "\(indexedNames.sorted())")
            let options = try await c.query("SELECT array_to_string(reloptions, ',') FROM pg_class WHERE oid = 'pushq.notifications'::regclass")
            #expect(options.string(0, 0)?.split(separator: ",").contains("fillfactor=33") == true, "\(options.string(0, 0) ?? "")")
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
