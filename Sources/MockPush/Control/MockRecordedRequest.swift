/// One request as the mock received it. JSON form of the items of `GET /_mock/requests`.
///
/// The `authorization` header's value is never kept (it is a secret); the JWT's
/// public parts are: `jwtKeyID`, `jwtIssuer`, `jwtIssuedAt`.
public struct MockRecordedRequest: Sendable, Hashable, Codable {
    /// Order of arrival, from 1.
    public var sequenceNumber: Int
    /// Connection id (1, 2, … in accept order) and HTTP/2 stream id.
    public var connectionID: Int
    public var streamID: Int
    public var method: String
    public var path: String
    /// The device token from the path (`/3/device/<token>`), if any.
    public var deviceToken: String?
    /// Request headers in order, names lowercase, pseudo-headers included; the
    /// `authorization` value is replaced by `bearer <redacted>`.
    public var headers: [[String]]
    /// `token`, `certificate` or `none`.
    public var auth: String
    public var jwtKeyID: String?
    public var jwtIssuer: String?
    public var jwtIssuedAt: Int64?
    /// The body byte for byte (nil when bodies are not recorded); `bodyLength` always.
    public var body: [UInt8]?
    public var bodyLength: Int
    /// When the request was complete: CLOCK_MONOTONIC and CLOCK_REALTIME nanoseconds.
    public var receivedMonotonicNanoseconds: Int64
    public var receivedWallNanoseconds: Int64
    /// The answer decided: status and reason (nil status for `noAnswer` and `reset`),
    /// and what kind of answer it was (`normal`, `status`, `noAnswer`, `reset`, or `invalid`
    /// for a request that failed validation).
    public var status: Int?
    public var reason: String?
    public var answerKind: String
    /// The `apns-id` answered.
    public var apnsID: String

    /// The first value of header `name` (lowercase).
    public func header(_ name: String) -> String? {
        headers.first { $0.count == 2 && $0[0] == name }?[1]
    }

    /// The body as UTF-8 text, when recorded.
    public var bodyString: String? {
        body.map { String(decoding: $0, as: UTF8.self) }
    }
}
