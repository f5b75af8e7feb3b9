/// What the worker writes back for one notification after one attempt: the row's next
/// status, the reason to record, the retry delay, whether the attempt is given back, and
/// the token side effects (invalidation, throttle).
///
/// Produced by the pure ``decide(outcome:reason:attempts:maxAttempts:lastReason:policy:unitRandom:)``
/// from an ``Outcome``, then adjusted by ``Decider`` for what one answer cannot know (an
/// endpoint that is down, a burst of `BadDeviceToken`); the worker only carries it out. The
/// database still has the last word on one thing that needs its clock: a retry whose
/// `scheduled_at` would fall after the row's `expires_at` ends `expired`.
///
/// Invariants, whatever the outcome: a `retrying` row that keeps its attempt has
/// `attempts < maxAttempts`, so the next claim never takes it past `max_attempts`; and every
/// resend waits at least the retry base (``RetryPolicy/baseSeconds``), so nothing loops tight.
public struct Disposition: Sendable, Hashable {
    /// The row's next status.
    public enum Status: String, Sendable, Hashable {
        case sent, retrying, failed, expired
    }

    public var status: Status
    /// `last_reason`: APNs' reason or a local one (`TransportTimeout`...); nil after a 200.
    public var reason: String?
    /// Seconds until the retry (`scheduled_at = now() + delay`), for `.retrying`.
    public var retryDelay: Double
    /// Whether the attempt just made is given back (it was not the notification's fault).
    public var refundsAttempt: Bool
    /// A token invalidation to record in `pushq.devices`.
    public var invalidation: Invalidation?
    /// Whether the row's token is throttled (429): other rows for the same token and
    /// environment wait until this row's retry.
    public var throttlesToken: Bool

    /// A token that APNs says is no longer valid.
    public struct Invalidation: Sendable, Hashable {
        /// `Unregistered`, `ExpiredToken` or `BadDeviceToken`.
        public var reason: String
        /// When APNs learned it, in milliseconds since the epoch; nil means "now" (no timestamp given).
        public var atMilliseconds: Int64?

        public init(reason: String, atMilliseconds: Int64?) {
            self.reason = reason
            self.atMilliseconds = atMilliseconds
        }
    }

    public init(status: Status, reason: String?, retryDelay: Double = 0, refundsAttempt: Bool = false,
                invalidation: Invalidation? = nil, throttlesToken: Bool = false) {
        self.status = status
        self.reason = reason
        self.retryDelay = retryDelay
        self.refundsAttempt = refundsAttempt
        self.invalidation = invalidation
        self.throttlesToken = throttlesToken
    }

    /// Decides what becomes of a row after one attempt, from its answer alone.
    ///
    /// - Parameters:
    ///   - outcome: the classified answer.
    ///   - reason: the text for `last_reason` when the outcome carries none of its own
    ///     (a transport failure's `TransportTimeout`, an unnamed status's `HTTP500`).
    ///   - attempts: the row's attempts including the one just made (≥ 1).
    ///   - maxAttempts: the row's `max_attempts`.
    ///   - lastReason: the previous attempt's `last_reason`: a connection-level failure
    ///     (``Outcome/retryNow(_:)``) gives the attempt back only when it is not a repeat.
    ///   - policy: backoff for retries.
    ///   - unitRandom: jitter source in `0..<1`.
    public static func decide(outcome: Outcome, reason: String?, attempts: Int, maxAttempts: Int, lastReason: String?,
                              policy: RetryPolicy, unitRandom: () -> Double) -> Disposition {
        switch outcome {
        case .sent:
            return Disposition(status: .sent, reason: nil)
        case .fail(let r):
            return Disposition(status: .failed, reason: r.rawValue)
        case .failLocally(let text):
            return Disposition(status: .failed, reason: text)
        case .invalidateToken(let r, let at):
            return Disposition(status: .failed, reason: r.rawValue,
                               invalidation: Invalidation(reason: r.rawValue, atMilliseconds: at))
        case .expiredBeforeSending:
            return Disposition(status: .expired, reason: lastReason, refundsAttempt: true)
        case .retry(let kind):
            let text = kind.reasonText ?? reason ?? "Unknown"
            if outcome.deliveredNothing {
                // No connection, no request: never the notification's fault, never an attempt.
                return Disposition(status: .retrying, reason: text,
                                   retryDelay: policy.delay(attempt: attempts, kind: kind, unitRandom: unitRandom), refundsAttempt: true)
            }
            let limit = min(maxAttempts, kind.attemptLimit ?? maxAttempts)
            if attempts >= limit {
                return Disposition(status: .failed, reason: text)
            }
            let delay = policy.delay(attempt: attempts, kind: kind, unitRandom: unitRandom)
            return Disposition(status: .retrying, reason: text, retryDelay: delay, throttlesToken: kind == .tooManyRequests)
        case .retryNow(let why):
            let text: String
            switch why {
            case .renewProviderToken: text = APNsReason.expiredProviderToken.rawValue
            case .freshConnection(let r): text = r.rawValue
            }
            guard lastReason == text else {
                return Disposition(status: .retrying, reason: text, retryDelay: policy.soonDelay(unitRandom: unitRandom), refundsAttempt: true)
            }
            // The same connection-level failure twice in a row: this attempt counts, so a
            // failure that keeps repeating ends the row instead of looping forever.
            if attempts >= maxAttempts { return Disposition(status: .failed, reason: text) }
            return Disposition(status: .retrying, reason: text,
                               retryDelay: policy.delay(attempt: attempts, kind: .serverError(nil), unitRandom: unitRandom))
        case .pauseCredential(let text):
            return .waiting(reason: text, delay: policy.soonDelay(unitRandom: unitRandom))
        case .fcm(let verdict):
            return decide(fcm: verdict, reason: reason, attempts: attempts, maxAttempts: maxAttempts, lastReason: lastReason,
                          policy: policy, unitRandom: unitRandom)
        case .webPush(let verdict):
            return decide(webPush: verdict, reason: reason, attempts: attempts, maxAttempts: maxAttempts, lastReason: lastReason,
                          policy: policy, unitRandom: unitRandom)
        }
    }

