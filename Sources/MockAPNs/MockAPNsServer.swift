import Logging

/// A mock of Apple's APNs provider API: TLS + HTTP/2 on loopback, validating requests
/// as Apple does, with faults on demand and a record of what arrived.
///
/// ```swift
/// var config = MockAPNsConfiguration(certificatePath: dir + "/server.pem", privateKeyPath: dir + "/server.key",
///     tokenKeys: [MockTokenKey(keyID: "TESTKEY123", teamID: "TEAM123456", publicKeyPEMPath: dir + "/token-key.pub.pem")],
///     bundleIDs: ["com.example.app"])
/// let server = try MockAPNsServer(configuration: config, logger: logger)
/// let port = try await server.start()
/// server.setRule(forToken: token, .always(.unregistered(at: 1_700_000_000_000)))
/// try await server.waitForRequests(count: 10, timeout: .seconds(5))
/// try await server.stop()
/// ```
///
/// Faults and records are also reachable over the same port under `/_mock/`
/// (see `MockControlAPI` in the target's sources, or running apns-mock by hand in CONTRIBUTING.md).
public final class MockAPNsServer: Sendable {
    let core: MockCore
    let listener: MockListener

    /// Loads the TLS material and token keys.
    ///
    /// - Parameters:
    ///   - configuration: what to serve; see `MockAPNsConfiguration`.
    ///   - logger: connection errors and faults are logged at `debug`; nothing secret is logged.
    /// - Throws: `MockAPNsError` (`badConfiguration`, `keyLoadFailed`, `tlsSetupFailed`).
    public init(configuration: MockAPNsConfiguration, logger: Logger) throws {
        guard configuration.host == "127.0.0.1" || configuration.host == "localhost" || configuration.host == "::1" else {
            throw MockAPNsError(.badConfiguration, "host must be a loopback address (127.0.0.1), not \(configuration.host)")
        }
        guard configuration.eventLoopThreads >= 1, configuration.maxConcurrentStreams >= 1 else {
            throw MockAPNsError(.badConfiguration, "eventLoopThreads and maxConcurrentStreams must be at least 1")
        }
        self.core = try MockCore(configuration: configuration, logger: logger)
        self.listener = MockListener(core: core, tlsContext: try MockTLS.makeContext(configuration))
    }

    /// The configuration the server was made with.
    public var configuration: MockAPNsConfiguration { core.configuration }

    /// The bound port once started (kept while refusing connections), else nil.
    public var port: Int? { listener.port }

    /// Binds and starts serving.
    ///
    /// - Returns: the bound port (the ephemeral one when the configured port is 0).
    /// - Throws: `MockAPNsError.alreadyStarted`; `MockAPNsError.bindFailed` (the cause
    ///   carries the errno) when binding fails.
    @discardableResult
    public func start() async throws -> Int {
        try await listener.start()
    }

    /// Closes the listening socket and every connection, and stops the threads. Works
    /// while listening and while refusing connections; does nothing when not started.
    public func stop() async throws {
        try await listener.stop()
    }
}
