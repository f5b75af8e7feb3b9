/// One answered attempt, as the ``Decider`` sees it: the row's counters and the answer.
public struct Answer: Sendable, Hashable {
    /// The notification's id.
    public var row: Int64
    public var endpoint: Endpoint
    /// The row's attempts including this one (≥ 1).
    public var attempts: Int
    public var maxAttempts: Int
    /// The previous attempt's `last_reason`.
    public var lastReason: String?
    /// Whether the row was claimed as the probe of a held endpoint.
    public var isProbe: Bool
    public var outcome: Outcome
    /// `last_reason` when the outcome carries no reason of its own (`TransportTimeout`, `HTTP500`).
    public var reasonText: String?
    /// Whether APNs answered with an HTTP status (as opposed to a transport failure).
    public var isHTTPAnswer: Bool
    /// The provider token the request carried (token auth), nil for certificate auth.
    public var token: TokenUse?
    /// The row's device token (FCM: tells one hot device's 429s from many devices'); nil: the row's id stands for it.
    public var deviceToken: String?

    public init(row: Int64, endpoint: Endpoint, attempts: Int, maxAttempts: Int, lastReason: String?, isProbe: Bool = false,
                outcome: Outcome, reasonText: String?, isHTTPAnswer: Bool, token: TokenUse? = nil, deviceToken: String? = nil) {
        self.row = row
        self.endpoint = endpoint
        self.attempts = attempts
        self.maxAttempts = maxAttempts
        self.lastReason = lastReason
        self.isProbe = isProbe
        self.outcome = outcome
        self.reasonText = reasonText
        self.isHTTPAnswer = isHTTPAnswer
        self.token = token
        self.deviceToken = deviceToken
    }
}

/// The provider token a request carried: which one, and how old it was when the answer came.
public struct TokenUse: Sendable, Hashable {
    /// The token manager's serial number of the token.
    public var serial: Int
    /// Seconds from the token's `iat` to the answer, by this host's clock.
    public var ageSeconds: Int64

    public init(serial: Int, ageSeconds: Int64) {
        self.serial = serial
        self.ageSeconds = ageSeconds
    }
}

/// What to write for a batch of answers.
public struct Decisions: Sendable, Hashable {
    /// One per answer, in the same order.
    public var dispositions: [Disposition] = []
    /// Endpoints to hold back (at most one per endpoint).
    public var holds: [HoldRequest] = []
    /// Endpoints that had a notification accepted and no new hold: lift their holds.
    public var resumed: [Endpoint] = []

    /// Adds `request`: one hold per endpoint and batch, a credential problem outranking the others.
    mutating func hold(_ request: HoldRequest) {
        if let i = holds.firstIndex(where: { $0.endpoint == request.endpoint }) {
            if holds[i].kind != .credential { holds[i] = request }
        } else {
            holds.append(request)
        }
    }
}

