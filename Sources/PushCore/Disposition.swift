/// What the worker writes back for one notification after one attempt: the row's next
/// status, the reason to record, the retry delay, and the side effects (token
/// invalidation, credential pause).
///
/// Produced by the pure ``Disposition/decide(outcome:reason:attempts:maxAttempts:policy:unitRandom:)``
/// from an ``Outcome``; the worker only carries it out. The database still has the last
/// word on two things that need its clock: a retry whose `scheduled_at` would fall after
/// the row's `expires_at` ends `expired`, and a refunded attempt is refunded only when
/// the previous attempt did not fail for the same reason (so a connection-level failure
/// that repeats, e.g. a wrong clock giving `ExpiredProviderToken` again and again,
/// eventually uses up the row's attempts instead of looping forever).
public struct Disposition: Sendable, Hashable {
    /// The row's next status.
    public enum Status: String, Sendable, Hashable {
        case sent, retrying, failed
    }

    public var status: Status
    /// `last_reason`: APNs' reason or a local one (`TransportTimeout`...); nil after a 200.
    public var reason: String?
    /// Seconds until the retry (`scheduled_at = now() + delay`), for `.retrying`.
    public var retryDelay: Double
    /// Whether the attempt just made is given back (connection-level failures, pauses).
    public var refundsAttempt: Bool
    /// A token invalidation to record in `pushq.devices`.
    public var invalidation: Invalidation?
    /// Whether the credential is to be paused (APNs rejected it as a whole).
    public var pausesCredential: Bool

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
                invalidation: Invalidation? = nil, pausesCredential: Bool = false) {
        self.status = status
        self.reason = reason
        self.retryDelay = retryDelay
        self.refundsAttempt = refundsAttempt
        self.invalidation = invalidation
        self.pausesCredential = pausesCredential
    }

    /// Decides what becomes of a row after one attempt.
    ///
    /// - Parameters:
    ///   - outcome: the classified answer.
    ///   - reason: the text for `last_reason` when the outcome carries none of its own
    ///     (a transport failure's `TransportTimeout`, an unnamed status's `HTTP500`).
    ///   - attempts: the row's attempts including the one just made (≥ 1).
    ///   - maxAttempts: the row's `max_attempts`.
    ///   - policy: backoff for retries.
    ///   - unitRandom: jitter source in `0..<1`.
    public static func decide(outcome: Outcome, reason: String?, attempts: Int, maxAttempts: Int,
                              policy: RetryPolicy, unitRandom: () -> Double) -> Disposition {
        switch outcome {
        case .sent:
            return Disposition(status: .sent, reason: nil)
        case .fail(let r):
            return Disposition(status: .failed, reason: r.rawValue)
        case .invalidateToken(let r, let at):
            return Disposition(status: .failed, reason: r.rawValue,
                               invalidation: Invalidation(reason: r.rawValue, atMilliseconds: at))
        case .retry(let kind):
            let text = kind.reasonText ?? reason ?? "Unknown"
            let limit = min(maxAttempts, kind.attemptLimit ?? maxAttempts)
            if attempts >= limit {
                return Disposition(status: .failed, reason: text)
            }
            let delay = policy.delay(attempt: attempts, kind: kind, unitRandom: unitRandom)
            return Disposition(status: .retrying, reason: text, retryDelay: delay)
        case .retryNow(let why):
            let text: String
            switch why {
            case .renewProviderToken: text = APNsReason.expiredProviderToken.rawValue
            case .freshConnection(let r): text = r.rawValue
            }
            return Disposition(status: .retrying, reason: text, refundsAttempt: true)
        case .pauseCredential(let text):
            return Disposition(status: .retrying, reason: text, refundsAttempt: true, pausesCredential: true)
        }
    }

    /// The disposition of a burst-suspect answer (`BadDeviceToken`, `DeviceTokenNotForTopic`)
    /// when the burst detector says the credential, not the token, is wrong: the row waits
    /// for the credential, its attempt given back, and no token is invalidated.
    public static func heldForBurst(reason: String) -> Disposition {
        Disposition(status: .retrying, reason: reason, refundsAttempt: true, pausesCredential: true)
    }

    /// The disposition of a burst-suspect answer while too few answers have come to judge
    /// (``BurstDetector/canJudge``): retried once after `delay`, its attempt given back,
    /// nothing invalidated yet. The retry's answer is acted on (the refund rule of the
    /// write-back gives back an attempt only when the reason changes).
    public static func deferredForBurst(reason: String, delay: Double) -> Disposition {
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

/// Tells a wrong environment or topic from bad tokens: the share of burst-suspect answers
/// (`BadDeviceToken`, `DeviceTokenNotForTopic`) among a credential's most recent answers.
///
/// A few bad tokens are normal; more than half of the last ``minimumAnswers`` or more answers
/// means the tokens are being sent to the wrong place, and invalidating them would destroy
/// thousands of good tokens. Pure: the worker keeps one per (credential, environment).
public struct BurstDetector: Sendable, Hashable {
    /// How many recent answers are remembered. Defaults to 32.
    public let capacity: Int
    /// Fewest answers seen before a burst can be declared. Defaults to 20.
    public let minimumAnswers: Int
    private var ring: [Bool] = []
    private var next = 0
    private var suspects = 0

    public init(capacity: Int = 32, minimumAnswers: Int = 20) {
        precondition(capacity >= minimumAnswers && minimumAnswers >= 1)
        self.capacity = capacity
        self.minimumAnswers = minimumAnswers
    }

    /// Records one answer from APNs (transport failures are not answers).
    public mutating func record(suspect: Bool) {
        if ring.count < capacity {
            ring.append(suspect)
        } else {
            if ring[next] { suspects -= 1 }
            ring[next] = suspect
            next = (next + 1) % capacity
        }
        if suspect { suspects += 1 }
    }

    /// Whether more than half of at least ``minimumAnswers`` recent answers were suspect.
    public var isBurst: Bool { ring.count >= minimumAnswers && suspects * 2 > ring.count }

    /// Answers remembered.
    public var count: Int { ring.count }

    /// Whether enough answers were seen to tell a burst from a few bad tokens.
    public var canJudge: Bool { ring.count >= minimumAnswers }

    /// Forgets everything (after the credential was paused, judge it afresh).
    public mutating func reset() {
        ring.removeAll(keepingCapacity: true)
        next = 0
        suspects = 0
    }
}
