import PushCore

/// How a ``PushSender`` connects, whatever the provider: how many connections, deadlines, the
/// extra CA. Where it posts and how many streams one connection carries are the provider's own
/// (``APNsConfiguration``, ``FCMConfiguration``), given beside this to the provider's initializer.
public struct PushSenderConfiguration: Sendable {
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
    /// `CURLMOPT_MAX_CONCURRENT_STREAMS` (libcurl's default is 100): at least the provider's
    /// streams per connection. Defaults to 1000.
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
    public init(extraCAFile: String? = nil, connections: Int = 2, maxConcurrentStreams: Int = 1000,
                requestTimeout: Double = 30, connectTimeout: Double = 10, connectionStagger: Double = 1,
                idleReopenAfter: Double = 600) {
        self.extraCAFile = extraCAFile
        self.connections = connections
        self.maxConcurrentStreams = maxConcurrentStreams
        self.requestTimeout = requestTimeout
        self.connectTimeout = connectTimeout
        self.connectionStagger = connectionStagger
        self.idleReopenAfter = idleReopenAfter
    }

    /// Checks what every provider's sender needs.
    func validate() throws {
        guard connections >= 1, maxConcurrentStreams >= 1 else {
            throw PushTransportError(.configuration, "connections and maxConcurrentStreams must be at least 1")
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

    /// Checks that `streams`, a provider's streams per connection, is at least 1.
    ///
    /// - Parameter variable: the setting it comes from, for the message.
    static func requireStreams(_ streams: Int, variable: String) throws {
        guard streams >= 1 else {
            throw PushTransportError(.configuration, "\(variable) (streams per connection) must be at least 1, not \(streams)")
        }
    }
}
