/// Exponential backoff with a floor and full jitter.
///
/// The n-th retry waits ``baseSeconds`` plus a uniformly random time in
/// `0...min(cap, base × 2^(n-1))` ("full jitter", AWS architecture blog), so a fleet of
/// workers that failed together does not retry together, and no resend ever comes sooner
/// than the base (1 s by default): a failure that repeats can never become a tight loop.
/// A 429 `TooManyRequests` waits at least ``throttleDelaySeconds`` on top of the jitter.
/// Pure: randomness is injected.
public struct RetryPolicy: Sendable, Hashable {
    /// The floor of every resend's delay, and the first retry's jitter span, in seconds. Defaults to 1.
    public var baseSeconds: Double
    /// Largest jitter span, in seconds. Defaults to 600 (10 minutes).
    public var capSeconds: Double
    /// Minimum delay after a 429 `TooManyRequests`, in seconds. Defaults to 300 (5 minutes).
    public var throttleDelaySeconds: Double

    /// - Parameters:
    ///   - baseSeconds: defaults to 1.
    ///   - capSeconds: defaults to 600.
    ///   - throttleDelaySeconds: defaults to 300.
    public init(baseSeconds: Double = 1, capSeconds: Double = 600, throttleDelaySeconds: Double = 300) {
        precondition(baseSeconds > 0 && capSeconds >= baseSeconds && throttleDelaySeconds >= 0)
        self.baseSeconds = baseSeconds
        self.capSeconds = capSeconds
        self.throttleDelaySeconds = throttleDelaySeconds
    }

    /// The span of the random part of the delay before retry number `attempt` (1 = first retry).
    public func ceiling(attempt: Int) -> Double {
        let exponent = max(0, min(attempt - 1, 62))
        // 2^exponent overflows nothing in Double; min keeps it at the cap.
        return min(capSeconds, baseSeconds * Double(sign: .plus, exponent: exponent, significand: 1))
    }

    /// The delay, in seconds, before retry number `attempt` (1 = first retry) of `kind`.
    ///
    /// - Parameters:
    ///   - attempt: how many attempts have been made so far (≥ 1).
    ///   - kind: why the notification is retried.
    ///   - unitRandom: returns a value in `0..<1`; inject a fixed source in tests.
    public func delay(attempt: Int, kind: Outcome.RetryKind, unitRandom: () -> Double) -> Double {
        let r = min(max(unitRandom(), 0), 1)
        let jittered = r * ceiling(attempt: attempt)
        switch kind {
        case .tooManyRequests: return throttleDelaySeconds + jittered
        case .idleTimeout: return soonDelay(unitRandom: { r })  // "retry soon", on a new connection
        default: return baseSeconds + jittered
        }
    }

    /// The delay of a resend that is not the notification's fault (a fresh connection or
    /// token, an endpoint or credential that is down): the floor plus up to one more base,
    /// so `base...2 × base` (1–2 s by default).
    public func soonDelay(unitRandom: () -> Double) -> Double {
        baseSeconds * (1 + min(max(unitRandom(), 0), 1))
    }

}
