extension Outcome {
    /// The `kind` label of `pushq_retries_total` for a row this outcome leaves `retrying`.
    ///
    /// `transport` (no answer: timeout, reset, refused), `server_error` (5xx),
    /// `too_many_requests` (APNs' 429, FCM's 429 for one token), `idle_timeout`, `unknown_reason`, `connection` (resent at once
    /// on a fresh connection or token, or after an FCM access-token refresh), `quota` (FCM's
    /// QUOTA_EXCEEDED: the whole credential backs off), `held` (waiting for a paused credential
    /// or an endpoint that is down). Outcomes that are not retries by themselves (a sent or failed answer the
    /// ``Decider`` turned into a wait) are `held` too.
    public var retryLabel: String {
        // Every value is in `retryLabels`.
        switch self {
        case .retry(.outcomeUnknown): return "transport"
        case .retry(.serverError): return "server_error"
        case .retry(.tooManyRequests): return "too_many_requests"
        case .retry(.idleTimeout): return "idle_timeout"
        case .retry(.unknownReason): return "unknown_reason"
        case .retryNow: return "connection"
        case .pauseCredential, .sent, .fail, .failLocally, .invalidateToken, .expiredBeforeSending: return "held"
        case .fcm(let verdict):
            switch verdict {
            case .retry(.serverError, _): return "server_error"
            case .retry(.unknown, _): return "unknown_reason"
            case .backOffCredential: return "quota"
            case .throttleToken: return "too_many_requests"
            case .refreshAccessToken: return "connection"
            case .sent, .fail, .invalidateToken, .pauseCredential: return "held"
            }
        case .webPush(let verdict):
            switch verdict {
            case .retry(.serverError, _): return "server_error"
            case .retry(.unknown, _): return "unknown_reason"
            case .throttleSubscription: return "too_many_requests"
            case .sent, .fail, .invalidateEndpoint, .endpointNotAllowed, .holdCredential: return "held"
            }
        }
    }

    /// Every value ``retryLabel`` takes: the `kind` label values of `pushq_retries_total`.
    public static let retryLabels = ["transport", "server_error", "too_many_requests", "idle_timeout", "unknown_reason",
                                     "connection", "quota", "held"]
}
