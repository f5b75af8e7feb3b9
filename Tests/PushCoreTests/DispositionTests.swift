import PushCore
import Testing

@Suite struct DispositionTests {
    let policy = RetryPolicy(baseSeconds: 1, capSeconds: 600, throttleDelaySeconds: 300)

    func decide(_ outcome: Outcome, reason: String? = nil, attempts: Int = 1, max: Int = 10, random: Double = 0.5) -> Disposition {
        Disposition.decide(outcome: outcome, reason: reason, attempts: attempts, maxAttempts: max, policy: policy, unitRandom: { random })
    }

    @Test("final outcomes: sent, permanent failure, invalidation with the 410 time")
    func finals() {
        #expect(decide(.sent) == Disposition(status: .sent, reason: nil))
        #expect(decide(.fail(.badTopic)) == Disposition(status: .failed, reason: "BadTopic"))
        #expect(decide(.invalidateToken(reason: .unregistered, at: 123)) ==
                Disposition(status: .failed, reason: "Unregistered", invalidation: .init(reason: "Unregistered", atMilliseconds: 123)))
        #expect(decide(.invalidateToken(reason: .badDeviceToken, at: nil)).invalidation?.atMilliseconds == nil)
    }

    @Test("retries back off with full jitter, then fail once max_attempts is used up")
    func retries() {
        let second = decide(.retry(.serverError(.internalServerError)), attempts: 2, random: 0.5)
        #expect(second.status == .retrying)
        #expect(second.reason == "InternalServerError")
        #expect(second.retryDelay == 1.0)  // 0.5 × min(600, 1 × 2^1)
        #expect(!second.refundsAttempt)
        let last = decide(.retry(.serverError(.internalServerError)), attempts: 10, max: 10)
        #expect(last == Disposition(status: .failed, reason: "InternalServerError"))
        // A transport failure records the local reason passed in.
        let unknown = decide(.retry(.outcomeUnknown(.timeout)), reason: "TransportTimeout", attempts: 1)
        #expect(unknown.reason == "TransportTimeout")
        #expect(unknown.status == .retrying)
        // An unknown reason gets 3 attempts whatever max_attempts says.
        #expect(decide(.retry(.unknownReason("NewThing")), attempts: 3, max: 10).status == .failed)
        #expect(decide(.retry(.unknownReason("NewThing")), attempts: 2, max: 10).status == .retrying)
        // 429 waits the throttle delay on top of the jitter: only that token slows down.
        #expect(decide(.retry(.tooManyRequests), attempts: 1, random: 0).retryDelay == 300)
    }

    @Test("connection-level failures and credential pauses give the attempt back")
    func refunds() {
        let renew = decide(.retryNow(.renewProviderToken))
        #expect(renew == Disposition(status: .retrying, reason: "ExpiredProviderToken", retryDelay: 0, refundsAttempt: true))
        #expect(decide(.retryNow(.freshConnection(.tooManyProviderTokenUpdates))).reason == "TooManyProviderTokenUpdates")
        let pause = decide(.pauseCredential("InvalidProviderToken"), attempts: 10, max: 10)
        #expect(pause == Disposition(status: .retrying, reason: "InvalidProviderToken", refundsAttempt: true, pausesCredential: true))
    }

    @Test("burst detector: more than half of at least 20 recent answers")
    func burst() {
        var d = BurstDetector(capacity: 32, minimumAnswers: 20)
        for _ in 0..<19 { d.record(suspect: true) }
        #expect(!d.canJudge)
        #expect(!d.isBurst)
        d.record(suspect: true)
        #expect(d.isBurst)
        d.reset()
        #expect(d.count == 0)
        // 10 bad of 20: exactly half is not a burst; 11 of 21 is.
        for i in 0..<20 { d.record(suspect: i % 2 == 0) }
        #expect(!d.isBurst)
        d.record(suspect: true)
        #expect(d.isBurst)
        // Old answers roll out of the window: 32 good answers clear it.
        for _ in 0..<32 { d.record(suspect: false) }
        #expect(!d.isBurst)
        #expect(d.count == 32)
    }
}
