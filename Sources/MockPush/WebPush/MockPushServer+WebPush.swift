/// The mock's Web Push service (RFC 8030, 8291, 8292), for tests in the same process:
/// subscriptions as a browser would hold them, faults, and what arrived, decrypted.
extension MockPushServer {
    /// Makes a subscription, as a browser's `PushManager.subscribe()` would: a fresh P-256 key
    /// pair and 16-byte auth secret (or the given ones), and an endpoint
    /// `https://127.0.0.1:PORT/wp/<id>` (or on `options.origin`). The mock keeps the private key
    /// and decrypts every message to the endpoint.
    ///
    /// - Returns: what `PushSubscription.toJSON()` gives (``MockWebPushSubscription/toJSON()``).
    /// - Throws: `MockPushError.notStarted` before `start()` without an origin;
    ///   `.badConfiguration` for a malformed origin, key or secret.
    public func makeWebPushSubscription(_ options: MockWebPushSubscriptionOptions = .init()) throws -> MockWebPushSubscription {
        try core.makeWebPushSubscription(options)
    }

    /// Unsubscribes the subscription at `endpoint` (or with that id), as a browser whose user
    /// revoked permission: messages to it get 410 Gone from now on.
    ///
    /// - Returns: false when the mock made no such subscription.
    @discardableResult
    public func unsubscribeWebPush(endpoint: String) -> Bool {
        core.unsubscribeWebPush(endpoint)
    }

    /// Every subscription made since start (`reset()` keeps them), in order, unsubscribed ones too.
    public func webPushSubscriptions() -> [MockWebPushSubscription] {
        core.webPushSubscriptions()
    }

    /// Sets (or with nil removes) the rule for one subscription's messages, e.g.
    /// `.next(2, .status(429, retryAfter: "30"))` or `.always(.redirect(to: url))`. Rules apply
    /// to messages that pass the checks (VAPID, headers, decryption).
    public func setWebPushRule(forEndpoint endpoint: String, _ rule: MockWebPushRule?) {
        core.setWebPushRule(forEndpoint: endpoint, rule)
    }

    /// Sets (or with nil removes) the rule for every subscription on `origin`
    /// (`https://host[:port]`) that has no rule of its own: a slow or failing push service.
    ///
    /// - Throws: `MockPushError.badConfiguration` when `origin` is not `https://host[:port]`.
    public func setWebPushRule(forOrigin origin: String, _ rule: MockWebPushRule?) throws {
        try core.setWebPushRule(forOrigin: origin, rule)
    }

    /// Decrypts only one message in `oneIn` (the first, then every `oneIn`-th) from now on, the
    /// others accepted with their checks but undecrypted (`decrypted` false): for a benchmark,
    /// so that the mock's own ECDH does not decide the figure. 1 (the default, and after
    /// `reset()`) decrypts every message.
    public func setWebPushDecryptSample(oneIn: Int) {
        core.setWebPushDecryptSample(oneIn: oneIn)
    }

    /// Listens on `count` more ports of the server's loopback host, each a Web Push origin of
    /// its own (`https://127.0.0.1:PORT`, same certificate and service): many push services on
    /// one machine, for a sender's per-origin connections. Subscriptions are made on them with
    /// ``MockWebPushSubscriptionOptions/origin``; ``MockPushStats/connectionsOpen`` and
    /// ``MockPushStats/connectionsOpenPeak`` count their connections too. They stop with ``stop()``.
    ///
    /// - Parameter http1Only: each origin offers only HTTP/1.1 (ALPN `http/1.1`, one request at a
    ///   time per connection), as a push service behind an HTTP/1.1 proxy: the same checks,
    ///   decryption, rules and records (``MockWebPushRecordedRequest/httpVersion`` `HTTP/1.1`).
    /// - Returns: the new origins, in order.
    /// - Throws: `MockPushError` when TLS cannot be set up or a port cannot be bound.
    public func listenForWebPushOrigins(_ count: Int, http1Only: Bool = false) async throws -> [String] {
        let tls = try MockTLS.makeContext(configuration, applicationProtocols: http1Only ? ["http/1.1"] : ["h2"])
        var origins: [String] = []
        for _ in 0..<count {
            let extra = MockListener(core: core, tlsContext: tls, port: 0, http1Only: http1Only)
            core.state.withLock { $0.webPush.extraListeners.append(extra) }
            let port = try await extra.start()
            let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
            origins.append("https://\(host):\(port)")
        }
        return origins
    }

    /// Stops the listeners of ``listenForWebPushOrigins(_:)``.
    func stopWebPushOrigins() async throws {
        let extras = core.state.withLock { s -> [MockListener] in
            defer { s.webPush.extraListeners = [] }
            return s.webPush.extraListeners
        }
        for extra in extras { try await extra.stop() }
    }

    /// The Web Push requests, in order of arrival, with the messages decrypted. `reset()` clears them.
    public func webPushRequests() -> [MockWebPushRecordedRequest] {
        core.webPushRequests()
    }
}
