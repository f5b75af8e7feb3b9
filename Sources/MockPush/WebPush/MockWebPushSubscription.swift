/// A Web Push subscription the mock made, as a browser's `PushSubscription.toJSON()` gives it:
/// `{"endpoint":"https://127.0.0.1:PORT/wp/<id>","expirationTime":null,"keys":{"p256dh":"…","auth":"…"}}`.
///
/// The private key stays in the mock, which decrypts every message to the endpoint with it.
public struct MockWebPushSubscription: Sendable, Hashable, Codable {
    public struct Keys: Sendable, Hashable, Codable {
        /// The subscription's public key: a base64url uncompressed P-256 point (65 octets).
        public var p256dh: String
        /// The authentication secret: base64url, 16 octets.
        public var auth: String
    }

    /// The push resource, `https://HOST:PORT/wp/<id>`, to POST messages to.
    public var endpoint: String
    /// Always nil: the mock's subscriptions do not expire (unsubscribe them instead).
    public var expirationTime: Int64?
    public var keys: Keys

    /// The id, the endpoint's last path segment.
    public var id: String { String(endpoint.split(separator: "/").last ?? "") }

    /// The JSON a browser's `PushSubscription.toJSON()` gives, in its order.
    public func toJSON() -> String {
        #"{"endpoint":"# + MockJSON.quoted(endpoint) + #","expirationTime":null,"keys":{"p256dh":"# + MockJSON.quoted(keys.p256dh)
            + #","auth":"# + MockJSON.quoted(keys.auth) + "}}"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(endpoint, forKey: .endpoint)
        try c.encode(expirationTime, forKey: .expirationTime)   // null, as the browser writes it
        try c.encode(keys, forKey: .keys)
    }
}

/// How to make a subscription (``MockPushServer/makeWebPushSubscription(_:)``). JSON form of the
/// body of `POST /_mock/webpush/subscriptions`; every field is optional.
public struct MockWebPushSubscriptionOptions: Sendable, Hashable, Codable {
    /// The endpoint's origin, `https://host[:port]`: defaults to the mock's own URL. Another host
    /// (one the test resolves to 127.0.0.1) needs a server certificate that names it; the
    /// fixtures' names 127.0.0.1, ::1 and localhost. Requests must be addressed to this origin
    /// (`:authority`), and VAPID's `aud` must be it.
    public var origin: String?
    /// The VAPID public key (`applicationServerKey`, base64url uncompressed P-256 point) the
    /// subscription is restricted to (RFC 8292 §4.2): a message whose `k` differs is answered
    /// 403. Nil: any key (the JWT must still verify with its own `k`).
    public var applicationServerKey: String?
    /// The private key's scalar (base64url, 32 octets) and the auth secret (base64url, 16 octets)
    /// to use instead of fresh random ones: a subscription with known keys, such as RFC 8291's
    /// example. Both or neither.
    public var privateKey: String?
    public var auth: String?

    public init(origin: String? = nil, applicationServerKey: String? = nil, privateKey: String? = nil, auth: String? = nil) {
        self.origin = origin
        self.applicationServerKey = applicationServerKey
        self.privateKey = privateKey
        self.auth = auth
    }
}
