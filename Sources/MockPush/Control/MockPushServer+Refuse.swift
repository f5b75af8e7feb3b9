import NIOCore

/// An outage: the port refuses connections for a while, then serves again.
extension MockPushServer {
    /// Stops listening and closes every open connection: new TCP connects to the port get
    /// ECONNREFUSED, and clients holding connections see them close (below TLS: no
    /// close_notify, no GOAWAY). The port stays reserved for `acceptConnections()`.
    ///
    /// Returns once the listening socket and the connections are closed. Calling it again
    /// while refusing is allowed (it also cancels a timed reopen); `stop()` works in
    /// either state. Counted in `MockPushStats.refusals`; `listening` turns false.
    ///
    /// - Parameter reopenAfter: when given, the port is bound again by itself this long
    ///   after the connections are closed (as `POST /_mock/refuse` does); nil waits for
    ///   `acceptConnections()`.
    /// - Throws: `MockPushError.notStarted` when the server is not running.
    public func refuseConnections(reopenAfter: Duration? = nil) async throws {
        try await listener.refuse(reopenAfter: reopenAfter.map { TimeAmount($0) }).get()
    }

    /// Listens again on the port `start()` returned, on the same event-loop threads (after
    /// `refuseConnections()`); does nothing when already listening. Returns once the port
    /// accepts connections.
    ///
    /// - Throws: `MockPushError.notStarted` when the server is not running;
    ///   `MockPushError.bindFailed` when the port cannot be bound again (the server then
    ///   keeps refusing connections).
    public func acceptConnections() async throws {
        try await listener.accept()?.get()
    }
}
