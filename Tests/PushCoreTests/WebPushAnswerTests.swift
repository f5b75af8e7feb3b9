import PushCore
import Testing

/// Issue 47's answers table, row for row: the verdict of each answer and what becomes of the row
/// (the same `Disposition` vocabulary APNs' and FCM's answers end in).
@Suite struct WebPushAnswerTests {
    let policy = RetryPolicy(baseSeconds: 1, capSeconds: 600, throttleDelaySeconds: 300)

    func decide(_ verdict: WebPushVerdict, attempts: Int = 1, max: Int = 10, last: String? = nil) -> Disposition {
        Disposition.decide(webPush: verdict, reason: nil, attempts: attempts, maxAttempts: max, lastReason: last,
                           policy: policy, unitRandom: { 0.5 })
    }

    @Test("2xx: sent", arguments: [200, 201, 202, 204, 299])
    func sent(status: Int) {
        let verdict = WebPushVerdict.classify(status: status, retryAfter: nil)
        #expect(verdict == .sent)
        #expect(decide(verdict) == Disposition(status: .sent, reason: nil))
        #expect(verdict.healthSignal == .reachable)
    }

    @Test("404, 410: failed NotFound / Gone, the exact endpoint invalidated", arguments: [(404, "NotFound"), (410, "Gone")])
    func invalidated(status: Int, reason: String) {
        let verdict = WebPushVerdict.classify(status: status, retryAfter: nil)
        #expect(verdict.reasonText == reason)
        #expect(decide(verdict) == Disposition(status: .failed, reason: reason, invalidation: .init(reason: reason, atMilliseconds: nil)))
        #expect(!verdict.isBurstSuspect)
    }

    @Test("413, 400: failed PayloadTooLarge / BadRequest, never retried, not invalidated",
          arguments: [(413, "PayloadTooLarge"), (400, "BadRequest")])
    func failed(status: Int, reason: String) {
        let verdict = WebPushVerdict.classify(status: status, retryAfter: 30)
        // First attempt of ten: still failed, with nothing invalidated.
        #expect(decide(verdict, attempts: 1, max: 10) == Disposition(status: .failed, reason: reason))
    }