    /// ``decide(outcome:reason:attempts:maxAttempts:lastReason:policy:unitRandom:)`` for FCM's answers.
    ///
    /// - A token FCM says is gone (`UNREGISTERED`, or `INVALID_ARGUMENT` naming the token) is
    ///   recorded in `pushq.devices` with that code as its reason; the row ends `failed`.
    /// - A retry waits for the backoff, and at least FCM's `Retry-After`.
    /// - `QUOTA_EXCEEDED` naming the project waits for its `Retry-After` (at least the retry base),
    ///   its attempt given back; the ``Decider`` holds the whole credential as long. One for a
    ///   device (or not saying whose) retries after `Retry-After`, counting an attempt, and
    ///   ends `failed` / `QUOTA_EXCEEDED` at `max_attempts`.
    /// - `UNAUTHENTICATED` that reaches the worker (the sender already refreshed the access
    ///   token once and resent) is resent soon, its attempt given back unless the previous
    ///   attempt ended the same way, as for APNs' connection-level failures.
    static func decide(fcm verdict: FCMVerdict, reason: String?, attempts: Int, maxAttempts: Int, lastReason: String?,
                       policy: RetryPolicy, unitRandom: () -> Double) -> Disposition {
        switch verdict {
        case .sent:
            return Disposition(status: .sent, reason: nil)
        case .invalidateToken(let code):
            return Disposition(status: .failed, reason: code.rawValue, invalidation: Invalidation(reason: code.rawValue, atMilliseconds: nil))
        case .fail(let code):
            return Disposition(status: .failed, reason: code.rawValue)
        case .retry(let kind, let retryAfter):
            let text: String
            let policyKind: Outcome.RetryKind
            switch kind {
            case .serverError(let code):
                text = code?.rawValue ?? reason ?? "HTTP5xx"
                policyKind = .serverError(nil)
            case .unknown(let code):
                text = code
                policyKind = .unknownReason(code)
            }
            let limit = min(maxAttempts, kind.attemptLimit ?? maxAttempts)
            if attempts >= limit { return Disposition(status: .failed, reason: text) }
            let delay = max(policy.delay(attempt: attempts, kind: policyKind, unitRandom: unitRandom), Double(retryAfter ?? 0))
            return Disposition(status: .retrying, reason: text, retryDelay: delay)
        case .backOffCredential(let seconds):
            return .waiting(reason: FCMErrorCode.quotaExceeded.rawValue, delay: max(Double(seconds), policy.baseSeconds))
        case .throttleToken(let seconds):
            let text = FCMErrorCode.quotaExceeded.rawValue
            if attempts >= maxAttempts { return Disposition(status: .failed, reason: text) }
            return Disposition(status: .retrying, reason: text, retryDelay: max(Double(seconds), policy.baseSeconds))
        case .refreshAccessToken:
            let text = FCMErrorCode.unauthenticated.rawValue
            guard lastReason == text else {
                return Disposition(status: .retrying, reason: text, retryDelay: policy.soonDelay(unitRandom: unitRandom), refundsAttempt: true)
            }
            if attempts >= maxAttempts { return Disposition(status: .failed, reason: text) }
            return Disposition(status: .retrying, reason: text,
                               retryDelay: policy.delay(attempt: attempts, kind: .serverError(nil), unitRandom: unitRandom))
        case .pauseCredential(let code, _):
            return .waiting(reason: code.rawValue, delay: policy.soonDelay(unitRandom: unitRandom))
        }
    }

    /// A row that waits, its attempt given back, because the fault is not its own: a paused
    /// credential, an endpoint that is down, a burst being judged.
    public static func waiting(reason: String, delay: Double) -> Disposition {
        Disposition(status: .retrying, reason: reason, retryDelay: delay, refundsAttempt: true)
    }
}

extension Outcome.RetryKind {
    /// The reason this kind carries itself, if any (`InternalServerError`, `TooManyRequests`...).
    var reasonText: String? {
        switch self {
        case .outcomeUnknown: return nil
        case .serverError(let r): return r?.rawValue
        case .tooManyRequests: return APNsReason.tooManyRequests.rawValue
        case .idleTimeout: return APNsReason.idleTimeout.rawValue
        case .unknownReason(let text): return text
        }
    }
}
