/// What a Web Push service answered beside the status, or what the sender concluded without an
/// answer (the endpoint refused before connecting): the Web Push counterpart of ``FCMAnswer``
/// (``ProviderAnswer/webPush(_:)``).
public struct WebPushAnswer: Sendable, Hashable {
    /// The 201's `Location` (the message's URL at the push service), written back as `webpush_location`.
    public var location: String?
    /// The answer's `Retry-After` in seconds from when it came (``retryAfterSeconds(_:now:)``), nil without one.
    public var retryAfterSeconds: Int64?
    /// The service's own reason from an error body (Apple's `reason`), nil if none was read.
    public var reason: String?
    /// The sender refused the endpoint and made no connection (``WebPushEndpointPolicy``).
    public var endpointRefusal: WebPushEndpointRefusal?

    public init(location: String? = nil, retryAfterSeconds: Int64? = nil, reason: String? = nil,
                endpointRefusal: WebPushEndpointRefusal? = nil) {
        self.location = location
        self.retryAfterSeconds = retryAfterSeconds
        self.reason = reason
        self.endpointRefusal = endpointRefusal
    }

    /// The sender's refusal, else the answer with `status` classified
    /// (``WebPushVerdict/classify(status:reason:retryAfter:)``), else nil (no answer: the
    /// transport failure decides, as for the other providers).
    public func verdict(status: Int?) -> WebPushVerdict? {
        if let endpointRefusal { return .endpointNotAllowed(endpointRefusal) }
        return status.map { WebPushVerdict.classify(status: $0, reason: reason, retryAfter: retryAfterSeconds) }
    }

    /// Reads a `Retry-After` header, delta-seconds or an HTTP-date, as FCM's answers are read
    /// (``FCMVerdict/retryAfterSeconds(_:now:)``: never negative, at most a day).
    public static func retryAfterSeconds(_ header: String?, now: Int64) -> Int64? {
        FCMVerdict.retryAfterSeconds(header, now: now)
    }
}
