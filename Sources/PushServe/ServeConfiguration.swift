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
    /// without ``tls``, and makes the client's address the last one of `X-Forwarded-For`.
    /// Defaults to false.
    public var proxyTerminatesTLS: Bool
    /// PostgreSQL connections the server keeps at most (one per request in progress). Defaults to 4.
    public var databaseConnections: Int
    /// How long a dashboard login lasts, in seconds. Defaults to 12 hours.
    public var sessionSeconds: Int
    /// Failed logins allowed per client per minute before it is refused (429). Defaults to 10.
    public var failedLoginLimit: Int

    public init(databaseURL: String, host: String = "127.0.0.1", port: Int = 8080) {
        self.databaseURL = databaseURL
        self.host = host
        self.port = port
        self.tls = nil
        self.proxyTerminatesTLS = false
        self.databaseConnections = 4
        self.sessionSeconds = 12 * 3600
        self.failedLoginLimit = 10
    }

    /// Whether serve may listen where it is told: on loopback, with TLS, or behind a proxy
    /// that terminates TLS (``ListenerExposure``).
    public var exposure: ListenerExposure {
        ListenerExposure.decide(host: host, tls: tls != nil, proxyTerminatesTLS: proxyTerminatesTLS)
    }
}
