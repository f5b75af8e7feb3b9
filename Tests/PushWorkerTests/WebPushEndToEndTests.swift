import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushTransport
@testable import PushWorker
import Testing
import PGClient

/// Web Push rows through the whole pipeline (issue 47): the real PostgreSQL, a worker in this
/// process and the mock's Web Push service over TLS, which checks VAPID and decrypts every
/// message. One test per part of the answers table in docs/webpush.md; the origins are mocks on
/// 127.0.0.1, allowlisted (`PUSHQ_WEBPUSH_ALLOWED_ORIGINS`) unless the test is about a refusal.
@Suite("Web Push end to end", .serialized)
struct WebPushEndToEndTests {
    static let subject = "mailto:push@example.com"

    /// The test worker (APNs `default` at `mockURL` too) with a fresh VAPID key as the Web Push
    /// `default`, sending to `allowed` origins although they are loopback.
    static func configuration(_ db: PGConnection, mockURL: String, allowed: [String]) async throws -> WorkerConfiguration {
        var c = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: mockURL)
        let key = try VAPIDKey(pem: try VAPIDKey.generatePEM())
        c.credentials[CredentialKey(.webpush, "default")] = .webpush(WebPushCredential(key: key, subject: try VAPIDSubject(subject)))
        c.webPush.allowedOrigins = Set(try allowed.map { origin in try WebPushOrigin.parse(origin).get() })
        return c
    }

    /// Inserts a Web Push row to `s` as a producer would, with its keys as the browser gave them.
    static func insert(_ db: PGConnection, _ s: MockWebPushSubscription, payload: String = #"{"title":"Hello"}"#,
                       topic: String? = nil, priority: Int? = nil, expiresAt: String = "NULL") async throws -> Int64 {
        try await db.query("""
            INSERT INTO pushq.notifications (provider, device_token, webpush_keys, payload, collapse_id, priority, expires_at)
            VALUES ('webpush', $1, jsonb_build_object('p256dh', $2::text, 'auth', $3::text), $4::json, $5, $6::int, \(expiresAt))
            RETURNING id
            """, [s.endpoint, s.keys.p256dh, s.keys.auth, payload, topic, priority.map(String.init)]).decode(Int64.self, 0, "id")
    }

    /// Registers `s` in `pushq.devices`, as a backend storing a browser's subscription does.
    static func register(_ db: PGConnection, _ s: MockWebPushSubscription, user: String = "alice") async throws {
        try await db.query("""
            INSERT INTO pushq.devices (provider, device_token, webpush_keys, user_ref)
            VALUES ('webpush', $1, jsonb_build_object('p256dh', $2::text, 'auth', $3::text), $4)
            """, [s.endpoint, s.keys.p256dh, s.keys.auth, user])
    }

    struct Final: Equatable { var status: String; var reason: String?; var http: Int?; var attempts: Int }

    static func final(_ db: PGConnection, _ id: Int64) async throws -> Final {
        let r = try await db.query("SELECT status, last_reason, last_status, attempts FROM pushq.notifications WHERE id = $1", [id])
        return Final(status: try r.decode(String.self, 0, "status"), reason: try r.decodeOptional(String.self, 0, "last_reason"),
                     http: try r.decodeOptional(Int.self, 0, "last_status"), attempts: try r.decode(Int.self, 0, "attempts"))
    }

    static func status(_ db: PGConnection, _ id: Int64) async throws -> String {
        try await db.query("SELECT status FROM pushq.notifications WHERE id = $1", [id]).decode(String.self, 0, "status")
    }

    /// The mock's requests to `s`.
    static func requests(_ mock: MockPushServer, _ s: MockWebPushSubscription) -> [MockWebPushRecordedRequest] {
        mock.webPushRequests().filter { $0.endpoint == s.endpoint }
    }

    /// Each answer of the table ends its row as docs/webpush.md says: 2xx, 404, 410, 413, 400, 500, 503 with Retry-After,
    /// no answer and a redirect; the mock decrypts each message to the row's payload, byte for byte. Later rows to the
    /// endpoints 404 and 410 invalidated end TokenInvalidated with no request.
    @Test("each Web Push answer ends its row as the table says; messages decrypt to the payload; gone endpoints send no more")
    func answersTable() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, mockURL in
                var subs: [MockWebPushSubscription] = []
                for _ in 0..<11 { subs.append(try mock.makeWebPushSubscription()) }
                mock.setWebPushRule(forEndpoint: subs[1].endpoint, .always(.status(404, reason: "NotFound")))
                mock.unsubscribeWebPush(endpoint: subs[2].endpoint)  // 410 Gone, as a revoked permission
                mock.setWebPushRule(forEndpoint: subs[3].endpoint, .always(.status(413)))
                mock.setWebPushRule(forEndpoint: subs[4].endpoint, .always(.status(400)))
                mock.setWebPushRule(forEndpoint: subs[5].endpoint, .next(1, .status(500)))
                mock.setWebPushRule(forEndpoint: subs[6].endpoint, .next(1, .status(503, retryAfter: "1")))
                mock.setWebPushRule(forEndpoint: subs[7].endpoint, .next(1, .noAnswer))
                mock.setWebPushRule(forEndpoint: subs[8].endpoint, .always(.redirect(307, to: subs[10].endpoint)))
                for i in [1, 2, 3] { try await Self.register(db, subs[i]) }

                // A Declarative Web Push message with a multi-byte character: the mock must decrypt exactly these bytes.
                let payload = #"{"web_push":8030,"notification":{"title":"Commande 1042 expédiée","navigate":"https://example.com/o/1042"}}"#
                var ids: [Int: Int64] = [:]
                ids[0] = try await Self.insert(db, subs[0], payload: payload, topic: "order-1042", priority: 10,
                                               expiresAt: "now() + interval '1 hour'")
                for i in 1...8 { ids[i] = try await Self.insert(db, subs[i], payload: #"{"row":\#(i)}"#) }
                ids[9] = try await Self.insert(db, subs[9], priority: 1)
                try await insertAlerts(db, count: 5, prefix: "c")  // APNs rows beside, to the same mock

                var configuration = try await Self.configuration(db, mockURL: mockURL, allowed: [mockURL])
                configuration.sender.requestTimeout = 2  // the unanswered request fails after 2 s, then is retried
                try await withWorker(configuration) { _ in
                    #expect(try await waitUntilAllFinal(db, timeout: .seconds(90)))
                    func final(_ i: Int) async throws -> Final { try await Self.final(db, ids[i]!) }
                    let f0 = try await final(0)
                    #expect(f0 == Final(status: "sent", reason: nil, http: 201, attempts: 1))
                    let f1 = try await final(1)
                    #expect(f1 == Final(status: "failed", reason: "NotFound", http: 404, attempts: 1))
                    let f2 = try await final(2)
                    #expect(f2 == Final(status: "failed", reason: "Gone", http: 410, attempts: 1))
                    let f3 = try await final(3)
                    #expect(f3 == Final(status: "failed", reason: "PayloadTooLarge", http: 413, attempts: 1))
                    let f4 = try await final(4)
                    #expect(f4 == Final(status: "failed", reason: "BadRequest", http: 400, attempts: 1))
                    let f5 = try await final(5)
                    #expect(f5 == Final(status: "sent", reason: nil, http: 201, attempts: 2))
                    let f6 = try await final(6)
                    #expect(f6 == Final(status: "sent", reason: nil, http: 201, attempts: 2))
                    let f7 = try await final(7)
                    #expect(f7 == Final(status: "sent", reason: nil, http: 201, attempts: 2))
                    let f8 = try await final(8)
                    #expect(f8 == Final(status: "failed", reason: "Redirect", http: 307, attempts: 1))
                    let f9 = try await final(9)
                    #expect(f9 == Final(status: "sent", reason: nil, http: 201, attempts: 1))
                    #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE provider = 'apns' AND status = 'sent'") == 5)

                    // What went out for row 0: the payload's bytes, encrypted (the mock decrypted them), its headers, VAPID.
                    let first = Self.requests(mock, subs[0])
                    #expect(first.count == 1)
                    let r = try #require(first.first)
                    #expect(r.decrypted && r.plaintext == Array(payload.utf8))
                    #expect(r.contentEncoding == "aes128gcm" && r.topic == "order-1042" && r.urgency == "high")
                    let ttl = try #require(r.ttl.flatMap { Int($0) })
                    #expect(ttl > 0 && ttl <= 3600, "TTL: the seconds left of the hour, \(ttl)")
                    #expect(r.vapidSubject == Self.subject && r.vapidAudience == mockURL)
                    #expect(Self.requests(mock, subs[9]).first?.urgency == "low" && Self.requests(mock, subs[9]).first?.ttl == "2419200")
                    for i in 1...8 {
                        #expect(Self.requests(mock, subs[i]).allSatisfy { $0.plaintext == nil || $0.plaintext == Array(#"{"row":\#(i)}"#.utf8) })
                    }
                    // The 201's Location is written back; no other row has one.
                    let location = try await db.query("SELECT webpush_location FROM pushq.notifications WHERE id = $1", [ids[0]!])
                        .decodeOptional(String.self, 0, "webpush_location")
                    #expect(location != nil && location == r.location)
                    #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'failed' AND webpush_location IS NOT NULL") == 0)
                    // Retry-After: 1 on the 503 is a floor under the resend (the mock's own clock: a lower bound, load-proof).
                    let resent = Self.requests(mock, subs[6]).map(\.receivedMonotonicNanoseconds)
                    #expect(resent.count == 2 && resent[1] - resent[0] >= 1_000_000_000, "\(resent)")
                    // Never followed: the redirect's target got nothing.
                    #expect(Self.requests(mock, subs[10]).isEmpty)

                    // 404 and 410 invalidate the exact endpoints registered; 413 does not.
                    let invalid = try await db.query("""
                        SELECT device_token, invalid_reason FROM pushq.devices
                         WHERE provider = 'webpush' AND invalidated_at IS NOT NULL ORDER BY invalid_reason DESC
                        """)
                    #expect(invalid.count == 2)
                    #expect(invalid.string(0, 0) == subs[1].endpoint && invalid.string(0, 1) == "NotFound")
                    #expect(invalid.string(1, 0) == subs[2].endpoint && invalid.string(1, 1) == "Gone")

                    // Later rows to them end TokenInvalidated without a request; one to the 413 endpoint is sent again.
                    let before = mock.webPushRequests().count
                    let later = [try await Self.insert(db, subs[1]), try await Self.insert(db, subs[2])]
                    #expect(try await waitUntilAllFinal(db, timeout: .seconds(60)))
                    for id in later {
                        let finalId = try await Self.final(db, id)
                        #expect(finalId == Final(status: "failed", reason: "TokenInvalidated", http: nil, attempts: 0))
                    }
                    #expect(mock.webPushRequests().count == before)
                }
            }
        }
    }

    /// A 429 sets its row aside for at least Retry-After, with its attempt given back; a later row to the same
    /// subscription waits as long, and nothing else slows: a row to another subscription inserted afterwards is sent.
    @Test("429: that subscription waits at least Retry-After, the attempt not counted; other subscriptions go on")
    func throttled() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, mockURL in
                let slow = try mock.makeWebPushSubscription(), other = try mock.makeWebPushSubscription()
                mock.setWebPushRule(forEndpoint: slow.endpoint, .next(1, .status(429, retryAfter: "120")))
                let configuration = try await Self.configuration(db, mockURL: mockURL, allowed: [mockURL])
                try await withWorker(configuration) { _ in
                    let insertedAt = try await databaseNow(db)
                    let a = try await Self.insert(db, slow)
                    #expect(try await eventually(timeout: .seconds(60)) {
                        try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE id = \(a) AND last_status = 429 AND status IN ('queued', 'retrying')") == 1
                    })
                    // Not before Retry-After: the answer came after the insert, so its floor is insert + 120 s.
                    #expect(try await scalar(db, """
                        SELECT count(*) FROM pushq.notifications
                         WHERE id = \(a) AND scheduled_at >= '\(insertedAt)'::timestamptz + interval '120 seconds'
                        """) == 1)
                    #expect(try await Self.final(db, a).attempts == 0, "a 429's attempt is given back")
                    // Another row to the throttled subscription waits too; one to another subscription goes out.
                    let b = try await Self.insert(db, slow), c = try await Self.insert(db, other)
                    #expect(try await eventually(timeout: .seconds(60)) { try await Self.status(db, c) == "sent" })
                    #expect(try await Self.status(db, a) != "sent")
                    // b was inserted before c and is due as soon: the claim that took c had taken b first and set it aside
                    // (throttled: back to retrying, due when the subscription's throttle ends, attempt untouched).
                    #expect(try await scalar(db, """
                        SELECT count(*) FROM pushq.notifications
                         WHERE id = \(b) AND status = 'retrying' AND attempts = 0
                           AND scheduled_at >= '\(insertedAt)'::timestamptz + interval '120 seconds'
                        """) == 1)
                    #expect(mock.webPushRequests().filter { $0.endpoint == slow.endpoint }.count == 1, "one request to the slowed subscription")
                }
            }
        }
    }

    /// Two origins: one answers 403 to the VAPID key (a credential hold at that origin, rows waiting with their attempts
    /// given back), the other keeps sending; once the first accepts again its probe sends the held rows.
    @Test("401/403 hold the credential at that origin only; other origins go on; the probe sends the held rows after")
    func credentialHeldPerOrigin() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { good, goodURL in
                try await withMock { refusing, refusingURL in
                    let a = try good.makeWebPushSubscription(), b = try refusing.makeWebPushSubscription()
                    try refusing.setWebPushRule(forOrigin: refusingURL, .always(.status(403, reason: "BadJwtToken")))
                    var configuration = try await Self.configuration(db, mockURL: goodURL, allowed: [goodURL, refusingURL])
                    configuration.pauseBaseSeconds = 1
                    configuration.pauseCapSeconds = 2
                    try await withWorker(configuration) { worker in
                        let held = [try await Self.insert(db, b), try await Self.insert(db, b)]
                        #expect(try await eventually(timeout: .seconds(60)) {
                            try await scalar(db, """
                                SELECT count(*) FROM pushq.credential_pauses
                                 WHERE credential = 'default' AND environment = '\(refusingURL)' AND kind = 'credential'
                                """) == 1
                        })
                        #expect(try await scalar(db, "SELECT count(*) FROM pushq.credential_pauses") == 1, "the other origin is not held")
                        let sent = try await Self.insert(db, a)
                        #expect(try await eventually(timeout: .seconds(60)) { try await Self.status(db, sent) == "sent" })
                        for id in held {
                            let f = try await Self.final(db, id)
                            #expect(f.status != "sent" && f.attempts == 0, "\(f)")
                        }

                        // One sender for the credential serves both origins; the hold is the origin's alone.
                        #expect(worker.state.withLock { Array($0.senders.keys) }.filter { $0.provider == .webpush } == [.webPush("default", origin: nil)])
                        try refusing.setWebPushRule(forOrigin: refusingURL, nil)
                        #expect(try await waitUntilAllFinal(db, timeout: .seconds(60)))
                        for id in held {
                            let finalId = try await Self.final(db, id)
                            #expect(finalId == Final(status: "sent", reason: nil, http: 201, attempts: 1))
                        }
                        #expect(try await scalar(db, "SELECT count(*) FROM pushq.credential_pauses") == 0)
                    }
                }
            }
        }
    }

    /// An origin that refuses connections holds only its own rows (an outage at that origin); rows to another origin
    /// inserted afterwards are sent meanwhile, and the held ones once it listens again.
    @Test("a dead origin holds only its own rows; other origins go on; its rows go out once it listens again")
    func deadOrigin() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { good, goodURL in
                try await withMock { dead, deadURL in
                    let a = try good.makeWebPushSubscription(), b = try dead.makeWebPushSubscription()
                    try await dead.refuseConnections()
                    var configuration = try await Self.configuration(db, mockURL: goodURL, allowed: [goodURL, deadURL])
                    configuration.outageProbeBaseSeconds = 0.5
                    configuration.outageProbeCapSeconds = 1
                    try await withWorker(configuration) { _ in
                        let held = [try await Self.insert(db, b), try await Self.insert(db, b)]
                        #expect(try await eventually(timeout: .seconds(60)) {
                            try await scalar(db, """
                                SELECT count(*) FROM pushq.credential_pauses WHERE environment = '\(deadURL)' AND kind = 'outage'
                                """) == 1
                        })
                        let sent = [try await Self.insert(db, a), try await Self.insert(db, a)]
                        #expect(try await eventually(timeout: .seconds(60)) {
                            try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE id IN (\(sent[0]), \(sent[1])) AND status = 'sent'") == 2
                        })
                        for id in held {
                            let f = try await Self.final(db, id)
                            #expect(f.status != "sent" && f.attempts == 0, "\(f)")
                        }
                        #expect(try await scalar(db, "SELECT count(*) FROM pushq.credential_pauses WHERE environment = '\(goodURL)'") == 0)

                        try await dead.acceptConnections()
                        #expect(try await waitUntilAllFinal(db, timeout: .seconds(60)))
                        for id in held { #expect(try await Self.final(db, id).status == "sent") }
                    }
                }
            }
        }
    }

    /// An endpoint on a loopback origin that is not allowlisted ends failed / EndpointNotAllowed, and its listener never
    /// sees a connection; an allowlisted origin beside it is sent to.
    @Test("an endpoint whose host is not public ends EndpointNotAllowed with no connection made; allowlisted ones are sent")
    func refusedEndpoint() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { good, goodURL in
                try await withMock { guarded, _ in
                    let a = try good.makeWebPushSubscription(), b = try guarded.makeWebPushSubscription()
                    let configuration = try await Self.configuration(db, mockURL: goodURL, allowed: [goodURL])
                    try await withWorker(configuration) { _ in
                        let refused = try await Self.insert(db, b), sent = try await Self.insert(db, a)
                        #expect(try await waitUntilAllFinal(db, timeout: .seconds(60)))
                        let finalRefused = try await Self.final(db, refused)
                        #expect(finalRefused == Final(status: "failed", reason: "EndpointNotAllowed", http: nil, attempts: 1))
                        let finalSent = try await Self.final(db, sent)
                        #expect(finalSent == Final(status: "sent", reason: nil, http: 201, attempts: 1))
                    }
                    #expect(guarded.stats().connectionsOpened == 0 && guarded.webPushRequests().isEmpty)
                }
            }
        }
    }
}
