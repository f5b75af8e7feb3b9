/// One request to a Web Push endpoint (`/wp/<id>`) as the mock received it, with the message
/// it decrypted. JSON form of the items of `GET /_mock/webpush/requests`.
///
/// The VAPID JWT is never kept; its public parts are (`vapidSubject`, `vapidAudience`,
/// `vapidExpiresAt`, `vapidPublicKey`).
public struct MockWebPushRecordedRequest: Sendable, Hashable, Codable {
    /// Order of arrival among Web Push requests, from 1.
    public var sequenceNumber: Int
    /// Connection id (1, 2, … in accept order, shared with APNs and FCM) and HTTP/2 stream id.
    public var connectionID: Int
    public var streamID: Int
    public var method: String
    /// The `:authority` the request was addressed to (`127.0.0.1:PORT`).
    public var authority: String
    public var path: String
    /// The subscription's endpoint (nil when the path names none) and id.
    public var endpoint: String?
    public var subscriptionID: String
    /// Request headers in order, names lowercase, pseudo-headers included; the `authorization`
    /// value is replaced by `vapid t=<redacted>, k=<k>`.
    public var headers: [[String]]
    public var ttl: String?
    public var urgency: String?
    public var topic: String?
    public var contentEncoding: String?
    /// The VAPID JWT's `sub`, `aud`, `exp` and the key `k`, when the JWT verified.
    public var vapidSubject: String?
    public var vapidAudience: String?
    public var vapidExpiresAt: Int64?
    public var vapidPublicKey: String?
    /// The encrypted body (nil when bodies are not recorded); `bodyLength` always.
    public var body: [UInt8]?
    public var bodyLength: Int
    /// The decrypted message (nil unless it decrypted; also nil when bodies are not recorded).
    public var plaintext: [UInt8]?
    /// Whether the body was decrypted (and its padding delimiter found).
    public var decrypted: Bool
    /// The status decided (nil for `noAnswer` and `reset`), the body's reason (`BadJwtToken`…),
    /// and for a refusal, why in words (`message`).
    public var status: Int?
    public var reason: String?
    public var message: String?
    /// `normal`, `status`, `noAnswer`, `reset`, or `invalid` for a request the checks refused.
    public var answerKind: String
    /// The `Location` answered (201: the message; 3xx: the rule's target).
    public var location: String?
    /// When the request was complete: CLOCK_MONOTONIC and CLOCK_REALTIME nanoseconds.
    public var receivedMonotonicNanoseconds: Int64
    public var receivedWallNanoseconds: Int64
    /// `HTTP/2`, or `HTTP/1.1` at an HTTP/1.1-only origin (``MockPushServer/listenForWebPushOrigins(_:http1Only:)``),
    /// whose requests get odd stream ids 1, 3, 5… per connection as HTTP/2's would.
    public var httpVersion: String? = nil

    /// The first value of header `name` (lowercase).
    public func header(_ name: String) -> String? {
        headers.first { $0.count == 2 && $0[0] == name }?[1]
    }

    /// The decrypted message as UTF-8 text, when recorded.
    public var plaintextString: String? {
        plaintext.map { String(decoding: $0, as: UTF8.self) }
    }
}
