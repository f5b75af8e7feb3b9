import PushCore

/// Everything `pushq serve` runs with, built from flags and `PUSHQ_*` variables by the `pushq`
/// executable (`Settings+Serve.swift`).
public struct ServeConfiguration: Sendable {
    /// libpq connection URI or conninfo string.
    public var databaseURL: String
    /// Where to listen. Defaults to 127.0.0.1:8080; port 0 takes any free port (the log names it).
    public var host: String
    public var port: Int
    /// PEM files of the certificate chain and private key: serve speaks TLS when both are set.
    public var tls: (certificateFile: String, keyFile: String)?
    /// The operator's word that a proxy in front terminates TLS: allows a non-loopback address
    /// without ``tls``. Defaults to false. (It says nothing about `X-Forwarded-For`: see
    /// ``trustedProxies``.)
    public var proxyTerminatesTLS: Bool
    /// PostgreSQL connections the server keeps at most (one per request in progress). Defaults to 4.
    public var databaseConnections: Int
    /// How long a dashboard login lasts, in seconds. Defaults to 12 hours.
    public var sessionSeconds: Int
    /// Failed key look-ups (bearer or login form) answered 401 before 429, for all clients
    /// together (``FailedKeyBudget``). Defaults to a burst of 100, then 10 a second.
    public var failedKeyBudget: FailedKeyBudget
    /// The proxies whose `X-Forwarded-For` is believed (``TrustedProxies``): the client's address,
    /// for the logs, is the first hop from the right that is not one of them. Defaults to none:
    /// the TCP peer is the client.
    public var trustedProxies: TrustedProxies
    /// The dashboard's own PostgreSQL connections, apart from the API's: searches never take a
    /// producer's slot. Defaults to 2.
    public var dashboardConnections: Int
    /// The server-side `statement_timeout` of the dashboard's reads (a search, the failures
    /// list): a page whose query runs longer says it was stopped. Defaults to 5 s.
    public var dashboardQueryTimeout: Duration
    /// How long a request waits for a database connection before `503 database_busy`. Defaults to 5 s.
    public var databaseWait: Duration
    /// Requests that may wait for a connection of one pool at once; beyond it `503 database_busy`
    /// at once. Defaults to 100.
    public var databaseQueue: Int
    /// A connection with no request in progress for this long is closed. Defaults to 60 s.
    public var idleTimeout: Duration
    /// A request's head (its request line and headers) must arrive within this much of the
    /// connection's start or of its first byte. Defaults to 10 s.
    public var headerTimeout: Duration
    /// Open connections at most; one more is closed as soon as it is accepted. Defaults to 1 000.
    public var maxConnections: Int

    public init(databaseURL: String, host: String = "127.0.0.1", port: Int = 8080) {
        self.databaseURL = databaseURL
        self.host = host
        self.port = port
        self.tls = nil
        self.proxyTerminatesTLS = false
        self.databaseConnections = 4
        self.sessionSeconds = 12 * 3600
        self.failedKeyBudget = FailedKeyBudget()
        self.trustedProxies = .none
        self.dashboardConnections = 2
        self.dashboardQueryTimeout = .seconds(5)
        self.databaseWait = .seconds(5)
        self.databaseQueue = 100
        self.idleTimeout = .seconds(60)
        self.headerTimeout = .seconds(10)
        self.maxConnections = 1_000
    }

    /// The HTTP listener's bounds: idle and header timeouts, open connections.
    public var connectionLimits: ConnectionLimits {
        ConnectionLimits(idleTimeout: idleTimeout, headerTimeout: headerTimeout, maxConnections: maxConnections)
    }

    /// Whether serve may listen where it is told: on loopback, with TLS, or behind a proxy
    /// that terminates TLS (``ListenerExposure``).
    public var exposure: ListenerExposure {
        ListenerExposure.decide(host: host, tls: tls != nil, proxyTerminatesTLS: proxyTerminatesTLS)
    }
}
