/// What to do with a notification after one attempt to send it through FCM HTTP v1.
///
/// Produced by the pure ``classify(status:error:retryAfter:)`` from what FCM answered; the
/// worker maps it onto ``Outcome`` and carries it out. Mirrors ``Outcome``'s cases where
/// the two providers agree, and names FCM's own: a credential-wide back-off (quota) and
/// an access-token refresh (401).
public enum FCMVerdict: Sendable, Hashable {
    /// FCM accepted the message (200).
    case sent
    /// The registration token is gone or malformed: record the invalidation and end `failed`.
    case invalidateToken(FCMErrorCode)
    /// A permanent rejection: end `failed` with this code; never retry.
    case fail(FCMErrorCode)
    /// A transient failure: retry after a backoff (at least `retryAfter` seconds when FCM
    /// said so); counts an attempt.
    case retry(RetryKind, retryAfter: Int64?)
    /// QUOTA_EXCEEDED naming the project's quota (``FCMQuotaScope/project``): back off the
    /// whole credential for `seconds` (FCM's Retry-After, or ``defaultQuotaBackoff``); no
    /// attempt is counted.
    case backOffCredential(seconds: Int64)
    /// QUOTA_EXCEEDED (or a 429) for one device's message rate, or not saying whose: retry
    /// this notification after `seconds` (Retry-After, or ``defaultQuotaBackoff``), counting an
    /// attempt, as APNs' 429 `TooManyRequests`; other tokens are not slowed. The ``Decider``
    /// holds the credential instead when several different tokens get it.
    case throttleToken(seconds: Int64)
    /// 401 UNAUTHENTICATED: the access token expired or was revoked. Refresh it once
    /// (``FCMAccessTokenCache/invalidate(_:)``) and resend; no attempt is counted.
    case refreshAccessToken
    /// FCM refuses the credential as a whole: pause it, leave its rows waiting, report
    /// this message (it says what to fix) once.
    case pauseCredential(FCMErrorCode, message: String)

    /// Why a notification is retried after a backoff.
    public enum RetryKind: Sendable, Hashable {
        /// UNAVAILABLE, INTERNAL, UNSPECIFIED_ERROR or an unnamed 5xx: FCM's trouble.
        case serverError(FCMErrorCode?)
        /// A code or status this code does not know (kept verbatim). Retried a few times, then failed.
        case unknown(String)

        /// How many attempts this kind allows before failing, whatever `max_attempts` says:
        /// 3 for an unknown code (it is probably permanent), nil (the row's own limit) otherwise.
        public var attemptLimit: Int? {
            if case .unknown = self { return 3 }
            return nil
        }
    }

    /// The back-off of a QUOTA_EXCEEDED that came without Retry-After: 60 seconds.
    public static let defaultQuotaBackoff: Int64 = 60

    /// Classifies an HTTP answer from FCM.
    ///
    /// - Parameters:
    ///   - status: the `:status` of the answer.
    ///   - error: its parsed error body, nil if none could be read.
    ///   - retryAfter: its `Retry-After` in seconds (``retryAfterSeconds(_:now:)``), nil if none.
    public static func classify(status: Int, error: FCMErrorBody?, retryAfter: Int64?) -> FCMVerdict {
        if status == 200 { return .sent }
        guard let code = error?.code else {
            switch status {
            case 401: return .refreshAccessToken
            case 404: return notFoundPause
            case 429: return quota(error?.quotaScope, retryAfter: retryAfter)
            case 500...599: return .retry(.serverError(nil), retryAfter: retryAfter)
            default: return .retry(.unknown("HTTP\(status)"), retryAfter: retryAfter)
            }
        }
        switch code {
        case .unregistered:
            return .invalidateToken(.unregistered)
        case .invalidArgument:
            if error?.saysTokenInvalid == true { return .invalidateToken(.invalidArgument) }
            return .fail(.invalidArgument)
        case .senderIDMismatch:
            return .fail(.senderIDMismatch)
        case .quotaExceeded:
            return quota(error?.quotaScope, retryAfter: retryAfter)
        case .unavailable, .internalError, .unspecifiedError:
            return .retry(.serverError(code), retryAfter: retryAfter)
        case .thirdPartyAuthError:
            return .pauseCredential(code, message: "FCM refused the APNs or Web Push credential behind this Firebase project (THIRD_PARTY_AUTH_ERROR): upload a valid APNs authentication key or certificate in the Firebase console (Project settings → Cloud Messaging)")
        case .permissionDenied:
            return .pauseCredential(code, message: "FCM denied the service account permission to send (PERMISSION_DENIED): grant it the Firebase Cloud Messaging API Admin role (or cloudmessaging.messages.create) and check that the FCM API is enabled for the project")
        case .unauthenticated:
            return .refreshAccessToken
        case .notFound:
            // An unknown token comes with the FcmError detail UNREGISTERED; a bare NOT_FOUND is
            // the URL's (a wrong project): never invalidate tokens for it.
            return notFoundPause
        case .unknown(let text):
            if status >= 500 { return .retry(.serverError(code), retryAfter: retryAfter) }
            if status == 429 { return quota(error?.quotaScope, retryAfter: retryAfter) }
            return .retry(.unknown(text), retryAfter: retryAfter)
        }
    }

    /// A quota answer: the credential backs off when the answer names the project's quota;
    /// otherwise (a device's rate, or not said) only this notification waits.
    static func quota(_ scope: FCMQuotaScope?, retryAfter: Int64?) -> FCMVerdict {
        let seconds = retryAfter ?? defaultQuotaBackoff
        return scope == .project ? .backOffCredential(seconds: seconds) : .throttleToken(seconds: seconds)
    }

    static let notFoundPause = FCMVerdict.pauseCredential(.notFound, message: "FCM answered 404 NOT_FOUND without naming the registration token: check project_id in the service account file and that the Firebase Cloud Messaging API is enabled for the project")

    /// The verdict for a refused OAuth exchange: pause the credential with the refusal's
    /// message, which says what to fix.
    public static func tokenRefused(_ refusal: FCMTokenRefusal) -> FCMVerdict {
        .pauseCredential(.unauthenticated, message: refusal.description)
    }

    /// Whether many of these across one credential in a short time point at a wrong
    /// project rather than at bad tokens (SENDER_ID_MISMATCH: tokens of another sender),
    /// as `DeviceTokenNotForTopic` does for APNs: the worker should then pause the credential.
    public var isBurstSuspect: Bool {
        if case .fail(.senderIDMismatch) = self { return true }
        return false
    }

    /// What this verdict says about the endpoint (credential, project); see ``EndpointHealth``.
    /// UNAVAILABLE and INTERNAL count as server failures.
    public var healthSignal: EndpointHealth.Signal {
        switch self {
        case .sent, .invalidateToken, .fail, .backOffCredential, .throttleToken, .refreshAccessToken: return .reachable
        case .retry(.serverError, _): return .serverFailure
        case .retry(.unknown, _): return .reachable
        case .pauseCredential: return .none
        }
    }

    /// Reads a `Retry-After` header: delta-seconds (`"120"`) or an IMF-fixdate
    /// (`"Wed, 21 Oct 2026 07:28:00 GMT"`) turned into seconds from `now` (UNIX seconds).
    /// Nil for anything else; never negative; at most one day.
    public static func retryAfterSeconds(_ header: String?, now: Int64) -> Int64? {
        guard let text = header.map(HTTPDate.trimmed), !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            guard let n = Int64(text) else { return 86_400 }
            return min(n, 86_400)
        }
        guard let date = HTTPDate.parse(text) else { return nil }
        return min(max(date - now, 0), 86_400)
    }
}
