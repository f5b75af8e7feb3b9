/// A token bucket: ``rate`` tokens a second, at most ``burst`` kept; what paces a capped lane's
/// or credential's requests as they start.
///
/// Pure: the time is passed in (nanoseconds of any monotonic clock, the same for every call), so
/// tests drive it without waiting. A bucket starts full: a lane idle for a while sends its burst
/// at once, then ``rate`` a second.
public struct TokenBucket: Sendable, Hashable {
    /// Tokens a second.
    public private(set) var rate: Double
    /// The most tokens kept (at least 1, so that a slow rate still sends).
    public private(set) var burst: Double
    /// Tokens now, as of ``updatedAt``.
    public private(set) var tokens: Double
    /// When ``tokens`` was last brought up to date, in the caller's nanoseconds.
    public private(set) var updatedAt: Int64

    /// - Parameters:
    ///   - rate: tokens a second (> 0).
    ///   - burstSeconds: how many seconds of `rate` the bucket keeps (at least one token).
    ///   - now: the caller's clock, nanoseconds.
    public init(rate: Double, burstSeconds: Double, now: Int64) {
        self.rate = rate
        self.burst = max(1, rate * burstSeconds)
        self.tokens = burst
        self.updatedAt = now
    }

    /// Adds what `rate` gave since the last call, up to ``burst``. A clock that went back adds nothing.
    public mutating func refill(now: Int64) {
        guard now > updatedAt else { return }
        tokens = min(burst, tokens + Double(now - updatedAt) * rate / 1e9)
        updatedAt = now
    }

    /// Whole tokens there are now.
    public mutating func available(now: Int64) -> Int {
        refill(now: now)
        return Int(tokens.rounded(.down))
    }

    /// Takes `count` tokens if there are that many now.
    ///
    /// - Returns: whether it took them.
    public mutating func take(_ count: Int = 1, now: Int64) -> Bool {
        refill(now: now)
        guard tokens >= Double(count) else { return false }
        tokens -= Double(count)
        return true
    }

    /// Nanoseconds from `now` until one whole token is there (0 if there is one).
    public func untilNextToken(now: Int64) -> Int64 {
        let have = min(burst, tokens + Double(max(0, now - updatedAt)) * rate / 1e9)
        guard have < 1 else { return 0 }
        return Int64(((1 - have) / rate * 1e9).rounded(.up))
    }

    /// Changes the rate (a cap changed), keeping the tokens there are, up to the new burst.
    public mutating func setRate(_ rate: Double, burstSeconds: Double, now: Int64) {
        refill(now: now)
        self.rate = rate
        self.burst = max(1, rate * burstSeconds)
        tokens = min(tokens, burst)
    }
}
