import PushCore

/// Where and how an ``APNsChannelClient`` reaches APNs' channel-management API.
public struct APNsChannelConfiguration: Sendable {
    /// Apple's environment, which picks the host: `api-manage-broadcast.push.apple.com:2196`
    /// (production) or `api-manage-broadcast.sandbox.push.apple.com:2195` (development).
    /// Defaults to `.production`.
    public var environment: APNsEnvironment
    /// A base URL replacing Apple's management host, e.g. `https://127.0.0.1:9443` (the mock's
    /// management listener), as ``APNsConfiguration/baseURL`` replaces the push host.
    /// Defaults to nil.
    public var baseURL: String?
    /// An extra trusted CA certificate (PEM), added to the system's roots exactly as for the
    /// senders (``PushSenderConfiguration/extraCAFile``). Defaults to nil.
    public var extraCAFile: String?
    /// Deadline of one request, seconds. Defaults to 30.
    public var requestTimeout: Double
    /// Deadline of a connection's TCP+TLS setup, seconds. Defaults to 10.
    public var connectTimeout: Double
    /// libcurl's trace on stderr; it prints provider tokens: debugging against the mock only. Defaults to false.
    var curlVerbose = false

    /// The defaults listed on each property.
    public init(environment: APNsEnvironment = .production, baseURL: String? = nil, extraCAFile: String? = nil,
                requestTimeout: Double = 30, connectTimeout: Double = 10) {
        self.environment = environment
        self.baseURL = baseURL
        self.extraCAFile = extraCAFile
        self.requestTimeout = requestTimeout
        self.connectTimeout = connectTimeout
    }

    /// The base URL requests go to: ``baseURL`` or Apple's management host for ``environment``,
    /// without a trailing slash.
    public var effectiveBaseURL: String {
        var url = baseURL ?? environment.channelManagementURL
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }
}
