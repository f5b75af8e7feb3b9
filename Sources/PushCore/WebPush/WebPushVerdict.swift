/// What to do with a notification after one attempt to send it to a Web Push service.
///
/// Produced by the pure ``classify(status:reason:retryAfter:)`` from what the push service
/// answered (issue 47's answers table); the worker will carry it out as it carries out
/// ``FCMVerdict`` — `Outcome.webPush(WebPushVerdict)`, beside `.fcm`, and
/// ``Disposition/decide(webPush:reason:attempts:maxAttempts:lastReason:policy:unitRandom:)`` is
/// its disposition. The cases mirror ``Outcome``'s and ``FCMVerdict``'s where the providers agree.
/// A request that got no answer is `Outcome.retry(.outcomeUnknown)`, as for APNs and FCM. Whether
/// an answer ends the row or costs an attempt is the Disposition's to say, as for the others.
public enum WebPushVerdict: Sendable, Hashable {
    /// Any 2xx: the push service took the message.
    case sent
    /// 404 `NotFound` or 410 `Gone`: the subscription is gone. Record the exact endpoint as
    /// invalidated in `pushq.devices` and end `failed`.
    case invalidateEndpoint(WebPushReason)
    /// A permanent rejection: 413 `PayloadTooLarge`, 400 `BadRequest`, or a 3xx (`Redirect`,
    /// never followed). End `failed`; never retried, nothing invalidated.
    case fail(WebPushReason)
    /// The endpoint may not be connected to (``WebPushEndpointPolicy``): no connection was made.
    /// End `failed` / `EndpointNotAllowed`.
    case endpointNotAllowed(WebPushEndpointRefusal)
    /// A transient failure (500, 503, any other 5xx) or a status this code does not know: retry
    /// after the backoff, and no sooner than `retryAfter` seconds when the service said so;
    /// counts an attempt.
    case retry(RetryKind, retryAfter: Int64?)
    /// 429: this subscription is sent too much. Retry it no sooner than `seconds` (Retry-After,
    /// or ``defaultThrottleSeconds``), slowing only it; no attempt is counted.
    case throttleSubscription(seconds: Int64)
    /// 401 or 403: the push service refuses the VAPID credential (key, subject, token), as APNs'
    /// `InvalidProviderToken`. Hold the credential, leave its rows waiting, report `message` once.
    case holdCredential(reason: String, message: String)

    /// Why a notification is retried after a backoff.
    public enum RetryKind: Sendable, Hashable {
        /// A 5xx: the push service's trouble.
        case serverError(status: Int)
        /// A status outside the table (a 1xx, an unlisted 4xx), kept as `HTTP<status>`. Retried a
        /// few times, then failed.
        case unknown(String)

        /// How many attempts this kind allows whatever `max_attempts` says: 3 for an unknown
        /// status (it is probably permanent), nil (the row's own limit) otherwise.
        public var attemptLimit: Int? {
            if case .unknown = self { return 3 }
            return nil
        }

        /// The `last_reason` it records.
        public var reasonText: String {
            switch self {
            case .serverError(let status): return "HTTP\(status)"
            case .unknown(let text): return text
            }
        }
    }

    /// How long a 429 without `Retry-After` slows its subscription: 60 seconds.
    public static let defaultThrottleSeconds: Int64 = 60

    /// Classifies an HTTP answer from a push service.
    ///
    /// - Parameters:
    ///   - status: the answer's status.
    ///   - reason: the service's own reason from its body (Apple's `{"reason":"BadJwtToken"}`),
    ///     nil if none: it only words the credential hold's message.
    ///   - retryAfter: its `Retry-After` in seconds (``WebPushAnswer/retryAfterSeconds(_:now:)``), nil if none.
    public static func classify(status: Int, reason: String? = nil, retryAfter: Int64?) -> WebPushVerdict {
        switch status {
        case 200...299: return .sent
        case 300...399: return .fail(.redirect)
        case 404: return .invalidateEndpoint(.notFound)
        case 410: return .invalidateEndpoint(.gone)
        case 413: return .fail(.payloadTooLarge)
        case 400: return .fail(.badRequest)
        case 401, 403:
            let named: WebPushReason = status == 401 ? .unauthorized : .forbidden
            let said = reason.map { " (\($0))" } ?? ""
            return .holdCredential(reason: named.rawValue, message: "the push service answered \(status) \(named.rawValue)\(said): it refuses the VAPID credential; check the key file, the subject (a mailto: or https: URI of a public domain) and the host's clock")
        case 429: return .throttleSubscription(seconds: retryAfter ?? defaultThrottleSeconds)
        case 500...599: return .retry(.serverError(status: status), retryAfter: retryAfter)
        default: return .retry(.unknown("HTTP\(status)"), retryAfter: retryAfter)
        }
    }

    /// Never: every Web Push subscription has an endpoint of its own, so many 404s are many
    /// gone subscriptions, not a wrong environment (APNs' `BadDeviceToken` burst has no analogue).
    public var isBurstSuspect: Bool { false }

    /// What this verdict says about the endpoint (the credential's push service; see ``EndpointHealth``).
    public var healthSignal: EndpointHealth.Signal {
        switch self {
        case .sent, .invalidateEndpoint, .fail, .throttleSubscription, .retry(.unknown, _): return .reachable
        case .retry(.serverError, _): return .serverFailure
        case .endpointNotAllowed, .holdCredential: return .none
        }
    }

    /// The `last_reason` this verdict records, nil for ``sent``.
    public var reasonText: String? {
        switch self {
        case .sent: return nil
        case .invalidateEndpoint(let r), .fail(let r): return r.rawValue
        case .endpointNotAllowed: return WebPushEndpointRefusal.reason
        case .retry(let kind, _): return kind.reasonText
        case .throttleSubscription: return WebPushReason.tooManyRequests.rawValue
        case .holdCredential(let reason, _): return reason
        }
    }
}

/// The reasons a Web Push answer records in `last_reason` (the services send no common
/// reason vocabulary, so these name the status, in the CamelCase of APNs' reasons).
public enum WebPushReason: String, Sendable, Hashable, CaseIterable {
    case notFound = "NotFound"
    case gone = "Gone"
    case payloadTooLarge = "PayloadTooLarge"
    case badRequest = "BadRequest"
    case redirect = "Redirect"
    case unauthorized = "Unauthorized"
    case forbidden = "Forbidden"
    case tooManyRequests = "TooManyRequests"
}