    @Test("429: retried no sooner than Retry-After, only that subscription slowed, the attempt not counted")
    func tooManyRequests() {
        let verdict = WebPushVerdict.classify(status: 429, retryAfter: 120)
        #expect(verdict == .throttleSubscription(seconds: 120))
        #expect(decide(verdict, attempts: 10, max: 10) ==
                Disposition(status: .retrying, reason: "TooManyRequests", retryDelay: 120, refundsAttempt: true, throttlesToken: true))
                // Without Retry-After: a minute.
        #expect(WebPushVerdict.classify(status: 429, retryAfter: nil) == .throttleSubscription(seconds: 60))
    }

    @Test("Retry-After: delta-seconds or an HTTP-date, from the answer's time")
    func retryAfterForms() {
        let now: Int64 = 1_792_000_000
        #expect(WebPushAnswer.retryAfterSeconds("90", now: now) == 90)
        #expect(WebPushAnswer.retryAfterSeconds("Wed, 15 Oct 2026 07:28:00 GMT", now: 1_792_049_200) == 80)
        #expect(WebPushAnswer.retryAfterSeconds("soon", now: now) == nil)
        let verdict = WebPushAnswer(retryAfterSeconds: WebPushAnswer.retryAfterSeconds("Wed, 15 Oct 2026 07:28:00 GMT", now: 1_792_049_200))
            .verdict(status: 429)
        #expect(verdict == .throttleSubscription(seconds: 80))
    }

    @Test("500, 503: retried with the usual backoff, never sooner than Retry-After; failed at max_attempts",
          arguments: [500, 503, 502])
    func serverErrors(status: Int) {
        // Backoff alone: 1 + 0.5 × min(600, 2) = 2 s.
        #expect(decide(WebPushVerdict.classify(status: status, retryAfter: nil), attempts: 2) ==
                Disposition(status: .retrying, reason: "HTTP\(status)", retryDelay: 2))
        #expect(decide(WebPushVerdict.classify(status: status, retryAfter: 45), attempts: 2) ==
                Disposition(status: .retrying, reason: "HTTP\(status)", retryDelay: 45))
        #expect(decide(WebPushVerdict.classify(status: status, retryAfter: 45), attempts: 10, max: 10) ==
                Disposition(status: .failed, reason: "HTTP\(status)"))
        #expect(WebPushVerdict.classify(status: status, retryAfter: nil).healthSignal == .serverFailure)
    }

    @Test("no answer: the transport failure decides, as for APNs and FCM (retried, outcome unknown)")
    func noAnswer() {
        #expect(WebPushAnswer().verdict(status: nil) == nil)
        #expect(Outcome.classify(TransportFailure(kind: .timeout, message: "t")) == .retry(.outcomeUnknown(.timeout)))
    }

    @Test("3xx: never followed, failed Redirect", arguments: [301, 302, 303, 307, 308])
    func redirects(status: Int) {
        let verdict = WebPushVerdict.classify(status: status, retryAfter: nil)
        #expect(verdict == .fail(.redirect))
        #expect(decide(verdict) == Disposition(status: .failed, reason: "Redirect"))
    }

    @Test("401, 403: the credential held, the row waiting with its attempt given back",
          arguments: [(401, "Unauthorized"), (403, "Forbidden")])
    func credentialHeld(status: Int, reason: String) {
        let verdict = WebPushAnswer(reason: "BadJwtToken").verdict(status: status)!
        guard case .holdCredential(let r, let message) = verdict else { Issue.record("\(verdict)"); return }
        #expect(r == reason)
        #expect(message.contains("BadJwtToken") && message.contains("subject"))
        let d = decide(verdict, attempts: 10, max: 10)
        #expect(d.status == .retrying && d.refundsAttempt && d.reason == reason)
        #expect(verdict.healthSignal == .none)
    }

    @Test("a refused endpoint: failed EndpointNotAllowed without an answer, nothing said about the service")
    func endpointRefused() {
        let refusal = WebPushEndpointRefusal(.address, "https://x.example resolves to 10.0.0.0/8")
        let verdict = WebPushAnswer(endpointRefusal: refusal).verdict(status: nil)!
        #expect(decide(verdict) == Disposition(status: .failed, reason: "EndpointNotAllowed"))
        #expect(verdict.healthSignal == .none)
    }

    @Test("a status outside the table: retried three times at most, as an unknown reason is", arguments: [418, 422, 100])
    func unknownStatus(status: Int) {
        let verdict = WebPushVerdict.classify(status: status, retryAfter: nil)
        #expect(verdict == .retry(.unknown("HTTP\(status)"), retryAfter: nil))
        #expect(decide(verdict, attempts: 2).status == .retrying)
        #expect(decide(verdict, attempts: 3) == Disposition(status: .failed, reason: "HTTP\(status)"))
    }
}

/// What goes out for a row: TTL, Urgency, Topic and the payload limit.
@Suite struct WebPushHeadersTests {
    let now: Int64 = 1_800_000_000_000

    @Test("TTL: whole seconds left when the request goes out, never negative; NULL gives 28 days")
    func ttl() throws {
        func ttl(_ expiresAt: Int64?) throws -> Int64 {
            try WebPushHeaders.make(expiresAt: expiresAt, now: now, priority: nil, collapseID: nil).get().ttl
        }
        #expect(try ttl(nil) == 2_419_200)
        #expect(try ttl(now + 60_000) == 60)
        #expect(try ttl(now + 59_999) == 59)
        #expect(try ttl(now + 999) == 0)
        #expect(try ttl(now - 5_000) == 0)
        #expect(try ttl(now + 40 * 86_400_000) == 40 * 86_400)
    }

