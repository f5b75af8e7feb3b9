/// What to do with a notification after one attempt to send it.
///
/// Produced by the pure ``Outcome/classify(status:reason:timestamp:)`` and
/// ``Outcome/classify(_:)-(TransportFailure)`` from what APNs (or the network) answered;
/// the worker only carries it out. Apple's table of reasons, and what each one means,
/// is in `design/apns.md`.
public enum Outcome: Sendable, Hashable {
    /// APNs accepted the notification (200).
    case sent
    /// A transient failure: retry after a backoff (``RetryPolicy``); counts an attempt.
    case retry(RetryKind)
    /// Retry at once — after renewing the provider token or on a fresh connection.
    /// The failure is the connection's, not the notification's: no attempt is counted.
    case retryNow(RetryNowReason)
    /// The device token is no longer valid: record the invalidation and end `failed`.
    ///
    /// `at` is APNs' 410 `timestamp` in milliseconds since the epoch, or nil when the
    /// answer carries none (e.g. `BadDeviceToken`): use the time of the answer.
    case invalidateToken(reason: APNsReason, at: Int64?)
    /// A permanent rejection: end `failed` with this reason; never retry.
    case fail(APNsReason)
    /// A request that cannot be sent as it is (`InvalidHeader`): found locally before any
    /// byte left, it ends `failed` with this reason, is never retried and says nothing about APNs.
    case failLocally(String)
    /// APNs rejects the credential as a whole: pause it, leave its rows waiting, report once.
    case pauseCredential(String)
    /// `expires_at` passed while the notification waited for a stream: it was never sent
    /// and ends `expired`.
    case expiredBeforeSending
    /// FCM's answer to a notification of the `fcm` provider (see ``FCMVerdict``, and
    /// ``Disposition/decide(outcome:reason:attempts:maxAttempts:lastReason:policy:unitRandom:)``
    /// for what becomes of the row). A request to FCM that got no answer is ``retry(_:)``
    /// `.outcomeUnknown`, as for APNs.
    case fcm(FCMVerdict)
    /// A Web Push service's answer, or the sender's refusal of the endpoint (see
    /// ``WebPushVerdict``, and ``Disposition/decide(webPush:reason:attempts:maxAttempts:lastReason:policy:unitRandom:)``).
    /// A request that got no answer is ``retry(_:)`` `.outcomeUnknown`, as for APNs and FCM.
    case webPush(WebPushVerdict)

    /// Why a notification is retried after a backoff.
    public enum RetryKind: Sendable, Hashable {
        /// No answer (network error, reset, GOAWAY, timeout): APNs may or may not have it.
        case outcomeUnknown(TransportFailure.Kind)
        /// 500 `InternalServerError` or 503 `ServiceUnavailable` (or an unnamed 5xx).
        case serverError(APNsReason?)
        /// 429 `TooManyRequests`: this device token is throttled for minutes; slow only it.
        case tooManyRequests
        /// 400 `IdleTimeout`: the connection idled out; reopen and retry soon.
        case idleTimeout
        /// A reason this code does not know (kept verbatim). Retried a few times, then failed.
        case unknownReason(String)

        /// How many attempts this kind allows before failing, whatever `max_attempts` says.
        ///
        /// 3 for an unknown reason (it is probably permanent), nil (the row's own limit) otherwise.
        public var attemptLimit: Int? {
            if case .unknownReason = self { return 3 }
            return nil
        }
    }

    /// Why a notification is retried at once without counting an attempt.
    public enum RetryNowReason: Sendable, Hashable {
        /// 403 `ExpiredProviderToken`: mint a new JWT, reopen the connection, resend.
        case renewProviderToken
        /// 429 `TooManyProviderTokenUpdates`, 403 `UnrelatedKeyIdInToken`, 503 `Shutdown`:
        /// the connection is unusable; resend on a fresh one.
        case freshConnection(APNsReason)
    }

    /// Whether many of these across one credential in a short time point at a wrong
    /// environment or topic rather than at bad tokens (`BadDeviceToken`,
    /// `DeviceTokenNotForTopic`; FCM's `SENDER_ID_MISMATCH`, tokens of another Firebase
    /// project): the worker should then pause the credential instead.
    public var isBurstSuspect: Bool {
        switch self {
        case .invalidateToken(.badDeviceToken, _), .fail(.deviceTokenNotForTopic): return true
        case .fcm(let verdict): return verdict.isBurstSuspect
        case .webPush(let verdict): return verdict.isBurstSuspect
        default: return false
        }
    }

