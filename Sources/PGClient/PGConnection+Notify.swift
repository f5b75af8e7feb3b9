import CLibPQ
import Foundation

/// A `NOTIFY` received on a channel this connection listens to.
public struct PGNotification: Sendable, Equatable {
    public var channel: String
    public var payload: String
    /// The server process that sent it.
    public var senderPID: Int32

    public init(channel: String, payload: String, senderPID: Int32) {
        self.channel = channel
        self.payload = payload
        self.senderPID = senderPID
    }
}

extension PGConnection {
    /// Starts listening on `channel` (kept across reconnects).
    public func listen(_ channel: String) throws(PGError) {
        try execute("LISTEN " + quoteIdentifier(channel))
        if !listening.contains(channel) { listening.append(channel) }
    }

    /// Waits until at least one notification arrives, `timeout` passes or `interrupt()`
    /// is called, and returns the notifications received (possibly none).
    ///
    /// Notifications that arrived while another statement ran are already queued and
    /// returned at once. Blocks this connection's own thread in `poll(2)` on the socket;
    /// other calls on the connection wait meanwhile, so listen on a connection of its own.
    /// Never waits longer than `timeout` once connected (a reconnect first is bounded by
    /// `connect_timeout` and `statementDeadline`); a server that stops answering without
    /// closing the connection looks like silence here until the kernel's keepalives
    /// close it.
    /// - Throws: `PGError` `.connectionLost` when the server goes away while waiting.
    public func waitForNotifications(timeout: Duration) throws(PGError) -> [PGNotification] {
        let c = try liveConnection()
        var received = drainNotifications(c)
        if !received.isEmpty { return received }
        let deadline = ContinuousClock.now + timeout
        while received.isEmpty {
            let remaining = ContinuousClock.now.duration(to: deadline)
            if remaining <= .zero { break }
            var fds = [pollfd(fd: PQsocket(c), events: Int16(POLLIN), revents: 0),
                       pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)]
            let n = poll(&fds, 2, remaining.pollMilliseconds)
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                throw abandon(c, "poll(2) while waiting for notifications failed: " + String(cString: strerror(code)))
            }
            if fds[0].revents & Int16(POLLNVAL) != 0 {
                throw abandon(c, "the connection's socket is no longer open")
            }
            if fds[1].revents != 0 {
                var sink = [UInt8](repeating: 0, count: 64)
                while read(wakePipe.read, &sink, sink.count) > 0 {}
                break
            }
            if fds[0].revents != 0 {
                if PQconsumeInput(c) == 0 || PQstatus(c) != CONNECTION_OK {
                    throw abandon(c, "connection lost while waiting for notifications: " + libpqMessage(c))
                }
                received = drainNotifications(c)
            }
        }
        return received
    }

    /// Wakes a `waitForNotifications` in progress (or the next one) at once. Safe from any thread.
    public nonisolated func interrupt() {
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
    }

    private func drainNotifications(_ c: OpaquePointer) -> [PGNotification] {
        var out: [PGNotification] = []
        while let n = PQnotifies(c) {
            out.append(PGNotification(channel: String(cString: n.pointee.relname),
                                      payload: String(cString: n.pointee.extra),
                                      senderPID: n.pointee.be_pid))
            PQfreemem(n)
        }
        return out
    }
}
