/// An FCM HTTP v1 error: an `FcmError` `errorCode`, or a bare google.rpc status FCM answers
/// without one, with the HTTP status and the google.rpc status Google puts beside it.
///
/// From Google's references: "ErrorCode" (firebase.google.com/docs/reference/fcm/rest/v1/ErrorCode:
/// each code with its HTTP error code) and the Google API error model (cloud.google.com/apis/
/// design/errors: PERMISSION_DENIED 403, UNAUTHENTICATED 401, NOT_FOUND 404, RESOURCE_EXHAUSTED
/// 429, UNAVAILABLE 503, INTERNAL 500, INVALID_ARGUMENT 400).
public enum MockFCMErrorCode: String, Sendable, CaseIterable, Hashable {
    // FcmError.errorCode values.
    case unspecifiedError = "UNSPECIFIED_ERROR", invalidArgument = "INVALID_ARGUMENT"
    case unregistered = "UNREGISTERED", senderIDMismatch = "SENDER_ID_MISMATCH"
    case quotaExceeded = "QUOTA_EXCEEDED", unavailable = "UNAVAILABLE", internalError = "INTERNAL"
    case thirdPartyAuthError = "THIRD_PARTY_AUTH_ERROR"
    // google.rpc statuses FCM answers without an FcmError detail.
    case permissionDenied = "PERMISSION_DENIED", unauthenticated = "UNAUTHENTICATED", notFound = "NOT_FOUND"

    /// The HTTP status (ErrorCode: INVALID_ARGUMENT 400, UNREGISTERED 404, SENDER_ID_MISMATCH 403,
    /// QUOTA_EXCEEDED 429, UNAVAILABLE 503, INTERNAL 500, THIRD_PARTY_AUTH_ERROR 401;
    /// UNSPECIFIED_ERROR has none documented: 500, as for INTERNAL).
    public var status: Int {
        switch self {
        case .invalidArgument: return 400
        case .unauthenticated, .thirdPartyAuthError: return 401
        case .senderIDMismatch, .permissionDenied: return 403
        case .unregistered, .notFound: return 404
        case .quotaExceeded: return 429
        case .unspecifiedError, .internalError: return 500
        case .unavailable: return 503
        }
    }

    /// The google.rpc `status` of the error body (`error.status`): the canonical status of
    /// ``status`` in Google's error model.
    public var googleStatus: String {
        switch self {
        case .invalidArgument: return "INVALID_ARGUMENT"
        case .unauthenticated, .thirdPartyAuthError: return "UNAUTHENTICATED"
        case .senderIDMismatch, .permissionDenied: return "PERMISSION_DENIED"
        case .unregistered, .notFound: return "NOT_FOUND"
        case .quotaExceeded: return "RESOURCE_EXHAUSTED"
        case .unspecifiedError, .internalError: return "INTERNAL"
        case .unavailable: return "UNAVAILABLE"
        }
    }

    /// Whether FCM answers it as a bare google.rpc status, without an `FcmError` detail.
    var isBareStatus: Bool { self == .unauthenticated || self == .permissionDenied || self == .notFound }

    /// A message like FCM's for this code.
    var defaultMessage: String {
        switch self {
        case .unregistered, .notFound: return "Requested entity was not found."
        case .invalidArgument: return "Request contains an invalid argument."
        case .senderIDMismatch: return "SenderId mismatch"
        case .quotaExceeded: return "Quota exceeded for quota metric 'Send requests' of service 'fcm.googleapis.com'."
        case .unavailable: return "The service is currently unavailable."
        case .internalError, .unspecifiedError: return "Internal error encountered."
        case .thirdPartyAuthError: return "Auth error from APNS or Web Push Service"
        case .permissionDenied: return "The caller does not have permission"
        case .unauthenticated: return "Request had invalid authentication credentials."
        }
    }
}
