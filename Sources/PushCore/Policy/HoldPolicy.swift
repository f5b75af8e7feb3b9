/// How long an endpoint is held back, and how it is probed.
///
/// A hold lasts until its first probe; then one worker (whichever takes the probe) sends a
/// few of the endpoint's rows, and every other worker keeps skipping them. A probe that
/// succeeds lifts the hold for everyone; one that fails leaves it, and the next probe comes
/// after a longer interval:
/// - credential and burst holds: ``pauseBaseSeconds``, doubled on each probe up to
///   ``pauseCapSeconds`` (30 s … 15 min by default);
/// - outages: ``outageBaseSeconds`` doubled up to ``outageCapSeconds`` (1 s … 45 s), each
///   interval drawn between half and all of that ("equal jitter"), so that workers and
///   hosts do not probe in step, and every row goes out within a minute of the recovery.
///
/// Pure: randomness is injected.
public struct HoldPolicy: Sendable, Hashable {
    /// Defaults to 30.
    public var pauseBaseSeconds: Double
    /// Defaults to 900.
    public var pauseCapSeconds: Double
    /// Defaults to 1.
    public var outageBaseSeconds: Double
    /// Defaults to 45.
    public var outageCapSeconds: Double

    public init(pauseBaseSeconds: Double = 30, pauseCapSeconds: Double = 900,
                outageBaseSeconds: Double = 1, outageCapSeconds: Double = 45) {
        precondition(pauseBaseSeconds > 0 && pauseCapSeconds >= pauseBaseSeconds)
        precondition(outageBaseSeconds > 0 && outageCapSeconds >= outageBaseSeconds)
        self.pauseBaseSeconds = pauseBaseSeconds
        self.pauseCapSeconds = pauseCapSeconds
        self.outageBaseSeconds = outageBaseSeconds
        self.outageCapSeconds = outageCapSeconds
    }

    /// Seconds from the start of the hold, or from the probe number `probes` (0 for a new
    /// hold), to the next probe.
    public func interval(_ kind: HoldKind, probes: Int, unitRandom: () -> Double) -> Double {
        let exponent = Double(sign: .plus, exponent: max(0, min(probes, 40)), significand: 1)
        switch kind {
        case .credential, .burst:
            return min(pauseCapSeconds, pauseBaseSeconds * exponent)
        case .outage:
            let r = min(max(unitRandom(), 0), 1)
            return min(outageCapSeconds, outageBaseSeconds * exponent) * (0.5 + 0.5 * r)
        }
    }

    /// ``interval(_:probes:unitRandom:)`` with its jitter drawn from `random`, the caller's
    /// generator (a ``Decider``'s, or a worker loop's: `SystemRandomNumberGenerator` in
    /// production, a seeded one in tests).
    public func interval(_ kind: HoldKind, probes: Int, using random: inout some RandomNumberGenerator) -> Double {
        interval(kind, probes: probes, unitRandom: { Double.random(in: 0..<1, using: &random) })
    }

    /// How many rows one probe sends: one for a credential or an outage; a few for a burst,
    /// so the answers can tell bad tokens from a wrong environment.
    public func probeRows(_ kind: HoldKind) -> Int {
        kind == .burst ? 5 : 1
    }
}
