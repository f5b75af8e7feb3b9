import Foundation
import PushServe
import PushStore
import PushTestSupport
import Testing

/// `POST /api/v1/notifications` (one, a batch, a repeated dedupe_key), `GET /notifications/{id}`,
/// `POST /notifications/{id}/cancel` and the per-user fan-out, against a real database.
@Suite("API: notifications")
struct NotificationAPITests {
    static func token(_ i: Int) -> String { String(repeating: "0", count: 64 - String(i, radix: 16).count) + String(i, radix: 16) }

    /// one notification: 201 with its id, the row as given (payload byte for byte, defaults from the table);
    /// GET shows every column
    @Test("one notification: 201 with its id, the row as given (payload byte for byte, table defaults); GET shows every column")
    func one() async throws {
        try await ServeHarness.with { serve, db in
            let payload = #"{"aps" : {"alert":"Order 1042",  "sound":"default"}, "n": 1.50}"#
            let body = #"{"device_token":"\#(Self.token(1))","payload":\#(payload),"lane":"orders","expires_at":"2030-01-01T00:00:00Z","metadata":{"order":1042}}"#
            let answer = try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: body)
            #expect(answer.status == 201, "\(answer.body)")
            let id = try #require(try answer.json["id"] as? Int)
            #expect(try answer.json["created"] as? Bool == true)
            let row = try await db.query("SELECT payload::text, lane, push_type, status, max_attempts, expires_at = '2030-01-01T00:00:00Z' FROM pushq.notifications WHERE id = $1", [id])
            #expect(row.string(0, 0) == payload, "stored byte for byte")
            #expect(row.string(0, 1) == "orders" && row.string(0, 2) == "alert" && row.string(0, 3) == "queued" && row.string(0, 4) == "10")
            #expect(row.string(0, 5) == "t")

            let read = try await serve.call("GET", "/api/v1/notifications/\(id)", key: "read")
            #expect(read.status == 200)
            let json = try read.json
            #expect(json["id"] as? Int == id && json["status"] as? String == "queued" && json["device_token"] as? String == Self.token(1))
            #expect((json["payload"] as? [String: Any])?["n"] as? Double == 1.5)
            for column in ["apns_id", "created_at", "scheduled_at", "attempts", "last_reason", "provider", "dedupe_key", "metadata"] {
                #expect(json.keys.contains(column), "every column: \(column)")
            }
            #expect(try await serve.call("GET", "/api/v1/notifications/\(id + 1000)", key: "read").status == 404)
            #expect(try await serve.call("GET", "/api/v1/notifications/x", key: "read").status == 400)
        }
    }

    /// a repeated dedupe_key answers 200 with the existing row's id and makes no row; in a batch, a key
    /// repeated within it maps to the first
    @Test("a repeated dedupe_key answers 200 with the existing row's id and makes no row; in a batch, a repeat maps to the first")
    func dedupe() async throws {
        try await ServeHarness.with { serve, db in
            let body = #"{"device_token":"\#(Self.token(2))","payload":{"aps":{"alert":"x"}},"dedupe_key":"order-1042"}"#
            let first = try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: body)
            #expect(first.status == 201)
            let second = try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: body)
            #expect(second.status == 200, "\(second.body)")
            #expect(try second.json["id"] as? Int == first.json["id"] as? Int)
            #expect(try second.json["created"] as? Bool == false)
            let batch = "[" + [body, #"{"device_token":"\#(Self.token(3))","payload":{},"dedupe_key":"k2"}"#,
                               #"{"device_token":"\#(Self.token(4))","payload":{},"dedupe_key":"k2"}"#].joined(separator: ",") + "]"
            let answer = try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: batch)
            #expect(answer.status == 201)
            let results = try #require(try answer.json["notifications"] as? [[String: Any]])
            #expect(results.map { $0["created"] as? Bool } == [false, true, false])
            #expect(results[0]["id"] as? Int == (try first.json["id"] as? Int))
            #expect(results[1]["id"] as? Int == results[2]["id"] as? Int)
            #expect(try await db.query("SELECT count(*) FROM pushq.notifications").string(0, 0) == "2")
        }
    }

    /// a batch of 1000: 201, one id per row in order, all inserted; a bad row at index 637 refuses the whole
    /// batch with its index, field, rule and constraint
    @Test("a batch of 1000: 201, one id per row in order; one bad row refuses the whole batch with its index, field and rule")
    func batch() async throws {
        try await ServeHarness.with { serve, db in
            let rows = (0..<1000).map { #"{"device_token":"\#(Self.token($0 + 10))","payload":{"aps":{"alert":"n\#($0)"}},"lane":"bulk"}"# }
            let answer = try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: "[" + rows.joined(separator: ",") + "]")
            #expect(answer.status == 201)
            let ids = try #require(try answer.json["notifications"] as? [[String: Any]]).compactMap { $0["id"] as? Int }
            #expect(ids.count == 1000 && Set(ids).count == 1000)
            let stored = try await db.query("SELECT id, device_token FROM pushq.notifications ORDER BY id")
            #expect(stored.count == 1000)
            let byID = Dictionary(uniqueKeysWithValues: (0..<stored.count).map { (Int(stored.string($0, 0)!)!, stored.string($0, 1)!) })
            #expect(ids.enumerated().allSatisfy { byID[$0.element] == Self.token($0.offset + 10) }, "each id is its row's")

            // Rows that give different columns: one statement per set of columns, ids still in order.
            let mixed = (0..<6).map { i in i % 2 == 0 ? #"{"device_token":"\#(Self.token(5000 + i))","payload":{},"lane":"mixed"}"#
                                                      : #"{"device_token":"\#(Self.token(5000 + i))","payload":{},"priority":5,"lane":"mixed"}"# }
            let mixedAnswer = try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: "[" + mixed.joined(separator: ",") + "]")
            let mixedIDs = try #require(try mixedAnswer.json["notifications"] as? [[String: Any]]).compactMap { $0["id"] as? Int }
            for (i, id) in mixedIDs.enumerated() {
                let row = try await db.query("SELECT device_token, priority FROM pushq.notifications WHERE id = $1", [id])
                #expect(row.string(0, 0) == Self.token(5000 + i) && row.string(0, 1) == (i % 2 == 0 ? nil : "5"), "row \(i)")
            }

            var bad = rows.map { $0.replacingOccurrences(of: "bulk", with: "bulk2") }
            bad[637] = #"{"device_token":"\#(Self.token(5))","payload":{"aps":{}},"priority":7}"#
            let refused = try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: "[" + bad.joined(separator: ",") + "]")
            #expect(refused.status == 400)
            #expect(try refused.error("index") == "637")
            #expect(try refused.error("field") == "priority")
            #expect(try refused.error("constraint") == "notifications_priority_valid")
            #expect(try refused.error("rule") == "10, 5 or 1")
            #expect(try await db.query("SELECT count(*) FROM pushq.notifications WHERE lane = 'bulk2'").string(0, 0) == "0", "all or none")
            bad[637] = rows[637]
            bad[900] = #"{"device_token":"\#(Self.token(6))","payload":{},"lane":"bulk2","priority":7}"#
            let second = try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: "[" + bad.joined(separator: ",") + "]")
            #expect(try second.status == 400 && second.error("index") == "900", "a bad row in the second set of columns: \(second.body)")
            #expect(try await db.query("SELECT count(*) FROM pushq.notifications WHERE lane = 'bulk2'").string(0, 0) == "0", "all or none")
        }
    }

    /// each error class: 400 for a body that is not JSON, an unknown field, a wrong JSON type, a time without
    /// offset, a missing payload, a NULL in a NOT NULL column, a table's rule (constraint named), more than
    /// 1000 rows, an empty batch
    @Test("each error class answers 400 naming what is wrong")
    func errors() async throws {
        try await ServeHarness.with { serve, _ in
            let token = Self.token(1)
            let cases: [(String, String?, String?)] = [
                ("{not json", nil, nil),
                (#"{"device_token":"\#(token)","payload":{},"colour":"red"}"#, "colour", nil),
                (#"{"device_token":"\#(token)","payload":{},"priority":"high"}"#, "priority", nil),
                (#"{"device_token":"\#(token)","payload":{},"max_attempts":1.5}"#, "max_attempts", nil),
                (#"{"device_token":"\#(token)","payload":{},"expires_at":"2030-01-01 10:00"}"#, "expires_at", nil),
                (#"{"device_token":"\#(token)","payload":{},"apns_id":"nope"}"#, "apns_id", nil),
                (#"{"device_token":"\#(token)"}"#, "payload", nil),
                (#"{"device_token":"\#(token)","payload":{},"push_type":null}"#, "push_type", nil),
                (#"{"device_token":"\#(token)","payload":[1]}"#, "payload", "notifications_payload_object"),
                (#"{"device_token":"xyz","payload":{}}"#, "device_token", "notifications_device_token_hex"),
                (#"{"device_token":"\#(token)","payload":{},"lane":"no spaces"}"#, "lane", "notifications_lane_name"),
                (#"{"provider":"fcm","device_token":"tok","payload":{},"priority":10}"#, "provider", "notifications_fcm_no_apns_columns"),
                ("[" + Array(repeating: #"{"device_token":"\#(token)","payload":{}}"#, count: 1001).joined(separator: ",") + "]", nil, nil),
                ("[]", nil, nil),
                ("42", nil, nil),
            ]
            for (body, field, constraint) in cases {
                let answer = try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: body)
                #expect(answer.status == 400, "\(body.prefix(80)): \(answer.body)")
                #expect(try answer.error("field") == field, "\(body.prefix(80)): \(answer.body)")
                #expect(try answer.error("constraint") == constraint, "\(body.prefix(80)): \(answer.body)")
                #expect(try answer.error("message")?.isEmpty == false)
                #expect(!answer.body.contains(token), "no value the client sent is echoed")
            }
        }
    }

    @Test("cancel: 200 and the row cancelled with its finished_at, an audit row naming the key; a sent row 409, an unknown id 404")
    func cancel() async throws {
        try await ServeHarness.with { serve, db in
            let made = try await serve.call("POST", "/api/v1/notifications", key: "enqueue",
                                            json: #"{"device_token":"\#(Self.token(1))","payload":{},"scheduled_at":"2030-01-01T00:00:00Z"}"#)
            let id = try #require(try made.json["id"] as? Int)
            let answer = try await serve.call("POST", "/api/v1/notifications/\(id)/cancel", key: "enqueue")
            #expect(answer.status == 200, "\(answer.body)")
            #expect(try answer.json["status"] as? String == "cancelled")
            let row = try await db.query("SELECT status, finished_at IS NOT NULL FROM pushq.notifications WHERE id = $1", [id])
            #expect(row.string(0, 0) == "cancelled" && row.string(0, 1) == "t")
            let audit = try await db.query("SELECT actor, action, target, rows, via FROM pushq.audit_log")
            #expect(audit.count == 1)
            #expect((0..<5).map { audit.string(0, $0) ?? "" } == ["test-enqueue", "notification.cancel", "notification \(id)", "1", "api"])

            let again = try await serve.call("POST", "/api/v1/notifications/\(id)/cancel", key: "admin")
            #expect(try again.status == 409 && (again.error("code")) == "not_cancellable", "\(again.body)")
            #expect(try await serve.call("POST", "/api/v1/notifications/999999/cancel", key: "admin").status == 404)
            #expect(try await db.query("SELECT count(*) FROM pushq.audit_log").string(0, 0) == "1", "only what changed rows is logged")
        }
    }

    /// per-user fan-out: one row per valid device, 201 with their ids; the same dedupe_key again makes none
    /// (200, no ids); a dedupe_key over 160 characters is 400 naming the function's rule
    @Test("per-user fan-out: one row per valid device (201); the same dedupe_key again makes none; an over-long key is 400")
    func fanOut() async throws {
        try await ServeHarness.with { serve, db in
            try await db.query("""
                INSERT INTO pushq.devices (device_token, user_ref, topic) VALUES ($1, 'alice', 'com.example.app'), ($2, 'alice', 'com.example.app')
                """, [Self.token(1), Self.token(2)])
            let body = #"{"payload":{"aps":{"alert":"hi"}},"dedupe_key":"welcome","lane":"greetings"}"#
            let answer = try await serve.call("POST", "/api/v1/users/alice/notifications", key: "enqueue", json: body)
            #expect(answer.status == 201, "\(answer.body)")
            let ids = try #require(try answer.json["ids"] as? [Int])
            #expect(ids.count == 2)
            let rows = try await db.query("SELECT topic, lane FROM pushq.notifications WHERE id = ANY($1::bigint[]) ORDER BY id", [ids])
            #expect(rows.count == 2 && rows.string(0, 0) == "com.example.app" && rows.string(0, 1) == "greetings")
            let again = try await serve.call("POST", "/api/v1/users/alice/notifications", key: "enqueue", json: body)
            #expect(try again.status == 200 && (again.json["ids"] as? [Int]) == [])
            let long = try await serve.call("POST", "/api/v1/users/alice/notifications", key: "enqueue",
                                            json: #"{"payload":{},"dedupe_key":"\#(String(repeating: "k", count: 161))"}"#)
            #expect(try long.status == 400 && (long.error("constraint")) == "enqueue_for_user_dedupe_key_length", "\(long.body)")
        }
    }

    @Test("fan-out to a user with no device at all is 404 no_devices naming the user, not a silent 200")
    func fanOutToNobody() async throws {
        try await ServeHarness.with { serve, db in
            let answer = try await serve.call("POST", "/api/v1/users/nobody%40example.com/notifications", key: "enqueue", json: #"{"payload":{}}"#)
            #expect(try answer.status == 404 && answer.error("code") == "no_devices", "\(answer.status) \(answer.body)")
            #expect(try answer.error("message")?.contains("nobody@example.com") == true, "\(answer.body)")
            #expect(try await db.query("SELECT count(*) FROM pushq.notifications").string(0, 0) == "0")
        }
    }

    /// dedupe: when the row holding the key is deleted between the insert and the look-up, the API inserts
    /// again and answers its id, never 0
    @Test("dedupe: when the key's row is deleted between the insert and the look-up, the API inserts again, never answers 0")
    func dedupeRowPrunedMeanwhile() async throws {
        try await ServeHarness.with { serve, db in
            let body = #"{"device_token":"\#(Self.token(5))","payload":{},"dedupe_key":"order-7"}"#
            let first = try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: body)
            let old = try #require(try first.json["id"] as? Int)
            // The window, made certain: a statement trigger deletes the old row right after the
            // next insert statement found its key taken (DO NOTHING), before the enqueue's look-up,
            // as the pruner would if it ran just then. It deletes that one row only, so the retry's
            // insert is left alone.
            try await db.execute("""
                CREATE FUNCTION public.prune_order_7() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN DELETE FROM pushq.notifications WHERE id = \(old); RETURN NULL; END $$;
                CREATE TRIGGER prune_order_7 AFTER INSERT ON pushq.notifications FOR EACH STATEMENT EXECUTE FUNCTION public.prune_order_7();
                """)
            let second = try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: body)
            let holder = try await db.query("SELECT id FROM pushq.notifications WHERE dedupe_key = 'order-7'")
            #expect(holder.count == 1, "one row holds the key again")
            let id = try second.json["id"] as? Int
            #expect(id != 0 && id != old && holder.string(0, 0) == id.map(String.init), "\(second.status) \(second.body)")
            #expect(try second.status == 201 && second.json["created"] as? Bool == true)
        }
    }
}
