import Logging

/// A mock of Apple's APNs provider API and of Google's FCM HTTP v1 API (OAuth token endpoint and
/// `messages:send`) on one port: TLS + HTTP/2 on loopback, validating requests as Apple and Google
/// do (by their documentation: ``MockAPNsRules``, ``MockFCMRules``), with faults on demand and a
/// record of what arrived.
///
/// ```swift
/// let fixtures = try MockPushFixtures.generate(into: directory)   // CA, server certificate, keys
/// let server = try MockPushServer(configuration: fixtures.configuration(), logger: logger)
/// try await server.start()                                       // 127.0.0.1, an ephemeral port
/// let url = server.url!                                          // https://127.0.0.1:PORT, trust fixtures.caCertificatePath
/// server.setRule(forToken: token, .always(.unregistered(at: 1_700_000_000_000)))
/// try await server.waitForRequests(count: 10, timeout: .seconds(5))
/// try await server.stop()
/// ```
///
/// Faults and records are also reachable over the same port under `/_mock/` (see the
/// `pushq-mock` command and the control endpoints in the documentation).
public final class MockPushServer: Sendable {
    let core: MockCore
    let listener: MockListener
    /// APNs' channel-management API, on a port of its own (Apple's 2196 / 2195).
    let managementListener: MockListener

    /// Loads the TLS material and token keys.
    ///
    /// - Parameters:
    ///   - configuration: what to serve; see `MockPushConfiguration`.
    ///   - logger: connection errors and faults are logged at `debug`; nothing secret is logged.
    /// - Throws: `MockPushError` (`badConfiguration`, `keyLoadFailed`, `tlsSetupFailed`).
    public init(configuration: MockPushConfiguration, logger: Logger) throws {
        guard configuration.host == "127.0.0.1" || configuration.host == "localhost" || configuration.host == "::1" else {
            throw MockPushError(.badConfiguration, "host must be a loopback address (127.0.0.1), not \(configuration.host)")
        }
        guard configuration.eventLoopThreads >= 1, configuration.maxConcurrentStreams >= 1 else {
            throw MockPushError(.badConfiguration, "eventLoopThreads and maxConcurrentStreams must be at least 1")
        }
        self.core = try MockCore(configuration: configuration, logger: logger)
        let tls = try MockTLS.makeContext(configuration)
        self.listener = MockListener(core: core, tlsContext: tls, port: configuration.port)
        self.managementListener = MockListener(core: core, tlsContext: tls, role: .management, port: configuration.managementPort)
    }

    /// The configuration the server was made with.
    public var configuration: MockPushConfiguration { core.configuration }

    /// The bound port once started (kept while refusing connections), else nil.
    public var port: Int? { listener.port }

    /// `https://127.0.0.1:PORT` (the configured loopback host and the bound port) once started,
    /// else nil: the base URL of both APNs and FCM, and of the control endpoints (`/_mock/…`).
    public var url: String? {
        guard let port else { return nil }
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "https://\(host):\(port)"
    }

    /// The channel-management port once started, else nil.
    public var managementPort: Int? { managementListener.port }

    /// `https://127.0.0.1:PORT` of the channel-management API (`/1/apps/<bundle>/channels`,
    /// `…/all-channels`) once started, else nil: a port of its own, as Apple's
    /// `api-manage-broadcast` host listens on 2196 / 2195 and not on the push port.
    public var managementURL: String? {
        guard let port = managementPort else { return nil }
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "https://\(host):\(port)"
    }

    /// Binds both ports (pushes, then channel management) and starts serving.
    ///
    /// - Returns: the bound push port (the ephemeral one when the configured port is 0).
    /// - Throws: `MockPushError.alreadyStarted`; `MockPushError.bindFailed` (the cause
    ///   carries the errno) when binding fails.
    @discardableResult
    public func start() async throws -> Int {
        let port = try await listener.start()
        if let origin = url.flatMap(MockWebPushOrigin.init) { core.state.withLock { $0.webPush.ownOrigin = origin } }
        do {
            let management = try await managementListener.start()
            core.state.withLock { $0.managementPort = management }
        } catch {
            try? await listener.stop()
            throw error
        }
        return port
    }

    /// Closes the listening socket and every connection, and stops the threads. Works
    /// while listening and while refusing connections; does nothing when not started.
    public func stop() async throws {
        try await stopWebPushOrigins()
        try await managementListener.stop()
        try await listener.stop()
    }
}
