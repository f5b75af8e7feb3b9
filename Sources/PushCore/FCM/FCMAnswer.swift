/// What FCM answered beside the status, or what the sender concluded about the credential
/// without an answer (``ProviderAnswer/fcm(_:)``).
public struct FCMAnswer: Sendable, Hashable {
    /// The message `name` of a 200 (`projects/{id}/messages/{n}`), nil if the body had none.
    public var messageName: String?
    /// The parsed error body of an error answer, nil if it could not be read.
    public var error: FCMErrorBody?
    /// The answer's `Retry-After`, in seconds from when it came (delta-seconds or an
    /// HTTP-date; ``FCMVerdict/retryAfterSeconds(_:now:)``), nil without one.
    public var retryAfterSeconds: Int64?
    /// What the sender itself concluded about the credential, without FCM answering this
    /// request: its token exchange was refused (``FCMVerdict/tokenRefused(_:)``), or a fresh
    /// access token got 401 too (`.pauseCredential(.unauthenticated, …)`). Nil otherwise.
    public var credentialVerdict: FCMVerdict?

    public init(messageName: String? = nil, error: FCMErrorBody? = nil, retryAfterSeconds: Int64? = nil,
                credentialVerdict: FCMVerdict? = nil) {
        self.messageName = messageName
        self.error = error
        self.retryAfterSeconds = retryAfterSeconds
        self.credentialVerdict = credentialVerdict
    }

    /// `.fcm(`the sender's verdict`)`, else `.fcm(`FCM's answer with `status` classified by
    /// ``FCMVerdict/classify(status:error:retryAfter:)```)`, else nil (no answer).
    ///
    /// A 401 UNAUTHENTICATED is resent by the sender with a new access token and never
    /// reported, except after two resends (`.fcm(.refreshAccessToken)`) or during shutdown;
    /// a fresh token refused too is ``credentialVerdict``.
    public func outcome(status: Int?) -> Outcome? {
        if let credentialVerdict { return .fcm(credentialVerdict) }
        return status.map { .fcm(FCMVerdict.classify(status: $0, error: error, retryAfter: retryAfterSeconds)) }
    }
}
