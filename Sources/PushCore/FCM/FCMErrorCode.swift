/// An FCM HTTP v1 error: the `errorCode` of the answer's `FcmError` detail, or else the
/// Google API `status` of the error.
///
/// Unknown strings are kept in `.unknown` so nothing Google adds later is lost.
public enum FCMErrorCode: Sendable, Hashable {
    // FcmError.errorCode values.
    case unspecifiedError, invalidArgument, unregistered, senderIDMismatch, quotaExceeded
    case unavailable, internalError, thirdPartyAuthError
    // google.rpc statuses FCM answers without an FcmError detail.
    case permissionDenied, unauthenticated, notFound
    case unknown(String)

    /// Every known code.
    public static let known: [FCMErrorCode] = [
        .unspecifiedError, .invalidArgument, .unregistered, .senderIDMismatch, .quotaExceeded,
        .unavailable, .internalError, .thirdPartyAuthError, .permissionDenied, .unauthenticated, .notFound,
    ]

    public init(_ string: String) {
        self = Self.known.first { $0.rawValue == string } ?? .unknown(string)
    }

    /// The string FCM uses, e.g. `"UNREGISTERED"`.
    public var rawValue: String {
        switch self {
        case .unspecifiedError: return "UNSPECIFIED_ERROR"
        case .invalidArgument: return "INVALID_ARGUMENT"
        case .unregistered: return "UNREGISTERED"
        case .senderIDMismatch: return "SENDER_ID_MISMATCH"
        case .quotaExceeded: return "QUOTA_EXCEEDED"
        case .unavailable: return "UNAVAILABLE"
        case .internalError: return "INTERNAL"
        case .thirdPartyAuthError: return "THIRD_PARTY_AUTH_ERROR"
        case .permissionDenied: return "PERMISSION_DENIED"
        case .unauthenticated: return "UNAUTHENTICATED"
        case .notFound: return "NOT_FOUND"
        case .unknown(let s): return s
        }
    }

    /// The HTTP status FCM answers with this code (used by the mock; the client
    /// classifies on the status it actually received).
    public var httpStatus: Int {
        switch self {
        case .invalidArgument: return 400
        case .unauthenticated, .thirdPartyAuthError: return 401
        case .senderIDMismatch, .permissionDenied: return 403
        case .unregistered, .notFound: return 404
        case .quotaExceeded: return 429
        case .unspecifiedError, .internalError, .unknown: return 500
        case .unavailable: return 503
        }
    }

    /// The google.rpc `status` FCM puts next to this code's FcmError detail.
    public var googleStatus: String {
        switch self {
        case .invalidArgument: return "INVALID_ARGUMENT"
        case .unauthenticated, .thirdPartyAuthError: return "UNAUTHENTICATED"
        case .senderIDMismatch, .permissionDenied: return "PERMISSION_DENIED"
        case .unregistered, .notFound: return "NOT_FOUND"
        case .quotaExceeded: return "RESOURCE_EXHAUSTED"
        case .unspecifiedError, .internalError, .unknown: return "INTERNAL"
        case .unavailable: return "UNAVAILABLE"
        }
    }
}
