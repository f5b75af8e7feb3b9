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
}