/// Every decision the complete loop makes about answers, as one pure state machine: each
/// answer's ``Disposition``, and per endpoint the burst detector, the outage detector
/// (``EndpointHealth``) and the wrong-clock check, which hold an endpoint back instead of
/// letting its rows use up their attempts or invalidate good tokens.
///
/// The worker feeds it batches of ``Answer``s and writes the ``Decisions`` back, each hold with
/// the seconds to its first probe (``schedule(_:)``); the state lives as long as the worker.
/// Every random draw (retry jitter, hold intervals) comes from the generator it was made with:
/// `SystemRandomNumberGenerator` in production, a seeded one in tests. Time comes in the
/// answers (token ages).
///
/// The rules, beyond ``Disposition/decide(outcome:reason:attempts:maxAttempts:lastReason:policy:unitRandom:)``:
/// - **Outage.** While an endpoint is down, and for every probe of a held endpoint, a failure
///   that says APNs is down (5xx, no connection, timeout) gives the attempt back and waits;
///   the first batch that takes the endpoint down holds it for every worker.
/// - **Burst.** A `BadDeviceToken` / `DeviceTokenNotForTopic` (FCM: `SENDER_ID_MISMATCH`)
///   answer is acted on when the endpoint's detector can judge and shows no burst; in a burst,
///   the row waits and the endpoint is held. The detector is never reset by a hold. While the
///   detector cannot judge yet (a quiet endpoint, a worker just started), the row waits 1–16 s,
///   its attempt given back, **once**: when the row's previous attempt ended with the same
///   reason (``Answer/lastReason``), the answer is taken at face value, so a bad token on a
///   quiet endpoint ends at its second request instead of retrying forever. A busy endpoint's
///   detector fills during that wait, so a wrong environment there is still held. A probe of
///   a held endpoint always waits.
/// - **Wrong clock.** `ExpiredProviderToken` for ``freshTokensToPause`` different tokens that
///   were signed less than ``freshTokenSeconds`` before holds the credential, with a message
///   pointing at the host's clock, instead of resending forever.
/// - **Rejected credential.** ``Outcome/pauseCredential(_:)`` holds the credential.
/// - **FCM quota.** A 429 naming the project's quota holds the credential for its Retry-After.
///   One naming a device, or not saying whose (``FCMVerdict/throttleToken(seconds:)``), retries
///   only its row, unless ``quotaTokensToHold`` different tokens got one and they are more than
///   half of the last 32 tokens answered: then it is the project's, and the credential is held.
public struct Decider: Sendable {
    public var policy: RetryPolicy
    /// How long a hold lasts before its first probe (``schedule(_:)``).
    public var hold: HoldPolicy
    /// Where every jitter is drawn from.
    private var random: any RandomNumberGenerator & Sendable
    /// A token younger than this, in seconds, that APNs calls expired means the clocks
    /// disagree. Defaults to 600 (tokens are valid for 3600).
    public var freshTokenSeconds: Int64 = 600
    /// Different fresh tokens rejected as expired before the credential is held. Defaults to 2.
    public var freshTokensToPause = 2

    /// Different FCM tokens whose 429s, among the credential's recent answers (more than half of
    /// them), mean the project's quota rather than a device's. Defaults to 3.
    public var quotaTokensToHold = 3

    struct EndpointState: Sendable {
        var health = EndpointHealth()
        var burst = BurstDetector()
        /// FCM: the latest answer of each of the last 32 device tokens, suspect when a 429.
        var quota = BurstDetector(capacity: 32, minimumAnswers: 1)
        /// Serials of fresh tokens APNs called expired since the last accepted notification.
        var expiredFreshTokens: Set<Int> = []
        var expiredFreshAge: Int64 = 0
    }
    private var endpoints: [Endpoint: EndpointState] = [:]

    /// - Parameters:
    ///   - policy: retries' backoff.
    ///   - hold: holds' intervals; defaults to `HoldPolicy()`.
    ///   - random: where the jitter is drawn from; defaults to `SystemRandomNumberGenerator()`.
    public init(policy: RetryPolicy, hold: HoldPolicy = HoldPolicy(),
                random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()) {
        self.policy = policy
        self.hold = hold
        self.random = random
    }

    /// Whether `endpoint` is down by this worker's answers.
    public func isDown(_ endpoint: Endpoint) -> Bool { endpoints[endpoint]?.health.isDown ?? false }

    /// Whether `endpoint`'s burst detector shows a burst now.
    public func isBurst(_ endpoint: Endpoint) -> Bool { endpoints[endpoint]?.burst.isBurst ?? false }

    /// Decides a batch of answers.
    ///
    /// The endpoint state is brought up to date with the whole batch first, so every answer
    /// in it is judged on the same state (the answers that take an endpoint down are given
    /// their attempts back too).
    public mutating func decide(_ answers: [Answer]) -> Decisions {
        // Drawn from a copy, written back at the end: judging reads `self` while it draws.
        var random = self.random
        defer { self.random = random }
        let unitRandom = { Double.random(in: 0..<1, using: &random) }
        for a in answers { record(a) }
        var out = Decisions()
        out.dispositions.reserveCapacity(answers.count)
        var resumed: [Endpoint] = []
        for a in answers {
            let (d, hold) = judge(a, endpoints[a.endpoint]!, unitRandom: unitRandom)
            if let hold { out.hold(hold) }
            if d.status == .sent, !resumed.contains(a.endpoint) { resumed.append(a.endpoint) }
            out.dispositions.append(d)
        }
        out.resumed = resumed.filter { e in !out.holds.contains { $0.endpoint == e } }
        return out
    }

