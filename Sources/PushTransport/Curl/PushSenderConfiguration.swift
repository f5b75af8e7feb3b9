import PushCore

/// How a ``PushSender`` connects: where, how many connections, how many streams, deadlines.
///
/// The same for every provider but for where: ``environment`` and ``baseURL`` are APNs',
/// ``fcmBaseURL`` is FCM's; each provider reads its own (`APNsProvider`, `FCMProvider`).
public struct PushSenderConfiguration: Sendable {
    /// APNs: Apple's environment, which picks the host. Defaults to `.production`, the environment a
    /// device registered in `pushq.devices` without one belongs to.
    public var environment: APNsEnvironment
    /// APNs: a base URL replacing Apple's host (`PUSHQ_APNS_URL`), e.g. `https://127.0.0.1:8443`. Defaults to nil.
    public var baseURL: String?
    /// FCM: a base URL replacing `https://fcm.googleapis.com` for a sender to FCM (`PUSHQ_FCM_URL`,
    /// parsed by the caller), e.g. `https://127.0.0.1:8443`. Defaults to nil. APNs senders ignore it.
    public var fcmBaseURL: String?
    /// An extra trusted CA certificate (PEM) (`PUSHQ_CA_FILE`), added to the system's roots. Defaults to nil.
    ///
    /// libcurl's `CURLOPT_CAINFO` would *replace* the default bundle, so the sender gives
    /// this file to libcurl in memory (`CURLOPT_CAINFO_BLOB`), which replaces only the bundle
    /// *file*: libcurl's built-in `CURLOPT_CAPATH` directory (Debian: `/etc/ssl/certs`) still
    /// supplies the system roots. A libcurl built without a CA directory gets the system
    /// bundle file's contents followed by this file instead.
    public var extraCAFile: String?
    /// HTTP/2 connections to open, each driven by its own thread. Defaults to 2.
    public var connections: Int
    /// Streams in flight per connection (the window); more wait in the sender's queue. Defaults to 500:
    /// 2 x 500 in flight carry 10 000/s at a 100 ms round trip, more than one worker's CPU sends,
    /// and each stream in flight costs ~22 KB of memory (libcurl 7.88 holds a 16 KiB upload
    /// buffer per easy handle). APNs allows up to 1000 per connection: raise it for long round trips.
    public var streamsPerConnection: Int
    /// `CURLMOPT_MAX_CONCURRENT_STREAMS` (libcurl's default is 100). Defaults to 1000.
    public var maxConcurrentStreams: Int
    /// Deadline of one request, from when it is handed to libcurl, in seconds. Defaults to 30.
    public var requestTimeout: Double
    /// Deadline of a connection's TCP+TLS setup, in seconds. Defaults to 10.
    public var connectTimeout: Double
    /// Delay between the first use of successive connections, in seconds (Apple: open them a few seconds apart). Defaults to 1.
    public var connectionStagger: Double
    /// A connection idle this long, in seconds, is closed and reopened before its next request
    /// (idle connections die silently behind NAT). Defaults to 600.
    public var idleReopenAfter: Double
    /// The database clock's offset from the host's, by which a request's `expiration` (the
    /// database's `expires_at`) is judged when a stream comes free. Shared by reference: the
    /// worker measures it and updates it. Defaults to a new one at 0 (the host's clock alone).
    public var databaseClock = DatabaseClockOffset()
    /// libcurl's own trace on stderr (`CURLOPT_VERBOSE`). It prints request headers,
    /// provider tokens included: internal, for debugging tests against the mock only. Defaults to false.
    var curlVerbose = false

    /// The defaults listed on each property.
    public init(environment: APNsEnvironment = .production, baseURL: String? = nil, extraCAFile: String? = nil,
                connections: Int = 2, streamsPerConnection: Int = 500, maxConcurrentStreams: Int = 1000,
                requestTimeout: Double = 30, connectTimeout: Double = 10, connectionStagger: Double = 1,
                idleReopenAfter: Double = 600, fcmBaseURL: String? = nil) {
        self.environment = environment
        self.baseURL = baseURL
        self.extraCAFile = extraCAFile
        self.connections = connections
        self.streamsPerConnection = streamsPerConnection
        self.maxConcurrentStreams = maxConcurrentStreams
        self.requestTimeout = requestTimeout
        self.connectTimeout = connectTimeout
        self.connectionStagger = connectionStagger
        self.idleReopenAfter = idleReopenAfter
        self.fcmBaseURL = fcmBaseURL
    }

    /// The base URL requests go to: ``baseURL`` or Apple's host for ``environment``, without a trailing slash.
    public var effectiveBaseURL: String {
        var url = baseURL ?? environment.baseURL
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    /// FCM's HTTP v1 host: `https://fcm.googleapis.com`.
    public static let fcmDefaultBaseURL = "https://fcm.googleapis.com"

    /// The base URL a sender to FCM posts to: ``fcmBaseURL`` or ``fcmDefaultBaseURL``, without a trailing slash.
    public var effectiveFCMBaseURL: String {
        var url = fcmBaseURL ?? Self.fcmDefaultBaseURL
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    /// Checks what every provider's sender needs.
    func validate() throws {
        guard connections >= 1, streamsPerConnection >= 1, maxConcurrentStreams >= 1 else {
            throw PushTransportError(.configuration, "connections, streamsPerConnection and maxConcurrentStreams must be at least 1")
        }
        guard requestTimeout > 0, connectTimeout > 0 else {
            throw PushTransportError(.configuration, "requestTimeout and connectTimeout must be positive (timeouts are always on)")
        }
    }

    /// Checks that `url`, the base URL of a sender to `provider`, is an https URL: every
    /// provider is HTTP/2 over TLS.
    ///
    /// - Parameter variable: the setting the URL comes from, for the message.
    static func requireHTTPS(_ url: String, variable: String, provider: Provider) throws {
        guard url.hasPrefix("https://") else {
            throw PushTransportError(.configuration, "\(variable) must be an https:// URL (\(provider.serviceName) is HTTP/2 over TLS), not \(url)")
        }
    }
}
