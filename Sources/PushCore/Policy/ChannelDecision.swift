/// What the channel loop writes back after one operation on a broadcast channel (create or
/// delete at Apple): pure, from Apple's answer as ``ChannelOutcome`` classifies it, with the
/// retry, hold and outage rules of notifications.
///
/// | outcome | create | delete |
/// |---|---|---|
/// | ``ChannelOutcome/done`` | ``created(apnsChannelID:)`` | ``deleted`` |
/// | ``ChannelOutcome/gone`` | ``failed`` | ``deleted`` (already gone) |
/// | ``ChannelOutcome/fail(_:)`` | ``failed`` | ``failed`` |
/// | ``ChannelOutcome/retry(_:)``, Apple reachable (429, an unknown reason) | ``retry(afterSeconds:refund:)`` after the retry policy's backoff, the attempt counted; ``failed`` once `maxAttempts` are used | same |
/// | ``ChannelOutcome/retry(_:)``, unreachable or 5xx (an outage) | retry after the outage probe's interval, the attempt given back: an outage never uses a channel's attempts up | same |
/// | ``ChannelOutcome/retryNow(_:)`` | retry at once (new token or connection), the attempt given back | same |
/// | ``ChannelOutcome/hold(_:reason:)`` | retry after the credential pause's interval, the attempt given back | same |
///
/// The worker's push endpoints are not held by a channel answer: a credential may be refused
/// channels (`FeatureNotEnabled`) and still send pushes.
public enum ChannelDecision: Sendable, Hashable {
    /// Apple created the channel: record its id.
    case created(apnsChannelID: String)
    /// The channel is gone at Apple (deleted now, or already).
    case deleted
    /// Try again in `afterSeconds`; `refund` gives the attempt back.
    case retry(afterSeconds: Double, refund: Bool)
    /// Refused for good, or out of attempts.
    case failed

    /// What a claimed operation asked for.
    public enum Operation: Sendable, Hashable {
        case create
        case delete
    }

    /// Whether the answer was a hold or an outage: the next one backs off further (``decide``'s `holds`).
    public var isHeldBack: Bool {
        if case .retry(let seconds, true) = self { return seconds > 0 }
        return false
    }
}
