import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// Completion signals from a worker in this process against the mock over TLS: one NOTIFY on
/// the row's channel for every way a worker, its upkeep or a producer ends a row, none for a
/// row without a channel.
@Suite("Completion signals end to end", .serialized)
struct CompletionSignalEndToEndTests {
    /// sent, failed by APNs, failed by attempts, TokenInvalidated at claim, expired by the upkeep, expired at
    /// claim, cancelled: one signal each, with the row's final fields; none for the row without a channel
    @Test("every final path sends one signal with the row's final fields; none for the row without a channel")
    func everyFinalPath() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                let url = try await databaseURL(db)
                let listener = try await PGConnection.connect(url, logger: TestDatabase.logger)
                try await listener.listen("order_events")
                let t = { (i: Int) in Fixtures.token(i, prefix: "5") }
                mock.setRule(forToken: t(2), .always(.error(.badTopic)))
                mock.setRule(forToken: t(3), .always(.error(.tooManyRequests)))
                try await db.query("""
                    INSERT INTO pushq.devices (device_token, environment, registered_at, invalidated_at, invalid_reason)
                    VALUES ($1, 'development', now() - interval '2 days', now() - interval '1 day', 'Unregistered')
                    """, [t(4)])
                func insert(_ i: Int, channel: String? = "order_events", _ columns: String = "", _ values: String = "") async throws -> Int64 {
                    try await db.query("""
                        INSERT INTO pushq.notifications (device_token, payload, notify_channel, dedupe_key\(columns))
                        VALUES ($1, '{"aps":{"alert":"n"}}', $2, $3\(values)) RETURNING id
                        """, [t(i), channel, "order-\(i)"]).decode(Int64.self, 0, 0) ?? 0
                }
                let sent = try await insert(1)
                let failedByAPNs = try await insert(2, ", lane", ", 'orders'")
                // A 429 is retried while attempts are left; with one, the row ends.
                let failedByAttempts = try await insert(3, ", max_attempts", ", 1")
                let invalidated = try await insert(4)
                // A credential no worker has: only the upkeep's expiry can end it.
                let expiredByUpkeep = try await insert(5, ", credential, expires_at", ", 'nobody', now() - interval '1 second'")
                let silent = try await insert(6, channel: nil)
                let cancelled = try await insert(7, ", scheduled_at", ", now() + interval '1 hour'")

                var configuration = try workerConfiguration(databaseURL: url, apnsURL: apnsURL)
                // The upkeep runs once, at start, and not again during the test: a row that
                // expires after it can only be ended by a claim.
                configuration.heartbeatSeconds = 3600
                try await withWorker(configuration) { _ in
                    let firstEnded = try await eventually {
                        try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status IN ('queued', 'sending', 'retrying') AND id <> \(cancelled)") == 0
                    }
                    let counts = try await statusCounts(db)
                    #expect(firstEnded, "\(counts)")
                    let expiredAtClaim = try await insert(8, ", expires_at", ", now() - interval '1 second'")
                    let claimedAndExpired = try await eventually {
                        try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE id = \(expiredAtClaim) AND status = 'expired'") == 1
                    }
                    #expect(claimedAndExpired)
                    try await db.query("""
                        UPDATE pushq.notifications SET status = 'cancelled', finished_at = now() WHERE id = $1 AND status IN ('queued', 'retrying')
                        """, [cancelled])

                    // The producer's cancel commits last: once its signal is in, every earlier one is.
                    let received = try await CompletionSignal.receive(on: listener) { got in
                        got.contains { (try? CompletionSignal(payload: $0.payload).id) == cancelled }
                    }
                    let signals = try received.map { try CompletionSignal(payload: $0.payload) }
                    let expectedIDs = [sent, failedByAPNs, failedByAttempts, invalidated, expiredByUpkeep, expiredAtClaim, cancelled]
                    #expect(signals.map(\.id).sorted() == expectedIDs.sorted(), "one each, none for row \(silent) without a channel")
                    for signal in signals { #expect(signal == (try await CompletionSignal.expected(db, id: signal.id))) }
                    let byID = Dictionary(signals.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
                    // status/last_status/last_reason/attempts/dedupe_key/lane
                    func summary(_ id: Int64) -> String {
                        guard let s = byID[id] else { return "no signal" }
                        return [s.status, s.lastStatus.map(String.init) ?? "-", s.lastReason ?? "-", String(s.attempts), s.dedupeKey ?? "-", s.lane]
                            .joined(separator: "/")
                    }
                    #expect(summary(sent) == "sent/200/-/1/order-1/default")
                    #expect(summary(failedByAPNs) == "failed/400/BadTopic/1/order-2/orders")
                    #expect(summary(failedByAttempts) == "failed/429/TooManyRequests/1/order-3/default")
                    #expect(summary(invalidated) == "failed/-/TokenInvalidated/0/order-4/default")
                    #expect(summary(expiredByUpkeep) == "expired/-/-/0/order-5/default")
                    #expect(summary(expiredAtClaim) == "expired/-/-/0/order-8/default")
                    #expect(summary(cancelled) == "cancelled/-/-/0/order-7/default")
                    #expect(signals.allSatisfy { $0.finishedAt != nil && $0.provider == "apns" })
                }
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE id = \(silent) AND status = 'sent'") == 1)
                #expect(mock.requests().filter { [t(4), t(5), t(7), t(8)].contains($0.deviceToken ?? "") }.isEmpty, "rows ended unsent were not sent")
                await listener.close()
            }
        }
    }
}
