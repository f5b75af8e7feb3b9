import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// Owns the listening socket and the connections it accepted: binds it (`start`), closes
/// it with every connection on demand (`refuse`), binds the same port again (`accept`),
/// and closes everything on `stop`.
///
/// Sendable because its stored properties are immutable and Sendable, and the only
/// mutable part is inside the `Mutex`.
final class MockListener: Sendable {
    /// What a listener serves.
    enum Role: Sendable {
        /// APNs' pushes and broadcasts, FCM, and the control endpoints (`/_mock/…`).
        case push
        /// APNs' channel-management API only (`/1/apps/…`), as Apple's separate host and port.
        case management
    }

    let core: MockCore
    let role: Role
    /// Speaks HTTP/1.1 only (a Web Push origin of ``MockPushServer/listenForWebPushOrigins(_:http1Only:)``):
    /// its TLS offers ALPN `http/1.1`, and ``MockHTTP1Adapter`` stands where HTTP/2 would.
    let http1Only: Bool
    /// The port to bind (0: an ephemeral one).
    private let configuredPort: Int
    private let tlsContext: NIOSSLContext
    let state = Mutex(MockListenerState())

    init(core: MockCore, tlsContext: NIOSSLContext, role: Role = .push, port: Int, http1Only: Bool = false) {
        self.core = core
        self.tlsContext = tlsContext
        self.role = role
        self.http1Only = http1Only
        self.configuredPort = port
    }

    /// The port `start` bound (kept while refusing connections), else nil.
    var port: Int? { state.withLock { $0.port } }

    /// Binds the configured port and starts serving.
    ///
    /// - Returns: the bound port.
    /// - Throws: `MockPushError.alreadyStarted`; `MockPushError.bindFailed` (the cause
    ///   carries the errno) when binding fails.
    func start() async throws -> Int {
        let configuration = core.configuration
        let group = MultiThreadedEventLoopGroup(numberOfThreads: configuration.eventLoopThreads)
        let generation: Int
        do {
            generation = try state.withLock { try $0.start(group: group) }.generation
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        let channel: any Channel
        do {
            let socket = try Self.boundSocket(host: configuration.host, port: configuredPort)
            channel = try await bootstrap(group).withBoundSocket(socket).get()
        } catch {
            let failure = MockPushError(.bindFailed, "cannot listen on \(configuration.host):\(configuredPort)", cause: error)
            if let failed = state.withLock({ $0.bindFailed(generation: generation) }) {
                failed.done.fail(failure)
                try? await failed.shutDown?.shutdownGracefully()
            }
            throw failure
        }
        let port = channel.localAddress?.port ?? configuredPort
        guard let done = listening(generation: generation, channel: channel, port: port) else {
            try? await channel.close()
            throw MockPushError(.notStarted, "stop() was called while start() was binding")
        }
        done.succeed()
        do {
            let keeper = try Self.portKeeper(host: configuration.host, port: port)
            if !state.withLock({ $0.keep(keeper) }) { Self.release(keeper: keeper) }
        } catch {
            core.logger.warning("mock cannot hold its port while refusing: another server may be given it", metadata: ["error": "\(error)"])
        }
        core.logger.info(role == .push ? "mock listening" : "mock channel management listening", metadata: ["mock.port": "\(port)"])
        return port
    }

    /// Records a finished bind (and `listening` in the stats); nil when it was overtaken.
    func listening(generation: Int, channel: any Channel, port: Int) -> EventLoopPromise<Void>? {
        state.withLock { s in
            let done = s.bound(generation: generation, channel: channel, port: port)
            if done != nil, role == .push { core.updateStats { $0.stats.listening = true } }
            return done
        }
    }

    /// Closes the listener and every connection, and stops the threads. Does nothing when
    /// not started.
    func stop() async throws {
        guard let stop = state.withLock({ s -> MockListenerState.Stop? in
            let stop = s.stop()
            if stop != nil, role == .push { core.updateStats { $0.stats.listening = false } }
            return stop
        }) else { return }
        stop.overtaken?.fail(MockPushError(.notStarted, "stop() was called while the port was being bound again"))
        try? await stop.listener?.close()
        if let keeper = stop.keeper { Self.release(keeper: keeper) }
        try await stop.group.shutdownGracefully()
    }

    /// A server bootstrap whose connections get the mock's pipeline and are tracked.
    func bootstrap(_ group: MultiThreadedEventLoopGroup) -> ServerBootstrap {
        ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try configure(channel: channel)
                }
            }
    }

    /// Adds TLS, HTTP/2 and the mock's handler to a new connection, or closes it when it
    /// slipped in as the listener closed for a refusal.
    private func configure(channel: any Channel) throws {
        guard state.withLock({ $0.connectionOpened(channel) }) else {
            channel.close(promise: nil)
            return
        }
        channel.closeFuture.whenComplete { [self] _ in
            state.withLock { $0.connectionClosed(channel) }
        }
        let configuration = core.configuration
        let (id, faults) = core.connectionOpened()
        if http1Only {
            let sync = channel.pipeline.syncOperations
            try sync.addHandler(NIOSSLServerHandler(context: tlsContext))
            try sync.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true)
            try sync.addHandler(MockHTTP1Adapter())
            try sync.addHandler(MockConnectionHandler(core: core, listener: self, connectionID: id, faults: faults))
            return
        }
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
        try sync.addHandler(MockConnectionHandler(core: core, listener: self, connectionID: id, faults: faults))
    }
}
