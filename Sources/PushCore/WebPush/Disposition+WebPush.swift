extension Disposition {
    /// What becomes of a Web Push row after one verdict (issue 47's answers table), the
    /// counterpart of FCM's: `Disposition.decide(outcome:…)` calls it for `.webPush`.
    ///
    /// - 2xx: `sent`.
    /// - 404, 410: `failed` (`NotFound` / `Gone`), the exact endpoint invalidated in `pushq.devices`.
    /// - 413, 400, 3xx: `failed` (`PayloadTooLarge` / `BadRequest` / `Redirect`), never retried,
    ///   nothing invalidated. A refused endpoint: `failed` / `EndpointNotAllowed`.
    /// - 429: retried no sooner than Retry-After (at least the retry base), only this subscription
    ///   slowed (`throttlesToken`), the attempt given back.
    /// - 5xx: retried after the backoff and no sooner than Retry-After; `failed` at `max_attempts`.
    /// - 401, 403: waits, its attempt given back; the ``Decider`` holds the credential.
    public static func decide(webPush verdict: WebPushVerdict, reason: String?, attempts: Int, maxAttempts: Int,
                              lastReason: String?, policy: RetryPolicy, unitRandom: () -> Double) -> Disposition {
        switch verdict {
        case .sent:
            return Disposition(status: .sent, reason: nil)
        case .invalidateEndpoint(let r):
            return Disposition(status: .failed, reason: r.rawValue, invalidation: Invalidation(reason: r.rawValue, atMilliseconds: nil))
        case .fail(let r):
            return Disposition(status: .failed, reason: r.rawValue)
        case .endpointNotAllowed:
            return Disposition(status: .failed, reason: WebPushEndpointRefusal.reason)
        case .retry(let kind, let retryAfter):
            let text = kind.reasonText
            let limit = min(maxAttempts, kind.attemptLimit ?? maxAttempts)
            if attempts >= limit { return Disposition(status: .failed, reason: text) }
            let policyKind: Outcome.RetryKind
            switch kind {
            case .serverError: policyKind = .serverError(nil)
            case .unknown(let t): policyKind = .unknownReason(t)
            }
            let delay = max(policy.delay(attempt: attempts, kind: policyKind, unitRandom: unitRandom), Double(retryAfter ?? 0))
            return Disposition(status: .retrying, reason: text, retryDelay: delay)
        case .throttleSubscription(let seconds):
            return Disposition(status: .retrying, reason: WebPushReason.tooManyRequests.rawValue,
                               retryDelay: max(Double(seconds), policy.baseSeconds), refundsAttempt: true, throttlesToken: true)
        case .holdCredential(let reason, _):
            return .waiting(reason: reason, delay: policy.soonDelay(unitRandom: unitRandom))
        }
    }
}
