import PushCore
import Testing

/// What becomes of an FCM row after each verdict: one test per row of the FCM answers table (docs/faults.md).
@Suite struct DispositionFCMTests {
    let policy = RetryPolicy(baseSeconds: 1, capSeconds: 600, throttleDelaySeconds: 300)

    func decide(_ verdict: FCMVerdict, reason: String? = nil, attempts: Int = 1, max: Int = 10, last: String? = nil,
                random: Double = 0.5) -> Disposition {
        Disposition.decide(outcome: .fcm(verdict), reason: reason, attempts: attempts, maxAttempts: max, lastReason: last,
                           policy: policy, unitRandom: { random })
    }

    @Test("200: sent")
    func sent() {
        #expect(decide(.sent) == Disposition(status: .sent, reason: nil))
    }

    @Test("UNREGISTERED and a token-invalid INVALID_ARGUMENT: failed, the token recorded with FCM's code, no timestamp",
          arguments: [FCMErrorCode.unregistered, .invalidArgument])
    func invalidations(code: FCMErrorCode) {
        #expect(decide(.invalidateToken(code)) ==
                Disposition(status: .failed, reason: code.rawValue, invalidation: .init(reason: code.rawValue, atMilliseconds: nil)))
    }

    @Test("another INVALID_ARGUMENT and SENDER_ID_MISMATCH: failed, never retried, nothing invalidated",
          arguments: [FCMErrorCode.invalidArgument, .senderIDMismatch])
    func failures(code: FCMErrorCode) {
        #expect(decide(.fail(code), attempts: 1, max: 10) == Disposition(status: .failed, reason: code.rawValue))
        #expect(!Outcome.fcm(.fail(code)).isBurstSuspect || code == .senderIDMismatch)
    }

    @Test("UNAVAILABLE / INTERNAL: retried after the backoff, and never sooner than Retry-After; failed at max_attempts")
    func serverErrors() {
        // Backoff alone: 1 + 0.5 × min(600, 2) = 2 s.
        #expect(decide(.retry(.serverError(.unavailable), retryAfter: nil), attempts: 2) ==
                Disposition(status: .retrying, reason: "UNAVAILABLE", retryDelay: 2))
        // Retry-After longer than the backoff wins.
        #expect(decide(.retry(.serverError(.internalError), retryAfter: 30), attempts: 2) ==
                Disposition(status: .retrying, reason: "INTERNAL", retryDelay: 30))
        // Shorter than the backoff: the backoff stands.
        #expect(decide(.retry(.serverError(.unavailable), retryAfter: 1), attempts: 2).retryDelay == 2)
        #expect(decide(.retry(.serverError(.unavailable), retryAfter: 30), attempts: 10, max: 10) ==
                Disposition(status: .failed, reason: "UNAVAILABLE"))
        // An unnamed 5xx keeps the local reason passed in.
        #expect(decide(.retry(.serverError(nil), retryAfter: nil), reason: "HTTP502").reason == "HTTP502")
        #expect(Outcome.fcm(.retry(.serverError(.unavailable), retryAfter: nil)).healthSignal == .serverFailure)
        #expect(Outcome.fcm(.retry(.serverError(.unavailable), retryAfter: nil)).retryLabel == "server_error")
    }

    @Test("an unknown code: three attempts whatever max_attempts says")
    func unknown() {
        #expect(decide(.retry(.unknown("NEW_THING"), retryAfter: nil), attempts: 2).status == .retrying)
        #expect(decide(.retry(.unknown("NEW_THING"), retryAfter: nil), attempts: 3) == Disposition(status: .failed, reason: "NEW_THING"))
    }

    @Test("QUOTA_EXCEEDED: waits Retry-After with the attempt given back, even on the last attempt")
    func quota() {
        #expect(decide(.backOffCredential(seconds: 120), attempts: 10, max: 10) ==
                Disposition(status: .retrying, reason: "QUOTA_EXCEEDED", retryDelay: 120, refundsAttempt: true))
        // Never sooner than the retry base.
        #expect(decide(.backOffCredential(seconds: 0)).retryDelay == 1)
        #expect(Outcome.fcm(.backOffCredential(seconds: 5)).retryLabel == "quota")
    }

    @Test("UNAUTHENTICATED that reaches the worker: resent soon with the attempt back; a repeat counts")
    func unauthenticated() {
        #expect(decide(.refreshAccessToken, random: 0.25) ==
                Disposition(status: .retrying, reason: "UNAUTHENTICATED", retryDelay: 1.25, refundsAttempt: true))
        #expect(decide(.refreshAccessToken, attempts: 3, last: "UNAUTHENTICATED", random: 0) ==
                Disposition(status: .retrying, reason: "UNAUTHENTICATED", retryDelay: 1))
        #expect(decide(.refreshAccessToken, attempts: 10, max: 10, last: "UNAUTHENTICATED") ==
                Disposition(status: .failed, reason: "UNAUTHENTICATED"))
    }

    @Test("THIRD_PARTY_AUTH_ERROR, PERMISSION_DENIED, a refused exchange: the row waits with its attempt back",
          arguments: [FCMErrorCode.thirdPartyAuthError, .permissionDenied, .unauthenticated])
    func pause(code: FCMErrorCode) {
        #expect(decide(.pauseCredential(code, message: "fix it"), attempts: 10, max: 10, random: 0) ==
                Disposition(status: .retrying, reason: code.rawValue, retryDelay: 1, refundsAttempt: true))
        #expect(Outcome.fcm(.pauseCredential(code, message: "x")).healthSignal == .none)
    }
}

