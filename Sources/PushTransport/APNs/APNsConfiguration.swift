import PushCore

/// APNs' own settings of a ``PushSender``: where it posts and how many streams one connection
/// carries. What every provider shares (connections, timeouts, the extra CA) is the
/// ``PushSenderConfiguration``'s.
public struct APNsConfiguration: Sendable {
    /// Apple's environment, which picks the host. Defaults to `.production`, the environment a
    /// device registered in `pushq.devices` without one belongs to.
    public var environment: APNsEnvironment
    /// A base URL replacing Apple's host (`PUSHQ_APNS_URL`), e.g. `https://127.0.0.1:8443`. Defaults to nil.
    public var baseURL: String?
    /// Streams in flight per connection (the window, `PUSHQ_APNS_STREAMS`); more wait in the
    /// sender's queue. Defaults to 500: 2 x 500 in flight carry 10 000/s at a 100 ms round trip,
    /// more than one worker's CPU sends, and each stream in flight costs ~22 KB of memory
    /// (libcurl 7.88 holds a 16 KiB upload buffer per easy handle). APNs allows up to 1000 per
    /// connection: raise it for long round trips (and
    /// ``PushSenderConfiguration/maxConcurrentStreams`` with it).
    public var streamsPerConnection: Int

    /// The defaults listed on each property.
    public init(environment: APNsEnvironment = .production, baseURL: String? = nil, streamsPerConnection: Int = 500) {
        self.environment = environment
        self.baseURL = baseURL
        self.streamsPerConnection = streamsPerConnection
    }

    /// The base URL requests go to: ``baseURL`` or Apple's host for ``environment``, without a trailing slash.
    public var effectiveBaseURL: String {
        var url = baseURL ?? environment.baseURL
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    /// Checks the base URL (https: APNs is HTTP/2 over TLS) and the window.
    func validate() throws {
        try PushSenderConfiguration.requireHTTPS(effectiveBaseURL, variable: "PUSHQ_APNS_URL", provider: .apns)
        try PushSenderConfiguration.requireStreams(streamsPerConnection, variable: "PUSHQ_APNS_STREAMS")
    }
}
