import PushCore
import Testing

/// The token bucket that paces a capped lane's or credential's starts, on a clock the test drives.
@Suite("Token bucket")
struct TokenBucketTests {
    static let second: Int64 = 1_000_000_000

    @Test("starts full with its burst, then gives its rate a second and never keeps more than the burst")
    func rateAndBurst() {
        var bucket = TokenBucket(rate: 50, burstSeconds: 0.1, now: 0)
        let atStart = bucket.available(now: 0)
        let tookBurst = bucket.take(5, now: 0)
        let tookMore = bucket.take(now: 0)
        #expect(atStart == 5 && tookBurst && !tookMore)
        let afterIdle = bucket.available(now: Self.second)
        #expect(afterIdle == 5, "a second idle refills only up to the burst")
        _ = bucket.take(5, now: Self.second)
        // Drained at 1 s: over the next 2 s, one token every 20 ms, 100 in all.
        var taken = 0
        var t = Self.second
        while t <= 3 * Self.second {
            while bucket.take(now: t) { taken += 1 }
            t += Self.second / 1000
        }
        #expect(taken == 100)
    }

    @Test("a slow rate keeps one token at least; the wait for the next token is exact")
    func slowRateAndWait() {
        var bucket = TokenBucket(rate: 2, burstSeconds: 0.1, now: 0)
        #expect(bucket.burst == 1)
        let first = bucket.take(now: 0)
        #expect(first)
        #expect(bucket.untilNextToken(now: 0) == Self.second / 2)
        #expect(bucket.untilNextToken(now: Self.second / 4) == Self.second / 4)
        let early = bucket.take(now: Self.second / 2 - 1)
        let onTime = bucket.take(now: Self.second / 2)
        #expect(!early && onTime)
        #expect(bucket.untilNextToken(now: 10 * Self.second) == 0)
    }

    @Test("a clock that goes back adds nothing; a new rate keeps the tokens up to the new burst")
    func clockBackAndNewRate() {
        var bucket = TokenBucket(rate: 100, burstSeconds: 0.1, now: 10 * Self.second)
        _ = bucket.take(10, now: 10 * Self.second)
        let back = bucket.available(now: 9 * Self.second)
        let later = bucket.available(now: 10 * Self.second + Self.second / 20)
        #expect(back == 0 && later == 5)
        bucket.setRate(20, burstSeconds: 0.1, now: 10 * Self.second + Self.second / 20)
        let lowered = bucket.available(now: 10 * Self.second + Self.second / 20)
        #expect(lowered == 2)
    }
}
