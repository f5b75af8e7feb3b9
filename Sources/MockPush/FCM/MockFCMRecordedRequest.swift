/// One FCM request as the mock received it (token exchange or send). JSON form of the
/// items of `GET /_mock/fcm/requests`. Never holds an assertion or an access token.
public struct MockFCMRecordedRequest: Sendable, Hashable, Codable {
    /// `token` (the OAuth endpoint) or `send`.
    public var endpoint: String
    public var method: String
    public var path: String
    /// The account: the assertion's `iss` (token) or the access token's owner (send).
    public var clientEmail: String?
    /// For `send`: the serial of the access token used (1 for the first the mock issued).
    public var accessTokenSerial: Int?
    /// For `send`: the project id of the path and the message's registration token.
    public var projectID: String?
    public var registrationToken: String?
    /// The body, byte for byte, for `send` (token bodies hold the assertion: not kept).
    public var body: [UInt8]?
    public var status: Int
    /// The error code answered (`UNREGISTERED`, `invalid_grant`...), nil for a success.
    public var error: String?
    /// The error's message or description.
    public var message: String?
}
