import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// `QueueStatus.providers`: each provider's rows by status, counted as the totals are (open rows
/// exactly, final ones from the same newest rows, estimated in the same proportions above 100 000).
@Suite("Status: rows per provider")
struct ProviderStatusTests {
    static let keys = #"{"p256dh":"BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4","auth":"BTBZMqHH6r4Tts7J_aSIgg"}"#

    /// `count` rows of `provider` in `status` (a `sending` one under a live lease, as a claim leaves it).
    static func insert(_ c: PGConnection, _ provider: Provider, _ count: Int, _ status: String) async throws {
        let token: String, keys: String?, payload: String
        switch provider {
        case .apns: (token, keys, payload) = ("lpad(to_hex(g), 64, '0')", nil, #"{"aps":{}}"#)
        case .fcm: (token, keys, payload) = ("'fcm-' || g", nil, #"{"data":{}}"#)
        case .webpush: (token, keys, payload) = ("'https://push.example/s/' || g", Self.keys, #"{"title":"x"}"#)
        }
        try await c.query("""
            INSERT INTO pushq.notifications (provider, device_token, webpush_keys, payload, status, finished_at, locked_by, locked_until)
            SELECT $1, \(token), $2::jsonb, $3::json, $4, CASE WHEN $4 IN ('sent', 'failed', 'expired', 'cancelled') THEN now() END,
                   CASE WHEN $4 = 'sending' THEN 'w' END, CASE WHEN $4 = 'sending' THEN now() + interval '1 minute' END
              FROM generate_series(1, $5) g
            """, [provider.rawValue, keys, payload, status, count])
    }

    /// Every provider with rows, in `Provider` order, with all seven statuses; each status's
    /// counts add up to the total; a provider without rows is left out.
    @Test("each provider's rows by status, in provider order; they add up to the totals; none for a provider without rows")
    func exact() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.insert(c, .webpush, 2, "queued")
            try await Self.insert(c, .webpush, 1, "retrying")
            try await Self.insert(c, .webpush, 1, "sending")
            try await Self.insert(c, .webpush, 5, "sent")
            try await Self.insert(c, .apns, 3, "queued")
            try await Self.insert(c, .apns, 2, "cancelled")
            try await c.giveLeaseRows()  // the lease row the Web Push row's claim wrote
            let s = try await c.queueStatus(failureMinutes: 60)
            #expect(s.finalCountsExact)
            #expect(s.providers.map(\.provider) == [.apns, .webpush])
            let web = try #require(s.providers.last)
            #expect(web.counts == ["queued": 2, "sending": 1, "retrying": 1, "sent": 5, "failed": 0, "expired": 0, "cancelled": 0])
            #expect(s.providers.first?.counts == ["queued": 3, "sending": 0, "retrying": 0, "sent": 0, "failed": 0, "expired": 0, "cancelled": 2])
            for status in QueueStatus.statuses {
                #expect(s.providers.map { $0.counts[status, default: 0] }.reduce(0, +) == s.counts[status], "\(status)")
            }
        }
    }

    /// Above 100 000 final rows each provider's final counts are estimated in the proportions of
    /// the newest rows read, as the totals are: near the truth when the providers' rows are mixed
    /// over time (as a queue's are), and adding up to the totals (to a row per provider of
    /// rounding); open rows stay exact.
    @Test("above 100 000 final rows each provider's final counts are estimates that add up to the totals; open rows exact")
    func estimates() async throws {
        try await TestDatabase.withConnection { c in
            // 120 000 final rows, every fourth a Web Push one (half of those failed), in one stream.
            try await c.query("""
                INSERT INTO pushq.notifications (provider, device_token, webpush_keys, payload, status, finished_at)
                SELECT CASE WHEN g % 4 = 0 THEN 'webpush' ELSE 'apns' END,
                       CASE WHEN g % 4 = 0 THEN 'https://push.example/s/' || g ELSE lpad(to_hex(g), 64, '0') END,
                       CASE WHEN g % 4 = 0 THEN $1::jsonb END,
                       CASE WHEN g % 4 = 0 THEN '{"title":"x"}' ELSE '{"aps":{}}' END::json,
                       CASE WHEN g % 8 = 0 THEN 'failed' ELSE 'sent' END, now()
                  FROM generate_series(1, 120000) g
                """, [Self.keys])
            try await Self.insert(c, .webpush, 7, "queued")
            try await c.execute("ANALYZE pushq.notifications")
            let s = try await c.queueStatus(failureMinutes: 60)
            #expect(!s.finalCountsExact)
            let web = try #require(s.providers.first { $0.provider == .webpush })
            let apns = try #require(s.providers.first { $0.provider == .apns })
            #expect(web.counts["queued"] == 7 && apns.counts["queued"] == 0)
            #expect(abs(web.counts["sent", default: 0] - 15_000) < 1_500 && abs(web.counts["failed", default: 0] - 15_000) < 1_500, "\(web.counts)")
            #expect(abs(apns.counts["sent", default: 0] - 90_000) < 9_000 && apns.counts["failed"] == 0, "\(apns.counts)")
            for status in ["sent", "failed"] {
                #expect(abs(web.counts[status, default: 0] + apns.counts[status, default: 0] - s.counts[status, default: 0]) <= 2, "\(status)")
            }
        }
    }
}
