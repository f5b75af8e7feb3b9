import Foundation
import MockPush
import PushCore
@testable import PushTransport
import Testing

/// Every row of issue 47's answers table at the transport: a `WebPushSender` posting to the mock's
/// Web Push service over TLS and HTTP/2, which decrypts each message, and the outcome of each answer.
@Suite struct WebPushSenderAnswerTests {
    /// The mock answers each subscription by its rule; the sender reads status, `Location`,
    /// `Retry-After` (seconds and HTTP-date) and the body's reason into the verdict.
    @Test("each answer of the table becomes its Web Push verdict; 2xx carries Location; the mock decrypted every message")
    func answersTable() async throws {
        let s = try await WebPushSetup.start()
        do {
            let later = Date().addingTimeInterval(120)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let httpDate = formatter.string(from: later)
            // (rule, expected verdict); nil rule: the normal 201.
            let rows: [(MockWebPushAnswer?, (WebPushVerdict) -> Bool)] = [
                (nil, { $0 == .sent }),
                (.status(202), { $0 == .sent }),
                (.status(404), { $0 == .invalidateEndpoint(.notFound) }),
                (.status(410, reason: "Gone"), { $0 == .invalidateEndpoint(.gone) }),
                (.status(413), { $0 == .fail(.payloadTooLarge) }),
                (.status(400), { $0 == .fail(.badRequest) }),
                (.status(429, retryAfter: "30"), { $0 == .throttleSubscription(seconds: 30) }),
                (.status(429, retryAfter: httpDate), {
                    // An HTTP-date two minutes ahead: read against this host's clock, whole seconds.
                    guard case .throttleSubscription(let seconds) = $0 else { return false }
                    return (60...121).contains(seconds)
                }),
                (.status(429), { $0 == .throttleSubscription(seconds: WebPushVerdict.defaultThrottleSeconds) }),
                (.status(500), { $0 == .retry(.serverError(status: 500), retryAfter: nil) }),
                (.status(503, retryAfter: "7"), { $0 == .retry(.serverError(status: 503), retryAfter: 7) }),
                (.redirect(301, to: "https://127.0.0.1:9/wp/x"), { $0 == .fail(.redirect) }),
                (.redirect(302, to: "https://127.0.0.1:9/wp/x"), { $0 == .fail(.redirect) }),
                (.redirect(307, to: "https://127.0.0.1:9/wp/x"), { $0 == .fail(.redirect) }),
                (.redirect(308, to: "https://127.0.0.1:9/wp/x"), { $0 == .fail(.redirect) }),
                (.status(401), { if case .holdCredential("Unauthorized", _) = $0 { return true } else { return false } }),
                (.status(403, reason: "BadJwtToken"), {
                    if case .holdCredential("Forbidden", let message) = $0 { return message.contains("BadJwtToken") } else { return false }
                }),
            ]
            var requests: [PushRequest] = []
            for (i, row) in rows.enumerated() {
                let subscription = try s.harness.server.makeWebPushSubscription()
                if let rule = row.0 { s.harness.server.setWebPushRule(forEndpoint: subscription.endpoint, .always(rule)) }
                requests.append(try webPushRequest(i, subscription, urgency: i == 0 ? .high : nil, topic: i == 0 ? "inbox-1" : nil))
            }
            try s.sender.submit(requests)
            await s.collector.wait(for: rows.count)
            let answers = s.byTag()
            for (i, row) in rows.enumerated() {
                let response = try #require(answers[Int64(i)])
                guard case .webPush(let verdict)? = response.answer?.outcome(status: response.status) else {
                    Issue.record("row \(i) (\(String(describing: row.0))): no Web Push verdict, \(String(describing: response.transportFailure))")
                    continue
                }
                #expect(row.1(verdict), "row \(i) (\(String(describing: row.0))): \(verdict)")
                #expect(response.outcome == .webPush(verdict))
            }
            let first = try #require(answers[0])
            #expect(first.status == 201 && first.webPush?.location?.hasPrefix(s.harness.url + "/") == true)
            #expect(answers[11]?.status == 301 && answers[14]?.status == 308)
            // Every message arrived encrypted (aes128gcm, VAPID for its origin) and decrypted to its payload.
            let recorded = s.harness.server.webPushRequests()
            #expect(recorded.count == rows.count)
            for r in recorded {
                let tag = try #require(requests.firstIndex { $0.deviceToken == r.endpoint })
                #expect(r.decrypted && r.plaintext == requests[tag].payload, "request \(tag): \(r.message ?? "")")
                #expect(r.contentEncoding == "aes128gcm" && r.vapidAudience == s.harness.url && r.vapidSubject == WebPushSetup.subject)
                #expect(r.vapidPublicKey == s.credential.key.applicationServerKey)
                #expect(r.ttl == String(WebPushHeaders.defaultTTL))
            }
            let firstRecord = try #require(recorded.first { $0.endpoint == requests[0].deviceToken })
            #expect(firstRecord.urgency == "high" && firstRecord.topic == "inbox-1")
            // One origin, one VAPID token for every message to it.
            #expect(s.sender.vapidTokensSigned == 1)
        } catch {
            try await s.stop()
            throw error
        }
        try await s.stop()
    }

