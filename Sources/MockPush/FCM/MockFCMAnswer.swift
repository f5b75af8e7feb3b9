/// What the mock's `messages:send` does with one request that passed validation.
///
/// JSON form (control API): `{"kind":"error","code":"UNREGISTERED","retryAfter":"30"}`;
/// `kind` is `normal` (200 with a message name) or `error` (`code`'s HTTP status, or
/// `status` when given, and FCM's error body: `error.status` the code's google.rpc status,
/// an FcmError detail naming `code` unless it is a bare status such as UNAUTHENTICATED,
/// `message` or a default one). `retryAfter` adds a `Retry-After` header.
public struct MockFCMAnswer: MockRuleAnswer {
    public enum Kind: String, Sendable, Hashable, Codable {
        case normal, error
    }

    public var kind: Kind
    /// The FcmError `errorCode` or google.rpc status, e.g. `UNREGISTERED`, `PERMISSION_DENIED`.
    public var code: String?
    /// The HTTP status; defaults to the code's (``MockFCMErrorCode/status``; 500 for a code Google does not document).
    public var status: Int?
    /// `error.message`; defaults to a message like FCM's for the code.
    public var message: String?
    /// The `Retry-After` header's value, verbatim.
    public var retryAfter: String?

    public init(kind: Kind, code: String? = nil, status: Int? = nil, message: String? = nil, retryAfter: String? = nil) {
        self.kind = kind
        self.code = code
        self.status = status
        self.message = message
        self.retryAfter = retryAfter
    }

    /// 200 `{"name":"projects/<id>/messages/<n>"}`.
    public static let normal = MockFCMAnswer(kind: .normal)

    /// FCM's answer for `code`, with its status and an optional Retry-After.
    public static func error(_ code: MockFCMErrorCode, message: String? = nil, retryAfter: String? = nil) -> MockFCMAnswer {
        MockFCMAnswer(kind: .error, code: code.rawValue, message: message, retryAfter: retryAfter)
    }

    /// 400 INVALID_ARGUMENT saying the registration token is not valid, as FCM answers a malformed token.
    public static let invalidRegistrationToken = MockFCMAnswer.error(
        .invalidArgument, message: "The registration token is not a valid FCM registration token")

    /// The HTTP status this answer carries.
    public var httpStatus: Int {
        if kind == .normal { return 200 }
        return status ?? errorCode?.status ?? 500
    }

    /// `code` when it is one Google documents.
    var errorCode: MockFCMErrorCode? { MockFCMErrorCode(rawValue: code ?? "INTERNAL") }
}
