import Foundation
import PushCore
import PushStore
import Testing
import PGClient

/// Completion signals (schema 12): the trigger `notifications_notify_final` notifies a row's
/// `notify_channel` once, in the transaction that makes it final, whichever statement does.
/// The worker's own paths (sent, failed by the provider, failed by attempts) are in
/// PushWorkerTests' CompletionSignalEndToEndTests; these are the store's statements alone.
@Suite("Completion signals")
struct CompletionSignalTests {
    static func token(_ c: Character) -> String { String(repeating: String(c), count: 64) }

    /// Inserts one row with `columns`/`values` beside its token and payload; returns its id.
    static func insert(_ c: PGConnection, _ token: String, _ columns: String = "", _ values: String = "",
                       _ parameters: [(any PGParameter)?] = []) async throws -> Int64 {
        try await c.query("INSERT INTO pushq.notifications (device_token, payload\(columns)) VALUES ($1, '{\"aps\":{}}'\(values)) RETURNING id",
                          [token] + parameters).decode(Int64.self, 0, 0) ?? 0
    }

    /// the claim's final verdicts, the upkeep's expiry and a producer's cancel each notify the row's channel
    /// once, with the row's fields
    @Test("the claim's final verdicts, the upkeep's expiry and a producer's cancel each notify the row's channel once")
    func everyStorePath() async throws {
        try await TestDatabase.with { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let listener = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await listener.listen("order_events")
            try await c.query("""
                INSERT INTO pushq.devices (device_token, environment, registered_at, invalidated_at, invalid_reason)
                VALUES ($1, 'production', now() - interval '2 days', now() - interval '1 day', 'Unregistered')
                """, [Self.token("b")])
            let channel = ", notify_channel, dedupe_key, lane"
            let expiredAtClaim = try await Self.insert(c, Self.token("a"), channel + ", expires_at",
                                                       ", 'order_events', 'k-a', 'orders', now() - interval '1 second'")
            let invalidated = try await Self.insert(c, Self.token("b"), channel, ", 'order_events', 'k-b', 'orders'")
            let exhausted = try await Self.insert(c, Self.token("c"), channel + ", status, attempts, max_attempts, last_status, last_reason",
                                                  ", 'order_events', NULL, 'default', 'retrying', 3, 3, 500, 'InternalServerError'")
            // A credential no worker serves: only the upkeep's expiry ends it.
            let expiredByUpkeep = try await Self.insert(c, Self.token("d"), channel + ", credential, expires_at",
                                                        ", 'order_events', 'k-d', 'campaign', 'nobody', now() - interval '1 second'")
            let cancelled = try await Self.insert(c, Self.token("e"), channel + ", scheduled_at",
                                                  ", 'order_events', 'k-e', 'orders', now() + interval '1 hour'")
            let sending = try await Self.insert(c, Self.token("f"), channel, ", 'order_events', 'k-f', 'orders'")

            let claimed = try await c.claim(limit: 100, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production).rows
            #expect(Dictionary(uniqueKeysWithValues: claimed.map { ($0.id, $0.verdict) }) ==
                    [expiredAtClaim: .expired, invalidated: .tokenInvalidated, exhausted: .exhausted, sending: .send])
            #expect(try await c.expireWaiting(limit: 100).reduce(0) { $0 + $1.rows } == 1)
            try await c.query("""
                UPDATE pushq.notifications SET status = 'cancelled', finished_at = now() WHERE id = $1 AND status IN ('queued', 'retrying')
                """, [cancelled])

            let received = try await CompletionSignal.receive(on: listener) { $0.count >= 5 }
            #expect(received.allSatisfy { $0.channel == "order_events" })
            let signals = try received.map { try CompletionSignal(payload: $0.payload) }
            #expect(signals.map(\.id).sorted() == [expiredAtClaim, invalidated, exhausted, expiredByUpkeep, cancelled].sorted(),
                    "one signal per row that ended, none for the row now sending")
            for signal in signals { #expect(signal == (try await CompletionSignal.expected(c, id: signal.id))) }
            let byID = Dictionary(uniqueKeysWithValues: signals.map { ($0.id, $0) })
            #expect(byID[expiredAtClaim]?.status == "expired" && byID[expiredAtClaim]?.dedupeKey == "k-a" && byID[expiredAtClaim]?.lane == "orders")
            #expect(byID[invalidated]?.status == "failed" && byID[invalidated]?.lastReason == "TokenInvalidated")
            #expect(byID[exhausted]?.status == "failed" && byID[exhausted]?.lastReason == "InternalServerError"
                    && byID[exhausted]?.lastStatus == 500 && byID[exhausted]?.attempts == 3 && byID[exhausted]?.dedupeKey == nil)
            #expect(byID[expiredByUpkeep]?.status == "expired" && byID[expiredByUpkeep]?.lane == "campaign")
            #expect(byID[cancelled]?.status == "cancelled" && byID[cancelled]?.finishedAt != nil && byID[cancelled]?.provider == "apns")
            for connection in [c, listener] { await connection.close() }
        }
    }

    /// none for a row without a channel, none for a change that is not to a final status, none on a channel
    /// not listened to: the next signal that arrives is the marker's
    @Test("no signal without a channel, for a change to a status that is not final, or on a channel not listened to")
    func onlyFinalRowsWithAChannel() async throws {
        try await TestDatabase.with { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let listener = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await listener.listen("order_events")
            let silent = try await Self.insert(c, Self.token("a"), ", dedupe_key", ", 'no-channel'")
            let otherChannel = try await Self.insert(c, Self.token("b"), ", notify_channel", ", 'other_events'")
            let watched = try await Self.insert(c, Self.token("c"), ", notify_channel", ", 'order_events'")
            let marker = try await Self.insert(c, Self.token("d"), ", notify_channel", ", 'order_events'")
            // Each statement below commits on its own, in this order; NOTIFY delivers in commit order.
            try await c.query("UPDATE pushq.notifications SET status = 'sent', last_status = 200, finished_at = now() WHERE id IN ($1, $2)",
                              [silent, otherChannel])
            try await c.query("UPDATE pushq.notifications SET status = 'sending' WHERE id = $1", [watched])
            try await c.query("UPDATE pushq.notifications SET status = 'retrying', last_status = 500 WHERE id = $1", [watched])
            try await c.query("UPDATE pushq.notifications SET status = 'failed', last_reason = 'BadTopic', finished_at = now() WHERE id = $1", [watched])
            // Final already: neither a write of the same status nor of another column notifies again.
            try await c.query("UPDATE pushq.notifications SET status = 'failed', last_reason = 'Again' WHERE id = $1", [watched])
            try await c.query("UPDATE pushq.notifications SET metadata = '{\"seen\":true}' WHERE id = $1", [watched])
            try await c.query("UPDATE pushq.notifications SET status = 'cancelled', finished_at = now() WHERE id = $1", [marker])

            let received = try await CompletionSignal.receive(on: listener) { got in
                got.contains { (try? CompletionSignal(payload: $0.payload).id) == marker }
            }
            let ids = try received.map { try CompletionSignal(payload: $0.payload).id }
            #expect(ids == [watched, marker], "the watched row once, at its first final status, then the marker")
            #expect(try CompletionSignal(payload: received.first?.payload ?? "").lastReason == "BadTopic")
            for connection in [c, listener] { await connection.close() }
        }
    }

    /// the payload stays under PostgreSQL's 8000-byte limit at its largest: a 200-character key of escaped
    /// and 4-byte characters, a long last_reason cut to 200
    @Test("the payload stays under PostgreSQL's 8000-byte limit at its largest (a long key, a long last_reason)")
    func payloadBounded() async throws {
        try await TestDatabase.with { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let listener = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await listener.listen(String(repeating: "z", count: 63))
            // JSON escapes a control character to 6 bytes, the most any character costs; a 4-byte emoji stays 4.
            let key = String(repeating: "\u{1}", count: 100) + String(repeating: "🔔", count: 99) + "\""
            let reason = String(repeating: "\u{7}é\\", count: 3000)
            let lane = String(repeating: "L", count: 64)
            let id = try await Self.insert(c, Self.token("a"), ", dedupe_key, notify_channel, lane, max_attempts, attempts",
                                           ", $2, $3, $4, 32767, 32767", [key, String(repeating: "z", count: 63), lane])
            try await c.query("""
                UPDATE pushq.notifications SET status = 'failed', last_status = 400, last_reason = $2, finished_at = 'infinity' WHERE id = $1
                """, [id, reason])
            let received = try await CompletionSignal.receive(on: listener) { !$0.isEmpty }
            let payload = try #require(received.first?.payload)
            #expect(payload.utf8.count < 8000, "\(payload.utf8.count) bytes")
            // The key escaped: 100 × 6 + 99 × 4 + 2 bytes; the reason's first 200 characters: 66 × 10 + 6 + 2.
            #expect(payload.utf8.count > 998 + 668, "the key and reason are there, escaped: \(payload.utf8.count) bytes")
            let signal = try CompletionSignal(payload: payload)
            #expect(signal.dedupeKey == key)
            #expect(signal.lastReason == String(reason.prefix(200)))
            #expect(signal.lane == lane && signal.attempts == 32767 && signal.finishedAt == "infinity")
            for connection in [c, listener] { await connection.close() }
        }
    }

    @Test("a channel LISTEN could not hear unquoted is refused by notifications_notify_channel_name", arguments: [
        "Order_events", "1orders", "order-events", "order events", "", String(repeating: "a", count: 64), "ordér",
    ])
    func badChannelRefused(channel: String) async throws {
        try await TestDatabase.withConnection { c in
            let error = await #expect(throws: PGError.self) {
                try await Self.insert(c, Self.token("a"), ", notify_channel", ", $2", [channel])
            }
            #expect(error?.sqlState == "23514")
            #expect(error?.constraint == "notifications_notify_channel_name")
        }
    }

    @Test("channel names LISTEN hears as written are accepted", arguments: ["order_events", "_x", "a", String(repeating: "a", count: 63), "chat_77"])
    func goodChannelAccepted(channel: String) async throws {
        try await TestDatabase.withConnection { c in
            let id = try await Self.insert(c, Self.token("a"), ", notify_channel", ", $2", [channel])
            #expect(try await c.query("SELECT notify_channel FROM pushq.notifications WHERE id = $1", [id]).string(0, 0) == channel)
        }
    }
}
