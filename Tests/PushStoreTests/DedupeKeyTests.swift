import Foundation
import PushCore
import PushStore
import Testing
import PGClient

/// Idempotent enqueue: `dedupe_key` and its unique index `notifications_dedupe_key` (schema 12
/// and 13), and `pushq.enqueue_for_user`'s per-device keys (schema 15).
@Suite("Dedupe keys")
struct DedupeKeyTests {
    static let token = String(repeating: "ab", count: 32)

    /// The producer's idempotent INSERT of docs/producers.md: the new id, or nothing.
    static let insertOnce = """
        INSERT INTO pushq.notifications (device_token, payload, dedupe_key)
        VALUES ($1, '{"aps":{"alert":"Order 1042 shipped"}}', $2)
        ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
        RETURNING id
        """

    static func rows(_ c: PGConnection, key: String) async throws -> Int {
        try await c.query("SELECT count(*) FROM pushq.notifications WHERE dedupe_key = $1", [key]).decode(Int.self, 0, 0) ?? -1
    }

    /// a second row with the same key is refused with 23505 naming notifications_dedupe_key; ON CONFLICT DO
    /// NOTHING returns nothing the second time; rows without a key never conflict
    @Test("a second row with the same key is refused (23505); ON CONFLICT DO NOTHING returns nothing; keyless rows never conflict")
    func duplicateRefused() async throws {
        try await TestDatabase.withConnection { c in
            let first = try await c.query(Self.insertOnce, [Self.token, "order-1042-shipped"])
            #expect(first.count == 1)
            let again = try await c.query(Self.insertOnce, [Self.token, "order-1042-shipped"])
            #expect(again.count == 0, "the retried INSERT returns no id")
            let error = await #expect(throws: PGError.self) {
                try await c.query("INSERT INTO pushq.notifications (device_token, payload, dedupe_key) VALUES ($1, '{}', 'order-1042-shipped')",
                                  [Self.token])
            }
            #expect(error?.sqlState == "23505")
            #expect(error?.constraint == "notifications_dedupe_key")
            // The key is the whole identity: another token with the same key is the same notification.
            let other = try await c.query(Self.insertOnce, [String(repeating: "cd", count: 32), "order-1042-shipped"])
            #expect(other.count == 0)
            // Case and surrounding text matter: another key is another notification.
            #expect(try await c.query(Self.insertOnce, [Self.token, "Order-1042-shipped"]).count == 1)
            for _ in 0..<3 {
                try await c.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{}')", [Self.token])
            }
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications WHERE dedupe_key IS NULL").decode(Int.self, 0, 0) == 3)
            #expect(try await Self.rows(c, key: "order-1042-shipped") == 1)
        }
    }

    @Test("1 to 200 characters (not bytes): 201 is refused by notifications_dedupe_key_length, and so is the empty key")
    func length() async throws {
        try await TestDatabase.withConnection { c in
            // 200 characters of 4 bytes each: 800 bytes, accepted.
            let longest = try await c.query(Self.insertOnce, [Self.token, String(repeating: "🔑", count: 200)])
            #expect(longest.count == 1)
            for bad in [String(repeating: "k", count: 201), ""] {
                let error = await #expect(throws: PGError.self) { try await c.query(Self.insertOnce, [Self.token, bad]) }
                #expect(error?.sqlState == "23514")
                #expect(error?.constraint == "notifications_dedupe_key_length", "\(bad.count) characters")
            }
        }
    }

    /// two concurrent transactions with the same key leave exactly one row: the second waits for the first,
    /// then does nothing (or inserts, if the first rolled back)
    @Test("two concurrent transactions with the same key leave exactly one row: the second waits, then does nothing",
          arguments: ["COMMIT", "ROLLBACK"])
    func concurrentTransactions(firstEnds: String) async throws {
        try await TestDatabase.with { url in
            let first = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let second = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let observer = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let secondPID = try await second.query("SELECT pg_backend_pid()").decode(Int.self, 0, 0)
            try await first.execute("BEGIN")
            let firstID = try await first.query(Self.insertOnce, [Self.token, "chat-77-message-9"]).decode(Int64.self, 0, 0)
            #expect(firstID != nil)
            // The second cannot know yet whether the first will commit: it waits on the first's transaction.
            async let secondIDs = second.query(Self.insertOnce, [Self.token, "chat-77-message-9"])
            let waiting = try await LockWait.until(timeout: .seconds(30)) {
                try await observer.query("""
                    SELECT count(*) > 0 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock' AND wait_event = 'transactionid'
                    """, [secondPID]).decode(Bool.self, 0, 0) == true
            }
            try await first.execute(firstEnds)  // before any expectation can end the test: the second waits for it
            #expect(waiting, "the second INSERT waits for the first transaction")
            let ids = try await secondIDs
            #expect(try await Self.rows(observer, key: "chat-77-message-9") == 1)
            let row = try await observer.query("SELECT id FROM pushq.notifications WHERE dedupe_key = 'chat-77-message-9'").decode(Int64.self, 0, 0)
            if firstEnds == "COMMIT" {
                #expect(ids.count == 0, "the second returns nothing")
                #expect(row == firstID)
            } else {
                #expect(ids.count == 1, "the first never happened: the second inserts")
                #expect(row == (try ids.decode(Int64.self, 0, 0)))
            }
            for c in [first, second, observer] { await c.close() }
        }
    }

    @Test("without ON CONFLICT, the second of two concurrent transactions fails with 23505 once the first commits")
    func concurrentPlainInsert() async throws {
        try await TestDatabase.with { url in
            let first = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let second = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let observer = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let secondPID = try await second.query("SELECT pg_backend_pid()").decode(Int.self, 0, 0)
            let plain = "INSERT INTO pushq.notifications (device_token, payload, dedupe_key) VALUES ($1, '{}', 'k-plain') RETURNING id"
            try await first.execute("BEGIN")
            try await first.query(plain, [Self.token])
            let outcome = Task { () -> PGError? in
                do { try await second.query(plain, [Self.token]); return nil } catch let error as PGError { return error } catch { return nil }
            }
            let waiting = try await LockWait.until(timeout: .seconds(30)) {
                try await observer.query("SELECT count(*) > 0 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'",
                                         [secondPID]).decode(Bool.self, 0, 0) == true
            }
            try await first.execute("COMMIT")
            #expect(waiting)
            let error = await outcome.value
            #expect(error?.sqlState == "23505" && error?.constraint == "notifications_dedupe_key", "\(String(describing: error))")
            #expect(try await Self.rows(observer, key: "k-plain") == 1)
            for c in [first, second, observer] { await c.close() }
        }
    }

    @Test("after retention prunes the row, its key is free again")
    func freedByRetention() async throws {
        try await TestDatabase.withConnection { c in
            let id = try await c.query(Self.insertOnce, [Self.token, "daily-digest-2026-11-24"]).decode(Int64.self, 0, 0)
            try await c.query("UPDATE pushq.notifications SET status = 'sent', sent_at = now(), finished_at = now() - interval '2 days', created_at = now() - interval '2 days' WHERE id = $1", [id])
            #expect(try await c.query(Self.insertOnce, [Self.token, "daily-digest-2026-11-24"]).count == 0, "a final row still holds its key")
            #expect(try await PruneTests.pruneAll(c, RetentionPolicy()) == 1)
            let again = try await c.query(Self.insertOnce, [Self.token, "daily-digest-2026-11-24"])
            #expect(again.count == 1)
            #expect(try again.decode(Int64.self, 0, 0) != id)
        }
    }

    /// enqueue_for_user with a key makes each device's row once: a second call returns no id, a device
    /// registered since gets its row alone
    @Test("enqueue_for_user with a key makes each device's row once; a device registered since gets its row alone")
    func enqueueForUserOncePerDevice() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.devices (device_token, user_ref, provider) VALUES ($1, 'alice', 'apns'), ($2, 'alice', 'apns'), ('fcm-token:1', 'alice', 'fcm')
                """, [String(repeating: "a1", count: 32), String(repeating: "a2", count: 32)])
            let call = """
                SELECT * FROM pushq.enqueue_for_user('alice', '{"aps":{"alert":"Your order has shipped"}}',
                                                     fcm_payload => '{"notification":{"title":"Your order has shipped"}}',
                                                     lane => 'orders', dedupe_key => 'order-1042', notify_channel => 'order_events')
                """
            let first = try await c.query(call)
            #expect(first.count == 3)
            #expect(try await c.query(call).count == 0, "the retried fan-out makes nothing")
            let keys = try await c.query("""
                SELECT provider, dedupe_key, lane, notify_channel FROM pushq.notifications ORDER BY provider, device_token
                """)
            #expect(keys.count == 3)
            for r in 0..<keys.count {
                let provider = keys.string(r, 0) ?? ""
                let key = keys.string(r, 1) ?? ""
                let prefix = "order-1042:\(provider):"
                #expect(key.hasPrefix(prefix), "\(key)")
                let digest = key.dropFirst(prefix.count)
                #expect(digest.count == 32 && digest.allSatisfy { $0.isHexDigit && !$0.isUppercase }, "\(key)")
                #expect(keys.string(r, 2) == "orders" && keys.string(r, 3) == "order_events")
            }
            #expect(Set((0..<3).map { keys.string($0, 1) }).count == 3, "one key per device")
            // The key ends with the first 32 hex digits of the SHA-256 of the device's registry key, environment:token.
            let apnsKey = try await c.query("""
                SELECT 'order-1042:apns:' || left(encode(sha256(convert_to('production:' || $1, 'UTF8')), 'hex'), 32)
                """, [String(repeating: "a1", count: 32)]).string(0, 0)
            #expect(try await Self.rows(c, key: apnsKey ?? "") == 1)

            try await c.query("INSERT INTO pushq.devices (device_token, user_ref) VALUES ($1, 'alice')", [String(repeating: "a3", count: 32)])
            let third = try await c.query(call)
            #expect(third.count == 1, "the new device alone")
            let newRow = try await c.query("SELECT device_token FROM pushq.notifications WHERE id = $1",
                                           [try third.decode(Int64.self, 0, 0)]).string(0, 0)
            #expect(newRow == String(repeating: "a3", count: 32))
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications").decode(Int.self, 0, 0) == 4)
            // A token registered in both APNs environments is two devices: a row for each, as without a key.
            try await c.query("INSERT INTO pushq.devices (device_token, environment, user_ref) VALUES ($1, 'development', 'alice')",
                              [String(repeating: "a3", count: 32)])
            #expect(try await c.query(call).count == 1, "the development registration of a3 alone")
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications WHERE device_token = $1",
                                      [String(repeating: "a3", count: 32)]).decode(Int.self, 0, 0) == 2)
            // Without a key, every call makes rows, as before schema 15.
            #expect(try await c.query("SELECT * FROM pushq.enqueue_for_user('alice', '{\"aps\":{}}')").count == 4)
            #expect(try await c.query("SELECT * FROM pushq.enqueue_for_user('alice', '{\"aps\":{}}')").count == 4)
        }
    }

    @Test("enqueue_for_user refuses a key of more than 160 characters (or none) by name, before making any row; 160 fits",
          arguments: [(161, false), (0, false), (160, true)])
    func enqueueForUserKeyLength(length: Int, accepted: Bool) async throws {
        try await TestDatabase.withConnection { c in
            // Two providers: the FCM key is one character shorter than the APNs one.
            try await c.query("INSERT INTO pushq.devices (device_token, user_ref, provider) VALUES ($1, 'alice', 'apns'), ('fcm-token:1', 'alice', 'fcm')",
                              [Self.token])
            let key = String(repeating: "é", count: length)
            let call = "SELECT * FROM pushq.enqueue_for_user('alice', '{\"aps\":{}}', fcm_payload => '{}', dedupe_key => $1)"
            if accepted {
                #expect(try await c.query(call, [key]).count == 2)
                let longest = try await c.query("SELECT max(char_length(dedupe_key)) FROM pushq.notifications").decode(Int.self, 0, 0)
                #expect(longest == 160 + ":apns:".count + 32)
            } else {
                let error = await #expect(throws: PGError.self) { try await c.query(call, [key]) }
                #expect(error?.sqlState == "23514")
                #expect(error?.constraint == "enqueue_for_user_dedupe_key_length")
                #expect(error?.message.contains("1 to 160 characters") == true, "\(String(describing: error))")
                #expect(try await c.query("SELECT count(*) FROM pushq.notifications").decode(Int.self, 0, 0) == 0)
            }
        }
    }
}
