import NIOCore
import NIOPosix
import NIOSSL

/// Refusing connections for a while (an outage), then listening again on the same port.
extension MockListener {
    /// Closes the listening socket, then every open connection; with `reopenAfter`, binds
    /// the port again that long after they are closed.
    ///
    /// Connections are closed below TLS (no close_notify, no GOAWAY): their clients see the
    /// socket close, as when a server goes away. The returned future completes once the
    /// listener and the connections are closed.
    ///
    /// - Throws: `MockPushError.notStarted` when the server is not running.
    @discardableResult
    func refuse(reopenAfter delay: TimeAmount? = nil) throws -> EventLoopFuture<Void> {
        let refusal = try state.withLock { s in
            let refusal = try s.refuse()
            core.updateStats { $0.stats.listening = false; $0.stats.refusals += 1 }
            return refusal
        }
        let loop = refusal.closed.futureResult.eventLoop
        refusal.overtaken?.succeed()
        let connections = refusal.connections
        let closedListener = (refusal.previous ?? loop.makeSucceededVoidFuture())
            .flatMap { refusal.listener?.close() ?? loop.makeSucceededVoidFuture() }
            .recover { _ in }
        closedListener
            .flatMap { EventLoopFuture.andAllComplete(connections.map(Self.closeBelowTLS), on: loop) }
            .whenComplete { _ in refusal.closed.succeed() }
        if !connections.isEmpty {
            core.updateStats { $0.stats.connectionsClosedByMock += connections.count }
        }
        core.logger.debug("mock refuses connections", metadata: [
            "mock.connections": "\(connections.count)", "mock.reopenAfter": "\(delay.map { "\($0)" } ?? "never")",
        ])
        if let delay {
            let generation = refusal.generation
            refusal.closed.futureResult.whenComplete { [self] _ in
                loop.scheduleTask(in: delay) { [self] in
                    reopen(generation: generation)
                }
            }
        }
        return refusal.closed.futureResult
    }

    /// Binds the same port again (once a refusal's closing is over). Returns a future that
    /// completes when listening, or fails with `MockPushError.bindFailed` when the port
    /// cannot be bound again; nil when already listening.
    ///
    /// - Throws: `MockPushError.notStarted` when the server is not running.
    func accept() throws -> EventLoopFuture<Void>? {
        switch try state.withLock({ try $0.accept() }) {
        case .listening:
            return nil
        case .wait(let done):
            return done
        case .bind(let generation, let group, let port, let after, let done):
            bind(generation: generation, group: group, port: port, after: after, done: done)
            return done.futureResult
        }
    }

    /// The timed end of the refusal of `generation`, unless something overtook it.
    private func reopen(generation: Int) {
        guard case .bind(let generation, let group, let port, let after, let done)? =
            state.withLock({ $0.reopen(generation: generation) }) else { return }
        bind(generation: generation, group: group, port: port, after: after, done: done)
        done.futureResult.whenFailure { [core] error in
            core.logger.error("mock could not listen again", metadata: ["error": "\(error)"])
        }
    }

    private func bind(
        generation: Int, group: MultiThreadedEventLoopGroup, port: Int,
        after: EventLoopFuture<Void>, done: EventLoopPromise<Void>
    ) {
        let host = core.configuration.host
        after
            .flatMap { [self] in
                do {
                    return bootstrap(group).withBoundSocket(try Self.boundSocket(host: host, port: port))
                } catch {
                    return group.next().makeFailedFuture(error)
                }
            }
            .whenComplete { [self] result in
                switch result {
                case .success(let channel):
                    if let done = listening(generation: generation, channel: channel, port: port) {
                        core.logger.debug("mock listening again", metadata: ["mock.port": "\(port)"])
                        done.succeed()
                    } else {
                        channel.close(promise: nil)
                    }
                case .failure(let error):
                    state.withLock { $0.bindFailed(generation: generation) }?.done.fail(
                        MockPushError(.bindFailed, "cannot listen on \(host):\(port) again", cause: error)
                    )
                }
            }
    }

    /// Closes the socket under the TLS handler, so no close_notify is sent or awaited.
    ///
    /// Shuts the output down first: that sends the FIN even when a child process holds
    /// a copy of the socket (NIO's accepted sockets lack close-on-exec), where a close
    /// alone would not.
    private static func closeBelowTLS(_ channel: any Channel) -> EventLoopFuture<Void> {
        channel.eventLoop.flatSubmit {
            guard let tls = try? channel.pipeline.syncOperations.context(handlerType: NIOSSLServerHandler.self) else {
                return channel.close()
            }
            // A context's close goes to the handlers before it: straight to the socket.
            tls.close(mode: .output, promise: nil)
            let promise = channel.eventLoop.makePromise(of: Void.self)
            tls.close(mode: .all, promise: promise)
            return promise.futureResult
        }.recover { _ in }
    }
}
