import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// A Live Activity's life through a worker and the mock over TLS: started on a user's devices
/// from their push-to-start tokens, updated and ended by activity id; APNs' answers retiring
/// exactly the tokens they name; and FCM's `apns.live_activity_token` passed through.
@Suite("Live Activities end to end", .serialized)
struct LiveActivityEndToEndTests {
    static func register(_ db: PGConnection, _ token: String, kind: String, user: String? = nil, activity: String? = nil,
                         installation: String? = nil) async throws {
        try await db.query("""
            INSERT INTO pushq.devices (device_token, environment, user_ref, topic, kind, activity_id, installation_id, registered_at)
            VALUES ($1, 'development', $2, $3, $4, $5, $6, now() - interval '1 hour')
            """, [token, user, Fixtures.topic, kind, activity, installation])
    }

    static func retirement(_ db: PGConnection, _ token: String) async throws -> String? {
        let r = try await db.query("""
            SELECT CASE WHEN pushq.token_is_invalid(registered_at, invalidated_at) THEN invalid_reason ELSE 'valid' END
              FROM pushq.devices WHERE device_token = $1
            """, [token])
        return r.string(0, 0)
    }

    /// The mock's requests to `token`: their `apns-priority` and the `aps.event` of their body.
    static func sent(_ mock: MockPushServer, to token: String) -> [(priority: String?, event: String?, pushType: String?, topic: String?)] {
        mock.requests().filter { $0.deviceToken == token }.map { request in
            func header(_ name: String) -> String? { request.headers.first { $0.first == name }?.last }
            let body = request.body.flatMap { try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any] }
            let aps = body?["aps"] as? [String: Any]
            return (header("apns-priority"), aps?["event"] as? String, header("apns-push-type"), header("apns-topic"))
        }
    }

    /// start on a user's two phones, updates, ExpiredToken retiring that activity token only, end sent and
    /// then its token retired
    @Test("Live Activity lifecycle: start on two phones, updates, ExpiredToken retires one token, end sent then token retired")
    func lifecycle() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = true }) { mock, mockURL in
                let t = { (i: Int) in Fixtures.token(i, prefix: "d") }
                // Alice's two phones: each an ordinary device token and a push-to-start token.
                try await Self.register(db, t(1), kind: "device", user: "alice")
                try await Self.register(db, t(2), kind: "push_to_start", user: "alice", installation: "phone-1")
                try await Self.register(db, t(3), kind: "device", user: "alice")
                try await Self.register(db, t(4), kind: "push_to_start", user: "alice", installation: "phone-2")
                let configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: mockURL)
                try await withWorker(configuration) { _ in
                    let started = try await db.query("""
                        SELECT * FROM pushq.start_activity('alice', 'MatchAttributes', '{"match": "m-7"}', '{"home": 0, "away": 0}',
                                                           '{"title": "Kick-off"}', input_push_token => true)
                        """)
                    #expect(started.count == 2)
                    #expect(try await waitUntilAllFinal(db, timeout: .seconds(60)))
                    let topic = Fixtures.topic + ".push-type.liveactivity"
                    for token in [t(2), t(4)] {
                        let requests = Self.sent(mock, to: token)
                        #expect(requests.count == 1 && requests.first?.event == "start" && requests.first?.priority == "10", "\(requests)")
                        #expect(requests.first?.pushType == "liveactivity" && requests.first?.topic == topic)
                    }
                    #expect(Self.sent(mock, to: t(1)).isEmpty && Self.sent(mock, to: t(3)).isEmpty)

                    // The activity started on both phones; their apps registered its update tokens,
                    // and phone 1 runs another activity. Phone 2's activity token has expired.
                    try await Self.register(db, t(5), kind: "live_activity", activity: "match-7")
                    try await Self.register(db, t(6), kind: "live_activity", activity: "match-7")
                    try await Self.register(db, t(7), kind: "live_activity", activity: "match-8")
                    let now = Int64(Date().timeIntervalSince1970 * 1000)
                    mock.setRule(forToken: t(6), .always(.error(.expiredToken, timestamp: now)))
                    let updated = try await db.query("SELECT * FROM pushq.update_activity('match-7', '{\"home\": 1, \"away\": 0}')")
                    #expect(updated.count == 2)
                    #expect(try await waitUntilAllFinal(db, timeout: .seconds(60)))
                    #expect(Self.sent(mock, to: t(5)).map(\.priority) == ["5"])
                    #expect(Self.sent(mock, to: t(5)).map(\.event) == ["update"])
                    let expired = try await db.query("SELECT status, last_reason FROM pushq.notifications WHERE device_token = $1", [t(6)])
                    #expect(expired.string(0, 0) == "failed" && expired.string(0, 1) == "ExpiredToken")
                    #expect(try await Self.retirement(db, t(6)) == "ExpiredToken")
                    for token in [t(1), t(2), t(3), t(4), t(5), t(7)] {
                        #expect(try await Self.retirement(db, token) == "valid", "\(token) kept")
                    }

                    // The end goes to the one token left, is sent (not failed as an invalid token's
                    // row would be), and only then retires it.
                    let ended = try await db.query("SELECT * FROM pushq.end_activity('match-7', '{\"home\": 2, \"away\": 0}')")
                    #expect(ended.count == 1)
                    #expect(try await waitUntilAllFinal(db, timeout: .seconds(60)))
                    let end = try await db.query("SELECT status, device_token FROM pushq.notifications WHERE id = $1",
                                                 [try ended.decode(Int64.self, 0, 0) ?? 0])
                    #expect(end.string(0, 0) == "sent" && end.string(0, 1) == t(5))
                    #expect(Self.sent(mock, to: t(5)).map(\.event) == ["update", "end"])
                    #expect(Self.sent(mock, to: t(5)).last?.priority == "10")
                    #expect(try await Self.retirement(db, t(5)) == "ActivityEnded")
                    #expect(try await Self.retirement(db, t(7)) == "valid")
                    #expect(try await db.query("SELECT * FROM pushq.update_activity('match-7', '{}')").count == 0)
                }
            }
        }
    }

    @Test("a pruner round retires the live_activity tokens registered more than 12 hours ago, and only those")
    func prunerRetiresAgedTokens() async throws {
        try await TestDatabase.withConnection { db in
            let t = { (i: Int) in Fixtures.token(i, prefix: "f") }
            try await db.query("""
                INSERT INTO pushq.devices (device_token, kind, activity_id, registered_at) VALUES
                  ($1, 'live_activity', 'old', now() - interval '12 hours 1 minute'),
                  ($2, 'live_activity', 'old', now() - interval '11 hours 59 minutes'),
                  ($3, 'push_to_start', NULL, now() - interval '30 days')
                """, [t(1), t(2), t(3)])
            var walk = PruneWalk()
            let outcome = try await Pruner(policy: RetentionPolicy()).round(db, walk: &walk, now: 0, rest: { _ in })
            guard case .pruned(_, _, let retired) = outcome else { Issue.record("not elected"); return }
            #expect(retired == 1)
            #expect(try await Self.retirement(db, t(1)) == "AgeLimit")
            #expect(try await Self.retirement(db, t(2)) == "valid")
            #expect(try await Self.retirement(db, t(3)) == "valid")
        }
    }

    @Test("an FCM row carrying apns.live_activity_token goes to FCM unchanged, beside the registration token")
    func fcmLiveActivityToken() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = true }) { mock, mockURL in
                let token = FCMEndToEndTests.token(1, "la")
                let payload = #"{"apns": {"live_activity_token": "\#(Fixtures.token(1, prefix: "e"))", "headers": {"apns-priority": "5"}, "#
                    + #""payload": {"aps": {"timestamp": 1700000000, "event": "update", "content-state": {"home": 1, "away": 0}}}}}"#
                let id = try await FCMEndToEndTests.insertFCM(db, token, payload: payload)
                let configuration = try await FCMEndToEndTests.configuration(db, mockURL: mockURL)
                let drained = try await withWorker(configuration) { _ in try await waitUntilAllFinal(db, timeout: .seconds(60)) }
                #expect(drained)
                #expect(try await FCMEndToEndTests.final(db, id) == .init(status: "sent", reason: nil, http: 200, attempts: 1))
                let sent = mock.fcmRequests().filter { $0.endpoint == "send" && $0.registrationToken == token }
                #expect(sent.count == 1)
                #expect(sent.first?.body.map { String(decoding: $0, as: UTF8.self) }
                        == #"{"message":{"token":""# + token + #"","# + payload.dropFirst() + "}")
            }
        }
    }
}
