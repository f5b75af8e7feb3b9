import PushCore
import Testing

@Suite struct DispositionTests {
    let policy = RetryPolicy(baseSeconds: 1, capSeconds: 600, throttleDelaySeconds: 300)

    func decide(_ outcome: Outcome, reason: String? = nil, attempts: Int = 1, max: Int = 10, last: String? = nil,
                random: Double = 0.5) -> Disposition {
        Disposition.decide(outcome: outcome, reason: reason, attempts: attempts, maxAttempts: max, lastReason: last,
                           policy: policy, unitRandom: { random })
    }

    @Test("final outcomes: sent, permanent failure, invalidation with the 410 time")
    func finals() {
        #expect(decide(.sent) == Disposition(status: .sent, reason: nil))
        #expect(decide(.fail(.badTopic)) == Disposition(status: .failed, reason: "BadTopic"))
        #expect(decide(.invalidateToken(reason: .unregistered, at: 123)) ==
                Disposition(status: .failed, reason: "Unregistered", invalidation: .init(reason: "Unregistered", atMilliseconds: 123)))
        #expect(decide(.invalidateToken(reason: .badDeviceToken, at: nil)).invalidation?.atMilliseconds == nil)
    }

    @Test("expired while waiting for a stream: expired, attempt given back, last reason kept")
    func expiredBeforeSending() {
        #expect(decide(.expiredBeforeSending, last: "InternalServerError") ==
                Disposition(status: .expired, reason: "InternalServerError", refundsAttempt: true))
    }

    @Test("retries wait the base plus full jitter, then fail once max_attempts is used up")
    func retries() {
        let second = decide(.retry(.serverError(.internalServerError)), attempts: 2, random: 0.5)
        #expect(second == Disposition(status: .retrying, reason: "InternalServerError", retryDelay: 2.0))  // 1 + 0.5 × min(600, 1 × 2^1)
        let last = decide(.retry(.serverError(.internalServerError)), attempts: 10, max: 10)
        #expect(last == Disposition(status: .failed, reason: "InternalServerError"))
        // A transport failure records the local reason passed in.
        #expect(decide(.retry(.outcomeUnknown(.timeout)), reason: "TransportTimeout", attempts: 1) ==
                Disposition(status: .retrying, reason: "TransportTimeout", retryDelay: 1.5))
        #expect(decide(.retry(.outcomeUnknown(.timeout)), reason: "TransportTimeout", attempts: 10, max: 10).status == .failed)
        // An unknown reason gets 3 attempts whatever max_attempts says.
        #expect(decide(.retry(.unknownReason("NewThing")), attempts: 3, max: 10).status == .failed)
        #expect(decide(.retry(.unknownReason("NewThing")), attempts: 2, max: 10).status == .retrying)
        // 429 waits the throttle delay on top of the jitter and throttles the token.
        #expect(decide(.retry(.tooManyRequests), attempts: 1, random: 0) ==
                Disposition(status: .retrying, reason: "TooManyRequests", retryDelay: 300, throttlesToken: true))
    }

    @Test("a connection or TLS handshake that never came up never counts, even on the last attempt",
          arguments: [TransportFailure.Kind.connect, .tls])
    func deliveredNothing(kind: TransportFailure.Kind) {
        let d = decide(.retry(.outcomeUnknown(kind)), reason: "X", attempts: 10, max: 10, random: 0)
        #expect(d == Disposition(status: .retrying, reason: "X", retryDelay: 1, refundsAttempt: true))
    }

    /// connection-level failures give the attempt back the first time and wait 1-2 s; a repeat counts and
    /// ends the row at max_attempts
    @Test("connection-level failures give the attempt back once and wait 1-2 s; a repeat counts, ending at max_attempts")
    func retryNow() {
        let renew = decide(.retryNow(.renewProviderToken), random: 0.25)
        #expect(renew == Disposition(status: .retrying, reason: "ExpiredProviderToken", retryDelay: 1.25, refundsAttempt: true))
        #expect(decide(.retryNow(.freshConnection(.tooManyProviderTokenUpdates))).reason == "TooManyProviderTokenUpdates")
        let repeatRenew = decide(.retryNow(.renewProviderToken), attempts: 3, last: "ExpiredProviderToken", random: 0)
        #expect(repeatRenew == Disposition(status: .retrying, reason: "ExpiredProviderToken", retryDelay: 1))
        #expect(decide(.retryNow(.freshConnection(.shutdown)), attempts: 10, max: 10, last: "Shutdown") ==
                Disposition(status: .failed, reason: "Shutdown"))
    }

    @Test("a credential pause gives the attempt back even on the last attempt")
    func pause() {
        #expect(decide(.pauseCredential("InvalidProviderToken"), attempts: 10, max: 10, random: 0) ==
                Disposition(status: .retrying, reason: "InvalidProviderToken", retryDelay: 1, refundsAttempt: true))
    }

    /// Every outcome, at every attempt: a row that keeps its attempt and retries is below
    /// max_attempts (so the claim never takes it past), and no resend comes sooner than the base.
    @Test("invariants over every outcome and attempt: never past max_attempts, never a resend under the base")
    func invariants() {
        let outcomes: [Outcome] = [
            .sent, .fail(.badTopic), .invalidateToken(reason: .unregistered, at: nil), .expiredBeforeSending,
            .retry(.serverError(nil)), .retry(.outcomeUnknown(.timeout)), .retry(.outcomeUnknown(.connect)),
            .retry(.outcomeUnknown(.tls)), .retry(.outcomeUnknown(.connectionLost)), .retry(.tooManyRequests),
            .retry(.idleTimeout), .retry(.unknownReason("X")), .retryNow(.renewProviderToken),
            .retryNow(.freshConnection(.shutdown)), .pauseCredential("InvalidProviderToken"),
            .fcm(.sent), .fcm(.invalidateToken(.unregistered)), .fcm(.fail(.invalidArgument)),
            .fcm(.retry(.serverError(.unavailable), retryAfter: nil)), .fcm(.retry(.serverError(nil), retryAfter: 0)),
            .fcm(.retry(.unknown("X"), retryAfter: 30)), .fcm(.backOffCredential(seconds: 0)), .fcm(.refreshAccessToken),
            .fcm(.pauseCredential(.permissionDenied, message: "m")),
        ]
        for outcome in outcomes {
            for max in 1...4 {
                for attempts in 1...max {
                    for last in [nil, "ExpiredProviderToken", "Shutdown", "UNAUTHENTICATED"] as [String?] {
                        for random in [0.0, 0.999] {
                            let d = decide(outcome, reason: "R", attempts: attempts, max: max, last: last, random: random)
                            if d.status == .retrying {
                                #expect(d.refundsAttempt || attempts < max, "\(outcome) at \(attempts)/\(max)")
                                #expect(d.retryDelay >= policy.baseSeconds, "\(outcome) waits \(d.retryDelay)")
                            }
                        }
                    }
                }
            }
        }
    }
}