    @Test("Urgency from priority: 10 high, 5 normal, 1 low, NULL none; another value refused",
          arguments: [(10, "high"), (5, "normal"), (1, "low")])
    func urgency(priority: Int, value: String) throws {
        let headers = try WebPushHeaders.make(expiresAt: nil, now: now, priority: priority, collapseID: nil).get()
        #expect(headers.urgency?.rawValue == value)
        #expect(headers.fields.map(\.name) == ["TTL", "Urgency"])
        #expect(try WebPushHeaders.make(expiresAt: nil, now: now, priority: nil, collapseID: nil).get().fields.map(\.name) == ["TTL"])
        guard case .failure(let refusal) = WebPushHeaders.make(expiresAt: nil, now: now, priority: 7, collapseID: nil) else {
            Issue.record("priority 7 accepted"); return
        }
        #expect(refusal.reason == "InvalidPriority")
    }

    @Test("Topic: collapse_id verbatim when 1-32 of A-Z a-z 0-9 - _, else refused",
          arguments: ["a", "news-2026_11", String(repeating: "Z", count: 32)])
    func topicAccepted(topic: String) throws {
        let headers = try WebPushHeaders.make(expiresAt: nil, now: now, priority: nil, collapseID: topic).get()
        #expect(headers.topic == topic)
        #expect(headers.fields.last! == (name: "Topic", value: topic))
    }

    @Test("Topic refused: empty, 33 characters, a space, a dot, padding, non-ASCII",
          arguments: ["", String(repeating: "a", count: 33), "two words", "a.b", "abc=", "café", "a\r\nb"])
    func topicRefused(topic: String) {
        guard case .failure(let refusal) = WebPushHeaders.make(expiresAt: nil, now: now, priority: nil, collapseID: topic) else {
            Issue.record("accepted '\(topic)'"); return
        }
        #expect(refusal.reason == "InvalidTopic")
        #expect(!topic.isEmpty ? !refusal.message.contains(topic) : true)
    }

    @Test("payload: 3 993 bytes pass, 3 994 are refused PayloadTooLarge, never truncated")
    func payloadLimit() throws {
        #expect(WebPushHeaders.payloadRefusal(byteCount: 0) == nil)
        #expect(WebPushHeaders.payloadRefusal(byteCount: 3993) == nil)
        let refusal = try #require(WebPushHeaders.payloadRefusal(byteCount: 3994))
        #expect(refusal.reason == "PayloadTooLarge" && refusal.message.contains("3994"))
    }

    @Test("subscription keys: a 65-byte uncompressed point and 16 bytes, else refused naming the key")
    func keys() throws {
        let point = Base64URL.encode([4] + [UInt8](repeating: 7, count: 64))
        let auth = Base64URL.encode([UInt8](repeating: 1, count: 16))
        let keys = try WebPushKeys(p256dh: point, auth: auth)
        #expect(keys.p256dh.count == 65 && keys.auth.count == 16)
        #expect(try WebPushKeys(p256dh: keys.p256dh, auth: keys.auth) == keys)
        #expect(throws: PushRequest.Refusal.self) { try WebPushKeys(p256dh: Array(keys.p256dh.dropLast()), auth: keys.auth) }
        #expect(throws: PushRequest.Refusal.self) { try WebPushKeys(p256dh: keys.p256dh, auth: keys.auth + [0]) }
        let compressed = Base64URL.encode([2] + [UInt8](repeating: 7, count: 32))
        for (p, a, named) in [(compressed, auth, "p256dh"), (point, Base64URL.encode([1, 2, 3]), "auth"), ("***", auth, "p256dh")] {
            let error = try #require(throws: PushRequest.Refusal.self) { try WebPushKeys(p256dh: p, auth: a) }
            #expect(error.reason == "InvalidSubscriptionKeys" && error.message.contains(named))
        }
    }
}

