/// A request that got no HTTP answer: the connection, TLS, or a deadline failed first.
///
/// Whether APNs received the notification is unknown, so the notification is retried
/// with the same `apns-id` (APNs de-duplicates nothing, but the device sees at most a
/// rare duplicate). `PushTransport` maps libcurl's codes to a ``Kind``.
public struct TransportFailure: Sendable, Hashable, Error, CustomStringConvertible {
    /// What went wrong, as far as the client can tell.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The request deadline passed without a complete answer.
        case timeout
        /// The connection could not be opened (DNS, TCP, refused).
        case connect
        /// The TLS handshake failed or the server's certificate is not trusted.
        case tls
        /// The local client certificate or key could not be used (bad file or password).
        case clientCertificate
        /// The local client certificate is past its notAfter date.
        case clientCertificateExpired
        /// The connection or the stream died mid-flight: reset, GOAWAY, send/recv error.
        case connectionLost
        /// The sender was shut down before an answer came.
        case cancelled
        /// A header value (or the device token in the path) cannot be sent: it holds CR, LF or
        /// NUL, or is longer than its header allows. Found before anything is sent; permanent.
        case invalidHeader
        /// The provider token could not be signed (OpenSSL refused the key): nothing was sent.
        case signingFailed
        /// Anything else.
        case other
    }

    public var kind: Kind
    /// The library's numeric code (a `CURLcode`), 0 if none.
    public var code: Int32
    /// The library's message, e.g. `"Stream error in the HTTP/2 framing layer"`.
    public var message: String
    /// For an ``Kind/invalidHeader`` found while the request was built from the row (a Web Push
    /// `p256dh` that is not a point on P-256, found when the message is encrypted): the row's own
    /// reason, `InvalidSubscriptionKeys`, recorded instead of `InvalidHeader`. Nil otherwise.
    public var refusalReason: String?

    public init(kind: Kind, code: Int32 = 0, message: String, refusalReason: String? = nil) {
        self.kind = kind
        self.code = code
        self.message = message
        self.refusalReason = refusalReason
    }

    public var description: String { "\(kind.rawValue) (code \(code)): \(message)" }

    /// The CamelCase reason recorded in `last_reason` for this failure, e.g. `"TransportTimeout"`.
    public var reasonString: String {
        switch kind {
        case .timeout: return "TransportTimeout"
        case .connect: return "TransportConnectFailed"
        case .tls: return "TransportTLSFailed"
        case .clientCertificate: return "ClientCertificateUnusable"
        case .clientCertificateExpired: return "ClientCertificateExpired"
        case .connectionLost: return "TransportConnectionLost"
        case .cancelled: return "TransportCancelled"
        case .invalidHeader: return refusalReason ?? "InvalidHeader"
        case .signingFailed: return "ProviderTokenSigningFailed"
        case .other: return "TransportError"
        }
    }
}
