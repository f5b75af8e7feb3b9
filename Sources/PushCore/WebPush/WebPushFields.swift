/// What a Web Push request carries beside its body (``ProviderFields/webPush(_:)``): where it
/// goes, the subscription's keys the body is encrypted for, and the headers a row asks for.
///
/// `TTL` is not here: it is the whole seconds left until the request's ``PushRequest/expiration``
/// at the moment the request goes out, so the sender computes it then (``headers(expiration:now:)``).
public struct WebPushFields: Sendable, Hashable {
    /// The subscription's endpoint (the row's `device_token`), checked for form; its addresses
    /// are checked by the sender before it connects (``WebPushEndpointPolicy``).
    public var endpoint: WebPushEndpoint
    /// The subscription's `p256dh` and `auth` (the row's `webpush_keys`).
    public var keys: WebPushKeys
    /// `Urgency`, from `priority`; nil sends none.
    public var urgency: WebPushUrgency?
    /// `Topic`, the row's `collapse_id` (checked: 1–32 of `A-Z a-z 0-9 - _`); nil sends none.
    public var topic: String?
    /// What the sender's resolver checked (``WebPushEndpointPolicy``) and pinned for this request:
    /// the `CURLOPT_RESOLVE` entry `host:port:addr[,addr…]`, empty for an IP-literal host (its
    /// own only address); nil until checked, and a request never checked is never sent.
    package var pin: String?

    public init(endpoint: WebPushEndpoint, keys: WebPushKeys, urgency: WebPushUrgency? = nil, topic: String? = nil) {
        self.endpoint = endpoint
        self.keys = keys
        self.urgency = urgency
        self.topic = topic
    }

    /// The headers of the request going out at `now` (UNIX milliseconds): `TTL` the whole seconds
    /// left until `expiration` (UNIX seconds; nil: ``WebPushHeaders/defaultTTL``), never negative.
    public func headers(expiration: Int64?, now: Int64) -> WebPushHeaders {
        let ttl = expiration.map { max(0, $0 * 1000 - now) / 1000 } ?? WebPushHeaders.defaultTTL
        return WebPushHeaders(ttl: ttl, urgency: urgency, topic: topic)
    }

    /// Reads a row's `webpush_keys` (jsonb as text: `{"p256dh": "<base64url>", "auth": "<base64url>"}`,
    /// `PushSubscription.toJSON().keys`).
    ///
    /// - Throws: a refusal with reason `InvalidSubscriptionKeys` naming what is missing or wrong
    ///   (never a key's value).
    public static func keys(json: String?) throws(PushRequest.Refusal) -> WebPushKeys {
        guard let json else {
            throw PushRequest.Refusal(reason: "InvalidSubscriptionKeys", message: "a Web Push row has no webpush_keys")
        }
        guard let value = JSONValue.parse(json.utf8), value.objectValue != nil else {
            throw PushRequest.Refusal(reason: "InvalidSubscriptionKeys", message: "webpush_keys is not a JSON object")
        }
        guard let p256dh = value["p256dh"]?.stringValue, let auth = value["auth"]?.stringValue else {
            throw PushRequest.Refusal(reason: "InvalidSubscriptionKeys", message: "webpush_keys lacks the strings p256dh and auth")
        }
        return try WebPushKeys(p256dh: p256dh, auth: auth)
    }
}