    /// The seconds from now to the first probe of each of `holds` (the Decider's, or the worker's
    /// own: a sender it cannot build): what the service said (``HoldRequest/seconds``, FCM's
    /// `Retry-After`), else ``hold``'s first interval for the hold's kind (an outage's drawn).
    public mutating func schedule(_ holds: [HoldRequest]) -> [(hold: HoldRequest, seconds: Double)] {
        holds.map { ($0, $0.seconds ?? hold.interval($0.kind, probes: 0, using: &random)) }
    }

    /// Brings `a`'s endpoint state up to date with it: health, bursts, FCM quota, fresh tokens
    /// APNs called expired.
    private mutating func record(_ a: Answer) {
        var state = endpoints[a.endpoint, default: EndpointState()]
        state.health.record(a.outcome.healthSignal, row: a.row)
        if a.isHTTPAnswer { state.burst.record(row: a.row, suspect: a.outcome.isBurstSuspect) }
        if a.isHTTPAnswer, a.endpoint.provider == .fcm { state.quota.record(row: a.tokenKey, suspect: a.outcome.isQuotaAnswer) }
        switch a.outcome {
        case .sent:
            state.expiredFreshTokens.removeAll()
        case .retryNow(.renewProviderToken):
            if let token = a.token, token.ageSeconds < freshTokenSeconds {
                state.expiredFreshTokens.insert(token.serial)
                state.expiredFreshAge = token.ageSeconds
            }
        default:
            break
        }
        endpoints[a.endpoint] = state
    }

    /// `a`'s disposition on its endpoint's `state` (the whole batch recorded), and the hold it
    /// asks for, if any.
    private func judge(_ a: Answer, _ state: EndpointState, unitRandom: () -> Double) -> (Disposition, HoldRequest?) {
        var d = Disposition.decide(outcome: a.outcome, reason: a.reasonText, attempts: a.attempts, maxAttempts: a.maxAttempts,
                                   lastReason: a.lastReason, policy: policy, unitRandom: unitRandom)
        let signal = a.outcome.healthSignal
        if signal == .unreachable || signal == .serverFailure, state.health.isDown || a.isProbe {
            d = .waiting(reason: d.reason ?? "Unknown", delay: policy.soonDelay(unitRandom: unitRandom))
            guard state.health.isDown else { return (d, nil) }
            return (d, HoldRequest(endpoint: a.endpoint, kind: .outage, reason: d.reason ?? "Unknown",
                                   message: Self.outageMessage(a.endpoint, reason: d.reason ?? "Unknown")))
        } else if a.outcome.isBurstSuspect {
            let reason = d.reason ?? APNsReason.badDeviceToken.rawValue
            let burstReason = a.endpoint.provider == .fcm ? reason + "_BURST" : reason + "Burst"
            if !state.burst.canJudge {
                // Too few answers to tell a bad token from a wrong environment: wait once, 1-16 s,
                // so that a busy endpoint's burst can show; the same answer again is believed
                // (a probe of a held endpoint always waits: the hold says it may be a burst).
                if a.isProbe || a.lastReason != reason {
                    d = .waiting(reason: reason, delay: policy.baseSeconds * (1 + 15 * min(max(unitRandom(), 0), 1)))
                }
            } else if state.burst.isBurst {
                d = .waiting(reason: reason, delay: policy.soonDelay(unitRandom: unitRandom))
                return (d, HoldRequest(endpoint: a.endpoint, kind: .burst, reason: burstReason,
                                       message: Self.burstMessage(a.endpoint, reason: reason)))
            }
        } else if case .retryNow(.renewProviderToken) = a.outcome, state.expiredFreshTokens.count >= freshTokensToPause {
            d = .waiting(reason: d.reason ?? APNsReason.expiredProviderToken.rawValue, delay: policy.soonDelay(unitRandom: unitRandom))
            return (d, HoldRequest(endpoint: a.endpoint, kind: .credential, reason: APNsReason.expiredProviderToken.rawValue,
                                   message: Self.clockMessage(a.endpoint, age: state.expiredFreshAge)))
        } else if case .pauseCredential(let reason) = a.outcome {
            return (d, HoldRequest(endpoint: a.endpoint, kind: .credential, reason: reason,
                                   message: Self.credentialMessage(a.endpoint, reason: reason)))
        } else if case .fcm(.pauseCredential(let code, let message)) = a.outcome {
            return (d, HoldRequest(endpoint: a.endpoint, kind: .credential, reason: code.rawValue,
                                   message: "credential \(a.endpoint.credential) (FCM): " + message + "; its notifications wait"))
        } else if case .webPush(.holdCredential(let reason, let message)) = a.outcome {
            // Held at this origin only: an origin is a subscriber's choice, and one that answers
            // 401/403 (a misconfigured or hostile push service) must not stop the others.
            return (d, HoldRequest(endpoint: a.endpoint, kind: .credential, reason: reason,
                                   message: "credential \(a.endpoint.credential) (Web Push) at \(a.endpoint.channel): " + message + "; its notifications to that origin wait"))
        } else if case .fcm(.throttleToken(let seconds)) = a.outcome, projectQuota(state.quota) {
            // Several different tokens over their rate: the project's quota, whatever each answer said.
            d = .waiting(reason: FCMErrorCode.quotaExceeded.rawValue, delay: max(Double(seconds), policy.baseSeconds))
            return (d, HoldRequest(endpoint: a.endpoint, kind: .outage, reason: FCMErrorCode.quotaExceeded.rawValue,
                                   message: Self.quotaMessage(a.endpoint, seconds: seconds), seconds: d.retryDelay))
        } else if case .fcm(.backOffCredential(let seconds)) = a.outcome {
            // FCM's project quota: the whole credential waits as long as FCM said, its rows
            // keeping their attempts; then one probe tells whether the quota is back.
            return (d, HoldRequest(endpoint: a.endpoint, kind: .outage, reason: FCMErrorCode.quotaExceeded.rawValue,
                                   message: Self.quotaMessage(a.endpoint, seconds: seconds), seconds: d.retryDelay))
        }
        return (d, nil)
    }

