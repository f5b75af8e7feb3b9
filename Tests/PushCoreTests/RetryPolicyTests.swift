import PushCore
import Testing

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(baseSeconds: 2, capSeconds: 60, throttleDelaySeconds: 300)

    @Test(arguments: [(1, 2.0), (2, 4.0), (3, 8.0), (5, 32.0), (6, 60.0), (40, 60.0), (10_000, 60.0)])
    func ceilingDoublesUpToTheCap(attempt: Int, expected: Double) {
        #expect(policy.ceiling(attempt: attempt) == expected)
    }

    @Test("the base is a floor; full jitter spans the ceiling above it")
    func floorPlusFullJitter() {
        let kind = Outcome.RetryKind.serverError(nil)
        #expect(policy.delay(attempt: 3, kind: kind) { 0 } == 2)
        #expect(policy.delay(attempt: 3, kind: kind) { 0.5 } == 6)
        #expect(policy.delay(attempt: 3, kind: kind) { 0.999 } < 10)
        #expect(policy.delay(attempt: 9, kind: kind) { 0.5 } == 32)
    }

    @Test func throttledTokensWaitMinutes() {
        #expect(policy.delay(attempt: 1, kind: .tooManyRequests) { 0 } == 300)
        #expect(policy.delay(attempt: 2, kind: .tooManyRequests) { 0.5 } == 302)
    }

    @Test("an idle timeout, and every resend that is not the notification's fault, waits base to twice the base")
    func soon() {
        #expect(policy.delay(attempt: 8, kind: .idleTimeout) { 0.5 } == 3)
        #expect(policy.soonDelay { 0 } == 2)
        #expect(policy.soonDelay { 1 } == 4)
    }

    @Test func systemRandomStaysInBounds() {
        var g = SystemRandomNumberGenerator()
        for attempt in 1...12 {
            let d = policy.delay(attempt: attempt, kind: .outcomeUnknown(.timeout)) { Double.random(in: 0..<1, using: &g) }
            #expect(d >= policy.baseSeconds && d <= policy.baseSeconds + policy.ceiling(attempt: attempt))
        }
    }
}
