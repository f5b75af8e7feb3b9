import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
@testable import PushWorker
import Testing
import PGClient

/// A row whose `p256dh` has the right shape (the INSERT rules pass it) but is not a point on P-256:
/// found only when the worker encrypts the message, it ends as the keys' other refusals do.
@Suite("Web Push: a subscription key off the curve")
struct WebPushKeyRefusalTests {
    /// The row ends `failed` / `InvalidSubscriptionKeys` on its first attempt with no request made
    /// (no HTTP status), and a good row beside it is sent.
    @Test("a p256dh off the curve ends its row failed InvalidSubscriptionKeys, nothing sent; the row beside it is sent")
    func offCurveRow() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, mockURL in
                let good = try mock.makeWebPushSubscription()
                let bad = try mock.makeWebPushSubscription()
                var point = try #require(Base64URL.decode(bad.keys.p256dh))
                // (x, y xor 1) is on P-256 only if y xor 1 = p - y: never for a key drawn at random.
                point[64] ^= 1
                let badID = try await db.query("""
                    INSERT INTO pushq.notifications (provider, device_token, webpush_keys, payload)
                    VALUES ('webpush', $1, jsonb_build_object('p256dh', $2::text, 'auth', $3::text), '{"title":"x"}')
                    RETURNING id
                    """, [bad.endpoint, Base64URL.encode(point), bad.keys.auth]).decode(Int64.self, 0, "id")
                let goodID = try await WebPushEndToEndTests.insert(db, good)
                let configuration = try await WebPushEndToEndTests.configuration(db, mockURL: mockURL, allowed: [mockURL])
                try await withWorker(configuration) { _ in
                    #expect(try await waitUntilAllFinal(db, timeout: .seconds(60)))
                    let refused = try await WebPushEndToEndTests.final(db, badID)
                    #expect(refused == .init(status: "failed", reason: "InvalidSubscriptionKeys", http: nil, attempts: 1))
                    #expect(try await WebPushEndToEndTests.final(db, goodID) == .init(status: "sent", reason: nil, http: 201, attempts: 1))
                    #expect(WebPushEndToEndTests.requests(mock, bad).isEmpty && WebPushEndToEndTests.requests(mock, good).count == 1)
                }
            }
        }
    }
}
