import PushCore

/// How a Web Push sender connects, beside the provider-neutral ``PushSenderConfiguration``: the
/// extra CA, the origins exempt from the address checks, and the bound on connections over all
/// origins. `pushq worker` sets each from its `PUSHQ_WEBPUSH_*` setting.
public struct WebPushConfiguration: Sendable {
    /// An extra trusted CA certificate (PEM) for push services (`PUSHQ_WEBPUSH_CA_FILE`; the worker
    /// uses `PUSHQ_CA_FILE`'s when it is unset). Defaults to nil: the system's roots only.
    public var extraCAFile: String?
    /// Origins sent to whatever addresses they resolve to (`PUSHQ_WEBPUSH_ALLOWED_ORIGINS`):
    /// ``WebPushEndpointPolicy/allowedOrigins``. Defaults to none.
    public var allowedOrigins: Set<WebPushOrigin>
    /// Most push-service connections one sender holds open, over all origins
    /// (`PUSHQ_WEBPUSH_MAX_CONNECTIONS`), shared among its connection threads; when a new one is
    /// needed and none is free, the one idle longest is closed (libcurl's connection cache), so
    /// any number of origins is served. Defaults to 64: the large push services (FCM, Mozilla,
    /// Apple, Microsoft) need one HTTP/2 connection per thread each, which leaves room for dozens
    /// of self-hosted UnifiedPush origins; a connection is a socket and its TLS and HTTP/2 state,
    /// not a thread, and a count this size stays well below a process's file descriptors.
    public var maxConnections: Int
    /// Requests in flight at once on one connection thread, over all its origins (the window).
    /// Defaults to 100, not APNs' 500: an encrypted body is ~300 bytes to 4 KB, and 500 of them
    /// outrun HTTP/2's initial 64 KB connection window, while which libcurl 7.88 polls without
    /// sleeping (sender-bench --webpush, 2 threads: 2 600 µs CPU per message at 500, 210 at 100).
    public var streamsPerThread: Int = 100

    /// The defaults listed on each property.
    public init(extraCAFile: String? = nil, allowedOrigins: Set<WebPushOrigin> = [], maxConnections: Int = 64) {
        self.extraCAFile = extraCAFile
        self.allowedOrigins = allowedOrigins
        self.maxConnections = maxConnections
    }

    /// Checks the bounds.
    ///
    /// - Throws: ``PushTransportError`` `.configuration` naming the setting.
    func validate() throws {
        guard maxConnections >= 1 else {
            throw PushTransportError(.configuration, "PUSHQ_WEBPUSH_MAX_CONNECTIONS must be at least 1, not \(maxConnections)")
        }
        try PushSenderConfiguration.requireStreams(streamsPerThread, variable: "Web Push streams per thread")
    }

    /// The endpoint policy these settings give.
    public var endpointPolicy: WebPushEndpointPolicy { WebPushEndpointPolicy(allowedOrigins: allowedOrigins) }
}