    /// A `p256dh` of the right shape (65 bytes, 0x04 first: what the row's constraint and
    /// `WebPushKeys` check) that is not a point on P-256 is found only when the message is
    /// encrypted, on the connection's thread: it is the subscription's fault, so the row ends as
    /// the keys' other refusals do (`InvalidSubscriptionKeys`), nothing reaches the push service,
    /// and a good message beside it goes out.
    @Test("a p256dh off the curve ends failLocally(InvalidSubscriptionKeys) without a request; the message beside it is sent")
    func offCurveKey() async throws {
        let s = try await WebPushSetup.start()
        do {
            let good = try s.harness.server.makeWebPushSubscription()
            let bad = try s.harness.server.makeWebPushSubscription()
            var point = try #require(Base64URL.decode(bad.keys.p256dh))
            // (x, y xor 1) is on P-256 only if y xor 1 = p - y: never for a key drawn at random.
            point[64] ^= 1
            let keys = try WebPushKeys(p256dh: Base64URL.encode(point), auth: bad.keys.auth)
            let fields = WebPushFields(endpoint: try WebPushEndpoint.parse(bad.endpoint).get(), keys: keys, urgency: nil, topic: nil)
            let offCurve = PushRequest(tag: 2, deviceToken: bad.endpoint, payload: webPushPayload(2), expiration: nil, fields: .webPush(fields))
            try s.sender.submit([try webPushRequest(1, good), offCurve])
            await s.collector.wait(for: 2)
            let answers = s.byTag()
            #expect(answers[1]?.status == 201)
            let refused = try #require(answers[2])
            #expect(refused.status == nil && refused.outcome == .failLocally("InvalidSubscriptionKeys"),
                    "\(String(describing: refused.transportFailure))")
            #expect(refused.transportFailure?.message.contains("p256dh") == true)
            #expect(s.harness.server.webPushRequests().map(\.endpoint) == [good.endpoint])
        } catch {
            try await s.stop()
            throw error
        }
        try await s.stop()
    }

    /// TTL is the whole seconds left until `expires_at` when the request goes out (by the
    /// database's clock, 0 offset here); the bounds are generous: a busy machine may take
    /// seconds between building the request and sending it.
    @Test("TTL is the seconds left until the expiration when the request goes out")
    func ttlFromExpiration() async throws {
        let s = try await WebPushSetup.start()
        do {
            let subscription = try s.harness.server.makeWebPushSubscription()
            try s.sender.submit([try webPushRequest(1, subscription, expiration: Int64(Date().timeIntervalSince1970) + 600)])
            await s.collector.wait(for: 1)
            let ttl = try #require(s.harness.server.webPushRequests().first?.ttl.flatMap { Int($0) })
            #expect((500...600).contains(ttl))
        } catch {
            try await s.stop()
            throw error
        }
        try await s.stop()
    }

    /// No answer: the request's deadline ends it (outcome unknown, retried); a reset stream is a
    /// lost connection. Neither says anything the verdict table decides.
    @Test("no answer ends in a timeout, a reset stream in a lost connection: both retried as outcome unknown")
    func noAnswer() async throws {
        let s = try await WebPushSetup.start(requestTimeout: 2)
        do {
            let silent = try s.harness.server.makeWebPushSubscription()
            let reset = try s.harness.server.makeWebPushSubscription()
            s.harness.server.setWebPushRule(forEndpoint: silent.endpoint, .always(.noAnswer))
            s.harness.server.setWebPushRule(forEndpoint: reset.endpoint, .always(.reset))
            try s.sender.submit([try webPushRequest(1, silent), try webPushRequest(2, reset)])
            await s.collector.wait(for: 2)
            let answers = s.byTag()
            #expect(answers[1]?.status == nil && answers[1]?.outcome == .retry(.outcomeUnknown(.timeout)))
            #expect(answers[2]?.status == nil && answers[2]?.outcome == .retry(.outcomeUnknown(.connectionLost)))
        } catch {
            try await s.stop()
            throw error
        }
        try await s.stop()
    }
}