    static func outageMessage(_ e: Endpoint, reason: String) -> String {
        "\(e.serviceName) is unreachable or failing for credential \(e.credential) in \(e.channel) (\(reason)): its notifications wait with their attempts given back, and one probe goes out at growing intervals until \(e.serviceName) answers"
    }

    static func quotaMessage(_ e: Endpoint, seconds: Int64) -> String {
        "FCM answered QUOTA_EXCEEDED for credential \(e.credential): the Firebase project's sending quota is used up; its notifications wait \(seconds) s (FCM's Retry-After) with their attempts given back, then one probe checks the quota"
    }

    static func burstMessage(_ e: Endpoint, reason: String) -> String {
        if e.provider == .fcm {
            return "most recent answers for FCM credential \(e.credential) were \(reason): the tokens probably belong to another Firebase project (check project_id in the service account file and the app's sender id); its notifications wait"
        }
        return "most recent answers for credential \(e.credential) in \(e.environment.rawValue) were \(reason): the tokens probably belong to the other environment or app (check PUSHQ_APNS_ENVIRONMENT, the rows' environment and topic); its notifications wait and no token was invalidated"
    }

    static func credentialMessage(_ e: Endpoint, reason: String) -> String {
        if reason == TransportFailure(kind: .signingFailed, message: "").reasonString {
            return "the provider token of credential \(e.credential) cannot be signed (\(reason)): check its .p8 key file; its notifications wait"
        }
        if reason.hasPrefix("ClientCertificate") {
            return "the client certificate of credential \(e.credential) cannot be used (\(reason)): check the certificate file, its password and its expiry date; its notifications wait"
        }
        return "APNs rejected credential \(e.credential) in \(e.environment.rawValue) with \(reason): check the key id, team id, key file or certificate; its notifications wait"
    }

    static func clockMessage(_ e: Endpoint, age: Int64) -> String {
        "APNs answered ExpiredProviderToken to provider tokens of credential \(e.credential) signed \(age) s before by this host's clock: the host's clock is probably wrong (check NTP, e.g. timedatectl or chronyc tracking); its notifications wait"
    }
}
