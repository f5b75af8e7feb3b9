import PushCore

/// FCM's own settings of a ``PushSender``: where it posts and how many streams one connection
/// carries. What every provider shares (connections, timeouts, the extra CA) is the
/// ``PushSenderConfiguration``'s; the OAuth token endpoint is the service account's `token_uri`.
public struct FCMConfiguration: Sendable {
    /// FCM's HTTP v1 host: `https://fcm.googleapis.com`.
    public static let defaultBaseURL = "https://fcm.googleapis.com"

    /// A base URL replacing ``defaultBaseURL`` (`PUSHQ_FCM_URL`), for a mock or a proxy, e.g.
    /// `https://127.0.0.1:8443`. Defaults to nil.
    public var baseURL: String?
    /// Streams in flight per connection (the window, `PUSHQ_FCM_STREAMS`); more wait in the
    /// sender's queue. Defaults to 100, the SETTINGS_MAX_CONCURRENT_STREAMS FCM's front end
    /// advertises: requests beyond the server's limit would only wait inside libcurl, which
    /// walks them all on every step.
    public var streamsPerConnection: Int

    /// The defaults listed on each property.
    public init(baseURL: String? = nil, streamsPerConnection: Int = 100) {
        self.baseURL = baseURL
        self.streamsPerConnection = streamsPerConnection
    }

    /// The base URL requests go to: ``baseURL`` or ``defaultBaseURL``, without a trailing slash.
    public var effectiveBaseURL: String {
        var url = baseURL ?? Self.defaultBaseURL
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    /// Checks the base URL (https: FCM is HTTP/2 over TLS) and the window.
    func validate() throws {
        try PushSenderConfiguration.requireHTTPS(effectiveBaseURL, variable: "PUSHQ_FCM_URL", provider: .fcm)
        try PushSenderConfiguration.requireStreams(streamsPerConnection, variable: "PUSHQ_FCM_STREAMS")
    }
}
