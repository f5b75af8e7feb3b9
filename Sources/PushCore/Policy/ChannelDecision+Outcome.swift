extension ChannelDecision {
    /// Decides one answered (or unanswered) operation.
    ///
    /// - Parameters:
    ///   - outcome: Apple's answer, classified.
    ///   - createdID: the `apns-channel-id` of a create's answer.
    ///   - attempts: the attempts made, this one included; `maxAttempts`: the channel's.
    ///   - holds: how many holds or outage retries in a row came before this one (the backoff's exponent).
    ///   - random: where the jitter is drawn from (the channel loop's generator; seeded in tests).
    public static func decide(_ outcome: ChannelOutcome, operation: Operation, createdID: String?, attempts: Int, maxAttempts: Int,
                              holds: Int, retry: RetryPolicy, hold: HoldPolicy,
                              using random: inout some RandomNumberGenerator) -> ChannelDecision {
        decide(outcome, operation: operation, createdID: createdID, attempts: attempts, maxAttempts: maxAttempts, holds: holds,
               retry: retry, hold: hold, unitRandom: { Double.random(in: 0..<1, using: &random) })
    }

    /// ``decide(_:operation:createdID:attempts:maxAttempts:holds:retry:hold:using:)`` with the
    /// jitter as a function returning a value in `0..<1`.
    public static func decide(_ outcome: ChannelOutcome, operation: Operation, createdID: String?, attempts: Int, maxAttempts: Int,
                              holds: Int, retry: RetryPolicy, hold: HoldPolicy, unitRandom: () -> Double) -> ChannelDecision {
        switch outcome {
        case .done:
            guard operation == .create else { return .deleted }
            guard let createdID else { return .retry(afterSeconds: retry.soonDelay(unitRandom: unitRandom), refund: false) }
            return .created(apnsChannelID: createdID)
        case .gone:
            return operation == .delete ? .deleted : .failed
        case .fail:
            return .failed
        case .retryNow:
            return .retry(afterSeconds: 0, refund: true)
        case .hold(let kind, _):
            return .retry(afterSeconds: hold.interval(kind, probes: holds, unitRandom: unitRandom), refund: true)
        case .retry(let kind):
            switch outcome.healthSignal {
            case .unreachable, .serverFailure:
                return .retry(afterSeconds: hold.interval(.outage, probes: holds, unitRandom: unitRandom), refund: true)
            case .reachable, .none:
                guard attempts < maxAttempts else { return .failed }
                return .retry(afterSeconds: retry.delay(attempt: attempts, kind: kind, unitRandom: unitRandom), refund: false)
            }
        }
    }
}
