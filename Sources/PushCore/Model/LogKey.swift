/// The metadata keys of log lines about providers, credentials and connections, the same for
/// every provider (an FCM line never says `apns.*`). Values are strings; the dotted names
/// follow swift-log's convention, like `notification.id` and `worker.id` elsewhere.
public enum LogKey {
    /// `apns` or `fcm` (``Provider``).
    public static let provider = "push.provider"
    /// The credential's name (`default` for rows without one).
    public static let credential = "push.credential"
    /// ``Endpoint/channel``: `production` or `development` for APNs, `fcm` for FCM.
    public static let environment = "push.environment"
    /// The base URL a sender posts to.
    public static let url = "push.url"
    /// A sender's connection number (0, 1, ...).
    public static let connection = "push.connection"
    /// A sender's number of connections.
    public static let connections = "push.connections"
    /// Streams in flight per connection.
    public static let streams = "push.streams"
    /// Why a connection is replaced, or a hold's reason.
    public static let reason = "push.reason"
    /// Requests a stopping sender hands back unsent.
    public static let unsent = "push.unsent"
    /// New TCP+TLS connections a transfer opened.
    public static let connectionsOpened = "push.connections.new"
    /// The age of a bearer token (an APNs provider token), in seconds.
    public static let tokenAge = "push.token.age"
    /// A bearer token's serial number (never its value).
    public static let tokenSerial = "push.token.serial"
    /// When a bearer token expires (UNIX seconds).
    public static let tokenExpiresAt = "push.token.expires_at"
    /// The service account an FCM credential is (its e-mail address).
    public static let account = "push.account"
    /// libcurl's message for a failed call.
    public static let curlError = "curl.error"
}