@Suite struct DeciderFCMTests {
    static let e = Endpoint.fcm("default")
    let policy = RetryPolicy(baseSeconds: 1, capSeconds: 600, throttleDelaySeconds: 300)

    func answer(_ row: Int64, _ verdict: FCMVerdict, attempts: Int = 1, probe: Bool = false, endpoint: Endpoint = e) -> Answer {
        Answer(row: row, endpoint: endpoint, attempts: attempts, maxAttempts: 10, lastReason: nil, isProbe: probe,
               outcome: .fcm(verdict), reasonText: nil, isHTTPAnswer: true)
    }

    @Test("an FCM endpoint and the APNs endpoint of the same name are different endpoints, keyed by channel")
    func endpoints() {
        let apns = Endpoint(credential: "default", environment: .production)
        #expect(Self.e != apns)
        #expect(Self.e.channel == "fcm" && apns.channel == "production")
        #expect(Endpoint(credential: "default", channel: "fcm") == Self.e)
        #expect(Endpoint(credential: "default", channel: "development") == Endpoint(credential: "default", environment: .development))
        #expect(Endpoint(credential: "default", channel: "staging") == nil)
        #expect(Endpoint(credential: "x", environment: .development, provider: .fcm).environment == .production)
    }

    @Test("QUOTA_EXCEEDED holds the whole credential for Retry-After seconds; its rows wait as long, attempts back")
    func quota() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let out = d.decide([answer(1, .backOffCredential(seconds: 90)), answer(2, .backOffCredential(seconds: 90), attempts: 10)])
        #expect(out.dispositions.allSatisfy { $0.status == .retrying && $0.refundsAttempt && $0.retryDelay == 90 })
        #expect(out.holds.count == 1)
        #expect(out.holds.first?.endpoint == Self.e)
        #expect(out.holds.first?.reason == "QUOTA_EXCEEDED")
        #expect(out.holds.first?.seconds == 90)
        #expect(out.holds.first?.message.contains("quota") == true)
        #expect(out.resumed.isEmpty)
    }

    @Test("THIRD_PARTY_AUTH_ERROR / PERMISSION_DENIED / a refused exchange hold the credential with FCM's message")
    func pause() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let verdict = FCMVerdict.classify(status: 403, error: FCMErrorBody(code: .permissionDenied, message: nil), retryAfter: nil)
        let out = d.decide([answer(1, verdict)])
        #expect(out.holds.map(\.kind) == [.credential])
        #expect(out.holds.first?.reason == "PERMISSION_DENIED")
        #expect(out.holds.first?.message.contains("Firebase Cloud Messaging API Admin") == true)
        #expect(out.holds.first?.seconds == nil)
        #expect(out.dispositions[0].refundsAttempt)
    }

    @Test("UNAVAILABLE from a down FCM endpoint gives the attempt back and holds it as an outage, named FCM")
    func outage() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let u = FCMVerdict.retry(.serverError(.unavailable), retryAfter: nil)
        let out = d.decide([answer(1, u), answer(2, u), answer(3, u)])
        #expect(d.isDown(Self.e))
        #expect(out.holds.map(\.kind) == [.outage])
        #expect(out.holds.first?.message.hasPrefix("FCM is unreachable") == true)
        #expect(out.dispositions.allSatisfy { $0.refundsAttempt })
    }

    @Test("a burst of SENDER_ID_MISMATCH holds the credential instead of failing every row")
    func senderIDBurst() throws {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        var row: Int64 = 0
        var last: Decisions?
        for _ in 0..<30 {
            row += 1
            last = d.decide([answer(row, .fail(.senderIDMismatch))])
        }
        #expect(d.isBurst(Self.e))
        let final = try #require(last)
        #expect(final.dispositions[0].status == .retrying && final.dispositions[0].refundsAttempt)
        #expect(final.holds.map(\.kind) == [.burst])
        #expect(final.holds.first?.reason == "SENDER_ID_MISMATCH_BURST")
        #expect(final.holds.first?.message.contains("Firebase project") == true)
    }

    @Test("one SENDER_ID_MISMATCH among many 200s fails that row")
    func singleMismatch() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        var row: Int64 = 0
        for _ in 0..<40 {
            row += 1
            _ = d.decide([answer(row, .sent)])
        }
        let out = d.decide([answer(999, .fail(.senderIDMismatch))])
        #expect(out.dispositions[0] == Disposition(status: .failed, reason: "SENDER_ID_MISMATCH"))
        #expect(out.holds.isEmpty)
    }
}