    /// Classifies an HTTP answer from APNs.
    ///
    /// - Parameters:
    ///   - status: the `:status` of the answer.
    ///   - reason: the `reason` of its JSON body, nil if none.
    ///   - timestamp: the `timestamp` of its JSON body (milliseconds; 410 only), nil if none.
    public static func classify(status: Int, reason: APNsReason?, timestamp: Int64? = nil) -> Outcome {
        if status == 200 { return .sent }
        guard let reason else {
            // No reason: go by the status alone.
            switch status {
            case 410: return .invalidateToken(reason: .unregistered, at: timestamp)
            case 429: return .retry(.tooManyRequests)
            case 500...599: return .retry(.serverError(nil))
            default: return .retry(.unknownReason("HTTP\(status)"))
            }
        }
        switch reason {
        case .badDeviceToken:
            return .invalidateToken(reason: .badDeviceToken, at: nil)
        case .unregistered, .expiredToken:
            return .invalidateToken(reason: reason, at: timestamp)
        case .deviceTokenNotForTopic, .forbidden, .payloadTooLarge, .badPath, .methodNotAllowed,
             .badCollapseId, .badExpirationDate, .badMessageId, .badPriority, .duplicateHeaders,
             .invalidPushType, .missingDeviceToken, .payloadEmpty,
             .badTopic, .missingTopic, .topicDisallowed,
             .missingChannelId, .badChannelId, .channelNotRegistered, .missingPushType,
             .cannotCreateChannelConfig, .featureNotEnabled:
            return .fail(reason)
        case .idleTimeout:
            return .retry(.idleTimeout)
        case .expiredProviderToken:
            return .retryNow(.renewProviderToken)
        case .unrelatedKeyIdInToken, .tooManyProviderTokenUpdates, .shutdown:
            return .retryNow(.freshConnection(reason))
        case .invalidProviderToken, .missingProviderToken, .badCertificate,
             .badCertificateEnvironment, .badEnvironmentKeyIdInToken, .badEnvironmentKeyInToken:
            return .pauseCredential(reason.rawValue)
        case .tooManyRequests:
            return .retry(.tooManyRequests)
        case .internalServerError, .serviceUnavailable:
            return .retry(.serverError(reason))
        case .unknown(let text):
            if status >= 500 { return .retry(.serverError(reason)) }
            return .retry(.unknownReason(text))
        }
    }

    /// Classifies a request that got no answer: the outcome is unknown, retry it.
    ///
    /// A client certificate that cannot be loaded, or a provider token that cannot be signed,
    /// is the credential's problem, not the notification's: it pauses the credential. A header
    /// value that cannot be sent is the notification's own, found before sending: it fails it.
    public static func classify(_ failure: TransportFailure) -> Outcome {
        switch failure.kind {
        case .clientCertificate, .clientCertificateExpired, .signingFailed: return .pauseCredential(failure.reasonString)
        case .invalidHeader: return .failLocally(failure.reasonString)
        case .timeout, .connect, .tls, .connectionLost, .cancelled, .other: return .retry(.outcomeUnknown(failure.kind))
        }
    }
}

extension Outcome {
    /// What this outcome says about its endpoint (credential, environment): whether APNs
    /// could be reached and answered, or not. See ``EndpointHealth``.
    public var healthSignal: EndpointHealth.Signal {
        switch self {
        case .sent, .invalidateToken, .fail:
            return .reachable
        case .pauseCredential, .failLocally:
            // The credential's or the request's problem (nothing left the host): no signal.
            return .none
        case .retry(.serverError):
            return .serverFailure
        case .retry(.outcomeUnknown(let kind)):
            switch kind {
            case .connect, .tls: return .unreachable
            case .timeout, .connectionLost: return .serverFailure
            case .clientCertificate, .clientCertificateExpired, .signingFailed, .invalidHeader, .cancelled, .other: return .none
            }
        case .retry(.tooManyRequests), .retry(.idleTimeout), .retry(.unknownReason):
            return .reachable
        case .retryNow(.freshConnection(.shutdown)):
            return .serverFailure
        case .retryNow:
            return .reachable
        case .expiredBeforeSending:
            return .none
        case .fcm(let verdict):
            return verdict.healthSignal
        case .webPush(let verdict):
            return verdict.healthSignal
        }
    }

    /// Whether this outcome is a connection-level failure that delivered nothing for sure:
    /// the connection or the TLS handshake never came up. It never counts an attempt.
    public var deliveredNothing: Bool {
        if case .retry(.outcomeUnknown(let kind)) = self { return kind == .connect || kind == .tls }
        return false
    }
}