/// VAPID's claims: aud the endpoint's origin, exp at most a day ahead, a subject Apple accepts,
/// one token per origin reused until shortly before it expires.
@Suite struct VAPIDClaimsTests {
    func origin(_ endpoint: String) -> WebPushOrigin {
        guard case .success(let e) = WebPushEndpoint.parse(endpoint) else { fatalError(endpoint) }
        return e.origin
    }

    @Test("claims: aud the endpoint's origin, exp 12 h after issue and never more than 24 h")
    func claims() throws {
        let subject = try VAPIDSubject("mailto:push@example.com")
        let c = VAPIDClaims(audience: origin("https://Updates.Push.Services.Mozilla.com/wpush/v2/abc"), subject: subject, issuedAt: 1_800_000_000)
        #expect(c.claimsJSON == #"{"aud":"https://updates.push.services.mozilla.com","exp":1800043200,"sub":"mailto:push@example.com"}"#)
        #expect(Base64URL.decode(c.signingInput.split(separator: ".")[0]).map { String(decoding: $0, as: UTF8.self) } == #"{"typ":"JWT","alg":"ES256"}"#)
        #expect(VAPIDClaims(audience: origin("https://p.example:8443/x"), subject: subject, issuedAt: 0).claimsJSON.contains(#""aud":"https://p.example:8443""#))
        #expect(VAPIDClaims(audience: c.audience, subject: subject, issuedAt: 100, lifetime: 7 * 86_400).expiresAt == 100 + 86_400)
        #expect(c.token(rawSignature: [1, 2, 3]).hasPrefix(c.signingInput + "."))
    }

    @Test("subjects: mailto: and https: URIs of public domains", arguments: ["mailto:push@example.com", "https://example.com",
                                                                             "https://push.example.com:8443/contact", "mailto:ops+push@mail.example.co.uk"])
    func subjectsAccepted(text: String) throws {
        #expect(try VAPIDSubject(text).text == text)
    }

    @Test("subjects refused with the reason (Apple answers 403 BadJwtToken): localhost, .local, other schemes",
          arguments: ["mailto:push@localhost", "https://localhost", "https://localhost:8443/x", "mailto:me@mac.local",
                      "https://app.local", "mailto:a@b.invalid", "mailto:a@x.localhost", "mailto:a@myhost",
                      "mailto:a@127.0.0.1", "https://[::1]"])
    func subjectsRefusedForApple(text: String) throws {
        let error = try #require(throws: VAPIDSubjectError.self) { try VAPIDSubject(text) }
        #expect(error.message.contains("BadJwtToken") && error.message.contains("PUSHQ_WEBPUSH_VAPID_SUBJECT"))
    }

    @Test("subjects refused for their form: no scheme, http:, no user, quotes, empty",
          arguments: ["push@example.com", "http://example.com", "mailto:example.com", "mailto:@example.com",
                      "mailto:a\"b@example.com", "", "https://u@example.com"])
    func subjectsRefusedForForm(text: String) throws {
        let error = try #require(throws: VAPIDSubjectError.self) { try VAPIDSubject(text) }
        #expect(error.message.contains("PUSHQ_WEBPUSH_VAPID_SUBJECT"))
    }

    @Test("a token is reused until an hour before its exp, and replaced when the clock went back")
    func reuse() {
        let issued: Int64 = 1_800_000_000
        let exp = issued + VAPIDClaims.lifetime
        #expect(!VAPIDClaims.needsReplacing(issuedAt: issued, expiresAt: exp, now: issued))
        #expect(!VAPIDClaims.needsReplacing(issuedAt: issued, expiresAt: exp, now: exp - 3601))
        #expect(VAPIDClaims.needsReplacing(issuedAt: issued, expiresAt: exp, now: exp - 3600))
        #expect(VAPIDClaims.needsReplacing(issuedAt: issued, expiresAt: exp, now: exp + 10))
        #expect(VAPIDClaims.needsReplacing(issuedAt: issued, expiresAt: exp, now: issued - 1))
    }
}
