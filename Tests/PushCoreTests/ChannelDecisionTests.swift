import PushCore
import Testing

/// ``ChannelDecision/decide``: what the channel loop writes back for each kind of answer.
@Suite("Channel decisions")
struct ChannelDecisionTests {
    let retry = RetryPolicy(baseSeconds: 1, capSeconds: 600, throttleDelaySeconds: 300)
    let hold = HoldPolicy(pauseBaseSeconds: 30, pauseCapSeconds: 900, outageBaseSeconds: 1, outageCapSeconds: 45)

    func decide(_ outcome: ChannelOutcome, _ operation: ChannelDecision.Operation = .create, created: String? = "aWQ=",
                attempts: Int = 1, max: Int = 10, holds: Int = 0) -> ChannelDecision {
        ChannelDecision.decide(outcome, operation: operation, createdID: created, attempts: attempts, maxAttempts: max,
                               holds: holds, retry: retry, hold: hold, unitRandom: { 0.5 })
    }

    @Test("done: created with Apple's id, or deleted; a create answered without an id is retried soon, counting the attempt")
    func done() {
        #expect(decide(.done) == .created(apnsChannelID: "aWQ="))
        #expect(decide(.done, .delete, created: nil) == .deleted)
        #expect(decide(.done, created: nil) == .retry(afterSeconds: 1.5, refund: false))
    }

    @Test("gone: a delete is done (already gone at Apple); a create fails. fail: failed for either")
    func goneAndFail() {
        #expect(decide(.gone, .delete) == .deleted)
        #expect(decide(.gone, .create) == .failed)
        #expect(decide(.fail(.cannotCreateChannelConfig)) == .failed)
        #expect(decide(.fail(.badChannelId), .delete) == .failed)
    }

    /// a reachable retry (429, an unknown reason) counts the attempt with the retry policy's backoff, and
    /// fails once attempts run out
    @Test("a reachable retry (429, an unknown reason) counts the attempt with the policy's backoff; fails once attempts run out")
    func reachableRetry() {
        #expect(decide(.retry(.tooManyRequests), attempts: 2) == .retry(afterSeconds: 300 + 0.5 * 2, refund: false))
        #expect(decide(.retry(.unknownReason("HTTP418")), attempts: 3) == .retry(afterSeconds: 1 + 0.5 * 4, refund: false))
        #expect(decide(.retry(.tooManyRequests), attempts: 10, max: 10) == .failed)
    }

    /// an outage (5xx, no answer) gives the attempt back and backs off as an outage probe, longer each time
    /// in a row, never failing the channel
    @Test("an outage (5xx, no answer) gives the attempt back and backs off longer each time, never failing the channel")
    func outage() {
        let first = decide(.retry(.serverError(nil)), attempts: 10, max: 10, holds: 0)
        let fourth = decide(.retry(.outcomeUnknown(.connect)), attempts: 10, max: 10, holds: 3)
        #expect(first == .retry(afterSeconds: 0.75, refund: true))
        #expect(fourth == .retry(afterSeconds: 6, refund: true))
        #expect(first.isHeldBack && fourth.isHeldBack)
    }

    /// a credential hold gives the attempt back and waits the credential pause's interval; retryNow goes
    /// again at once, attempt given back
    @Test("a credential hold gives the attempt back and waits the pause's interval; retryNow goes again at once")
    func holdAndRetryNow() {
        #expect(decide(.hold(.credential, reason: "FeatureNotEnabled"), holds: 1) == .retry(afterSeconds: 60, refund: true))
        #expect(decide(.retryNow(.renewProviderToken)) == .retry(afterSeconds: 0, refund: true))
        #expect(!decide(.retryNow(.renewProviderToken)).isHeldBack)
    }
}
