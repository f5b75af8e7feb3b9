import PushCore
import Testing

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(baseSeconds: 2, capSeconds: 60, throttleDelaySeconds: 300)

    @Test(arguments: [(1, 2.0), (2, 4.0), (3, 8.0), (5, 32.0), (6, 60.0), (40, 60.0), (10_000, 60.0)])
    func ceilingDoublesUpToTheCap(attempt: Int, expected: Double) {
        #expect(policy.ceiling(attempt: attempt) == expected)
    }

    @Test func fullJitterSpansZeroToCeiling() {
        let kind = Outcome.RetryKind.serverError(nil)
        #expect(policy.delay(attempt: 3, kind: kind) { 0 } == 0)
        #expect(policy.delay(attempt: 3, kind: kind) { 0.5 } == 4)
        #expect(policy.delay(attempt: 3, kind: kind) { 0.999 } < 8)
        #expect(policy.delay(attempt: 9, kind: kind) { 0.5 } == 30)
    }

    @Test func throttledTokensWaitMinutes() {
        #expect(policy.delay(attempt: 1, kind: .tooManyRequests) { 0 } == 300)
        #expect(policy.delay(attempt: 2, kind: .tooManyRequests) { 0.5 } == 302)
    }

    @Test func idleTimeoutRetriesSoon() {
        #expect(policy.delay(attempt: 8, kind: .idleTimeout) { 0.5 } == 1)
    }

    @Test func systemRandomStaysInBounds() {
        for attempt in 1...12 {
            let d = policy.delay(attempt: attempt, kind: .outcomeUnknown(.timeout))
            #expect(d >= 0 && d <= policy.ceiling(attempt: attempt))
        }
    }
}
