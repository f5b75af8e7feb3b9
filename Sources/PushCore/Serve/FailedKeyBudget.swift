/// How many failed key look-ups `pushq serve` answers one by one: a token bucket, one per process,
/// for every client together. Pure: the caller passes the time and keeps the value (serve: under
/// a lock).
///
/// A key is looked up before anything is decided about its request, and a key that is found is
/// always accepted, whatever failed before and from wherever: so nothing a client does with wrong
/// keys can lock out a right one (a throttle per client address, checked before the key, did: every
/// producer behind one NAT, one node's SNAT or a forged `X-Forwarded-For` shared its lock-out).
/// Keys are 32 random bytes, so guessing one is no threat that a throttle would have to slow;
/// what wrong keys cost is a look-up each (one unique-index probe of the key's SHA-256) and a log
/// line each. This budget bounds the log lines and tells a client sending garbage to back off:
/// up to ``burst`` failures at once, refilled at ``perSecond``; a failure beyond the budget is
/// answered 429 with `Retry-After` instead of 401, and counted rather than logged, the count
/// going with the next failure that is logged.
public struct FailedKeyBudget: Sendable {
    /// Failures answered 401 (and logged) at once. Defaults to 100.
    public var burst: Int
    /// Failures answered 401 per second, sustained. Defaults to 10.
    public var perSecond: Double
    /// The budget's ``TokenBucket``, made full at the first failure (its clock is nanoseconds).
    private var bucket: TokenBucket?
    private var throttled = 0

    public init(burst: Int = 100, perSecond: Double = 10) {
        precondition(burst >= 1 && perSecond > 0, "a burst of 1 or more, a positive rate")
        self.burst = burst
        self.perSecond = perSecond
    }

    /// What to answer a failed look-up.
    public enum Verdict: Sendable, Equatable {
        /// 401, and log it, saying how many failures were throttled since the last one logged.
        case refuse(throttledBefore: Int)
        /// 429 with `Retry-After` in whole seconds (at least 1); counted, not logged.
        case throttle(retryAfter: Int)
    }

    /// Counts a failed look-up at `now` (seconds, any epoch, never going back).
    public mutating func failure(now: Double) -> Verdict {
        let nanoseconds = Int64((now * 1e9).rounded())
        var bucket = bucket ?? TokenBucket(rate: perSecond, burstSeconds: Double(burst) / perSecond, now: nanoseconds)
        defer { self.bucket = bucket }
        guard bucket.take(now: nanoseconds) else {
            throttled += 1
            let wait = (Double(bucket.untilNextToken(now: nanoseconds)) / 1e9).rounded(.up)
            return .throttle(retryAfter: max(1, Int(wait)))
        }
        defer { throttled = 0 }
        return .refuse(throttledBefore: throttled)
    }
}
