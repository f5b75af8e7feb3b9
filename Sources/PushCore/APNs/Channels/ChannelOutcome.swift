/// What to do after one request to APNs' channel-management API: the pure classification of
/// its answer (or of why none came), as ``Outcome`` is for pushes. The worker's channel loop
/// carries it out with the same retry, hold and outage rules as notifications.
///
/// | answer | outcome |
/// |---|---|
/// | the operation's success status (201 create with `apns-channel-id`, 204 delete, 200 read or list with its body) | ``done`` |
/// | 400/404/410 `ChannelNotRegistered` to a read or a delete | ``gone`` (the channel no longer exists at Apple) |
/// | 400 `BadChannelId`, `MissingChannelId`, `InvalidPushType`, `MissingPushType`, `BadPath`, `MethodNotAllowed`, `PayloadEmpty`…, 413 | ``fail(_:)`` (final) |
/// | 400 `CannotCreateChannelConfig` (10 000 channels in the environment) | ``fail(_:)`` (final: delete channels, then ask again) |
/// | 403 `InvalidProviderToken`, `MissingProviderToken`, `BadCertificate`, `BadCertificateEnvironment`, `BadEnvironmentKeyIdInToken` (or `BadEnvironmentKeyInToken`), `TopicDisallowed`, `FeatureNotEnabled` | ``hold(_:reason:)`` `.credential` |
/// | 403 `ExpiredProviderToken`; 429 `TooManyProviderTokenUpdates`, 403 `UnrelatedKeyIdInToken`, 503 `Shutdown` | ``retryNow(_:)`` |
/// | 429 `TooManyRequests`, 400 `IdleTimeout`, 5xx, another reason | ``retry(_:)`` |
/// | no answer (connect, TLS, timeout, reset) | ``retry(_:)`` `.outcomeUnknown`; a transport failure of the credential (signing, certificate) is a credential hold |
/// | a success status without what it must carry (a 201 without `apns-channel-id`) | ``retry(_:)`` `.unknownReason` |
public enum ChannelOutcome: Sendable, Hashable {
    /// The operation took effect: the channel was created (its id is the answer's
    /// ``ChannelAnswer/channelID``), deleted, read or listed.
    case done
    /// The channel does not exist at Apple (a read or a delete answered `ChannelNotRegistered`):
    /// for a delete, the wanted state already; for a read, the channel is gone.
    case gone
    /// A permanent rejection: record the reason, never resend the same request.
    case fail(APNsReason)
    /// A transient failure: resend after the retry policy's backoff; counts an attempt.
    case retry(Outcome.RetryKind)
    /// Resend at once, after renewing the provider token or on a fresh connection; counts no attempt.
    case retryNow(Outcome.RetryNowReason)
    /// The credential cannot manage channels until someone fixes it: hold it, as a credential
    /// pause holds its notifications, and probe it later.
    case hold(HoldKind, reason: String)

    /// Classifies an HTTP answer to `operation`.
    public static func classify(_ answer: ChannelAnswer, operation: ChannelOperation) -> ChannelOutcome {
        if answer.status == operation.successStatus {
            switch operation {
            case .create: return answer.channelID == nil ? .retry(.unknownReason("MissingChannelIdHeader")) : .done
            case .listAll: return answer.channels == nil ? .retry(.unknownReason("MissingChannelList")) : .done
            case .read, .delete: return .done
            }
        }
        guard let reason = answer.reason else {
            switch answer.status {
            case 429: return .retry(.tooManyRequests)
            case 500...599: return .retry(.serverError(nil))
            case 413: return .fail(.payloadTooLarge)
            default: return .retry(.unknownReason("HTTP\(answer.status)"))
            }
        }
        switch reason {
        case .channelNotRegistered:
            if case .create = operation { return .fail(reason) }
            return .gone
        case .badChannelId, .missingChannelId, .invalidPushType, .missingPushType, .badPath, .methodNotAllowed,
             .payloadEmpty, .payloadTooLarge, .badMessageId, .duplicateHeaders, .badTopic, .missingTopic,
             .cannotCreateChannelConfig, .badExpirationDate, .badPriority, .badCollapseId, .badDeviceToken,
             .deviceTokenNotForTopic, .missingDeviceToken, .forbidden, .expiredToken, .unregistered:
            return .fail(reason)
        case .invalidProviderToken, .missingProviderToken, .badCertificate, .badCertificateEnvironment,
             .badEnvironmentKeyIdInToken, .badEnvironmentKeyInToken, .topicDisallowed, .featureNotEnabled:
            return .hold(.credential, reason: reason.rawValue)
        case .expiredProviderToken:
            return .retryNow(.renewProviderToken)
        case .unrelatedKeyIdInToken, .tooManyProviderTokenUpdates, .shutdown:
            return .retryNow(.freshConnection(reason))
        case .tooManyRequests:
            return .retry(.tooManyRequests)
        case .idleTimeout:
            return .retry(.idleTimeout)
        case .internalServerError, .serviceUnavailable:
            return .retry(.serverError(reason))
        case .unknown(let text):
            return answer.status >= 500 ? .retry(.serverError(reason)) : .retry(.unknownReason(text))
        }
    }

    /// Classifies a request that got no answer, as ``Outcome/classify(_:)-(TransportFailure)``
    /// does: the credential's own failures hold it, a value that cannot be sent fails the
    /// request, anything else is retried (the outcome is unknown: a create may have taken effect).
    public static func classify(_ failure: TransportFailure) -> ChannelOutcome {
        switch Outcome.classify(failure) {
        case .pauseCredential(let reason): return .hold(.credential, reason: reason)
        case .failLocally(let reason): return .fail(.unknown(reason))
        case .retry(let kind): return .retry(kind)
        default: return .retry(.outcomeUnknown(failure.kind))
        }
    }

    /// What this outcome says about the endpoint's reachability (``EndpointHealth``), as the
    /// same answer to a push would.
    public var healthSignal: EndpointHealth.Signal {
        switch self {
        case .done, .gone, .fail: return .reachable
        case .hold: return .none
        case .retry(let kind): return Outcome.retry(kind).healthSignal
        case .retryNow(let reason): return Outcome.retryNow(reason).healthSignal
        }
    }

    /// The reason to record (`last_reason` of the channel's row), nil for ``done``.
    public var reasonText: String? {
        switch self {
        case .done: return nil
        case .gone: return APNsReason.channelNotRegistered.rawValue
        case .fail(let reason): return reason.rawValue
        case .hold(_, let reason): return reason
        case .retry(let kind):
            switch kind {
            case .outcomeUnknown(let failure): return TransportFailure(kind: failure, message: "").reasonString
            case .serverError(let reason): return reason?.rawValue ?? "ServerError"
            case .tooManyRequests: return APNsReason.tooManyRequests.rawValue
            case .idleTimeout: return APNsReason.idleTimeout.rawValue
            case .unknownReason(let text): return text
            }
        case .retryNow(.renewProviderToken): return APNsReason.expiredProviderToken.rawValue
        case .retryNow(.freshConnection(let reason)): return reason.rawValue
        }
    }
}
