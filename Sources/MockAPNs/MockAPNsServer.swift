import Logging
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

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
/// (see `MockControlAPI` in the target's sources, or the apns-mock README section).
public final class MockAPNsServer: Sendable {
    private struct Running {
        var group: MultiThreadedEventLoopGroup
        var channel: any Channel
        var port: Int
    }

    let core: MockCore
    private let tlsContext: NIOSSLContext
    private let running = Mutex<Running?>(nil)

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
        self.tlsContext = try MockTLS.makeContext(configuration)
    }

    /// The configuration the server was made with.
    public var configuration: MockAPNsConfiguration { core.configuration }

    /// The bound port once started, else nil.
    public var port: Int? { running.withLock { $0?.port } }

    /// Binds and starts serving.
    ///
    /// - Returns: the bound port (the ephemeral one when the configured port is 0).
    /// - Throws: `MockAPNsError.alreadyStarted`, or NIO's error when binding fails.
    @discardableResult
    public func start() async throws -> Int {
        if running.withLock({ $0 != nil }) { throw MockAPNsError(.alreadyStarted, "start() called twice") }
        let configuration = core.configuration
        let group = MultiThreadedEventLoopGroup(numberOfThreads: configuration.eventLoopThreads)
        let core = self.core
        let tlsContext = self.tlsContext
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelOption(.maxMessagesPerRead, value: 16)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try Self.configure(channel: channel, core: core, tlsContext: tlsContext)
                    }
                }
                .bind(host: configuration.host, port: configuration.port)
                .get()
            let port = channel.localAddress?.port ?? configuration.port
            running.withLock { $0 = Running(group: group, channel: channel, port: port) }
            core.logger.info("mock APNs listening", metadata: ["mock.port": "\(port)"])
            return port
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Closes the listening socket and every connection, and stops the threads.
    public func stop() async throws {
        guard let r = running.withLock({ state -> Running? in
            defer { state = nil }
            return state
        }) else { return }
        try? await r.channel.close()
        try await r.group.shutdownGracefully()
    }

    private static func configure(channel: any Channel, core: MockCore, tlsContext: NIOSSLContext) throws {
        let configuration = core.configuration
        let (id, faults) = core.connectionOpened()
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = [
            HTTP2Setting(
                parameter: .maxConcurrentStreams,
                value: configuration.limitStreamsUntilFirstValidToken ? 1 : configuration.maxConcurrentStreams
            ),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 16 * 1024),
        ]
        connection.maximumBufferedControlFrames = 100_000
        // NIOHTTP2's DoS guards (200 resets, stream errors or control frames per 30 s) would
        // close connections in exactly the scenarios the mock exists for: a sender cancelling
        // hundreds of never-answered streams, or pinging many connections. Loopback only, so
        // lift them.
        connection.maximumConnectionGlitches = 10_000_000
        connection.controlFrameRateLimit.maximumCount = 10_000_000
        var stream = NIOHTTP2Handler.StreamConfiguration()
        stream.streamResetFrameRateLimit.maximumCount = 10_000_000
        stream.streamErrorRateLimit.maximumCount = 10_000_000
        let sync = channel.pipeline.syncOperations
        try sync.addHandler(NIOSSLServerHandler(context: tlsContext))
        try sync.addHandler(NIOHTTP2Handler(mode: .server, connectionConfiguration: connection, streamConfiguration: stream))
        try sync.addHandler(MockConnectionHandler(core: core, connectionID: id, faults: faults))
    }
}
