import Foundation
import Synchronization

/// A TCP proxy on 127.0.0.1 for tests: forwards each connection it accepts to a port on
/// 127.0.0.1, and can be switched to a blackhole that stops forwarding in both directions
/// without closing either socket. The kernel still acknowledges what is sent, as it does
/// when a server hangs or a middlebox drops a flow, so TCP keepalives and
/// `tcp_user_timeout` never fire: only a client-side deadline ends the wait.
///
/// Without a target it is a silent server: it accepts connections and never answers.
///
/// One thread accepts; each connection has a relay thread that polls both sockets and a
/// wake pipe, through which `setBlackholed(_:)` and `stop()` reach it at once.
///
/// Its descriptors are close-on-exec, so that a child process the test starts (a `pushq
/// worker`) cannot keep the proxy's sockets open after the proxy closes them; and it writes
/// with `MSG_NOSIGNAL`, so that a peer gone while bytes were held back cannot raise SIGPIPE
/// in the test process.
public final class TCPProxy: Sendable {
    /// The port it listens on, on 127.0.0.1.
    public let port: UInt16
    private let listener: Int32
    private let targetPort: UInt16?
    private let stopPipe: Pipe
    private let state = Mutex(State())

    private struct State {
        var blackholed = false
        var stopped = false
        var accepted = 0
        var relays: [Relay] = []
    }

    private struct Relay {
        var client: Int32
        var server: Int32
        var wake: Pipe
    }

    /// A non-blocking pipe: writing a byte wakes the thread that polls `read`.
    private struct Pipe {
        var read: Int32
        var write: Int32

        init() throws {
            var fds: [Int32] = [-1, -1]
            guard Glibc.pipe(&fds) == 0 else { throw TestSetupError("pipe(2) failed: \(String(cString: strerror(errno)))") }
            for fd in fds {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                TCPProxy.closeOnExec(fd)
            }
            (read, write) = (fds[0], fds[1])
        }

        func wake() {
            var byte: UInt8 = 1
            _ = Glibc.write(write, &byte, 1)
        }

        func drain() {
            var sink = [UInt8](repeating: 0, count: 64)
            while Glibc.read(read, &sink, sink.count) > 0 {}
        }

        func close() {
            Glibc.close(read)
            Glibc.close(write)
        }
    }

    /// Starts listening on 127.0.0.1 on a free port.
    ///
    /// - Parameter targetPort: where to forward, on 127.0.0.1; nil for a silent server.
    public init(forwardingTo targetPort: UInt16?) throws {
        self.targetPort = targetPort
        let fd = socket(AF_INET, Self.streamSocket, 0)
        guard fd >= 0 else { throw TestSetupError("socket(2) failed: \(String(cString: strerror(errno)))") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            Glibc.close(fd)
            throw TestSetupError("could not listen on 127.0.0.1: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.listener = fd
        self.port = UInt16(bigEndian: address.sin_port)
        self.stopPipe = try Pipe()
        let thread = Thread { [self] in self.acceptLoop() }
        thread.name = "test.tcp-proxy"
        thread.start()
    }

    /// A proxy to the server of `url`, a `postgresql://` URL with a port on 127.0.0.1.
    public convenience init(forwardingToServerOf url: String) throws {
        guard let port = URLComponents(string: url)?.port.flatMap(UInt16.init(exactly:)) else {
            throw TestSetupError("the proxy tests need a postgresql:// URL with a port in PUSHQ_DATABASE_URL, not \(url)")
        }
        try self.init(forwardingTo: port)
    }

    /// `url` with its port replaced by this proxy's.
    public func url(reaching url: String) throws -> String {
        guard var components = URLComponents(string: url) else { throw TestSetupError("not a URL: \(url)") }
        components.port = Int(port)
        guard let string = components.string else { throw TestSetupError("cannot rebuild the URL \(url)") }
        return string
    }

    /// How many connections it has accepted.
    public var acceptedCount: Int { state.withLock { $0.accepted } }

    /// Stops or resumes forwarding, on the connections open now and those accepted later.
    /// Once this returns, no byte that arrives afterwards is forwarded until it is resumed.
    public func setBlackholed(_ blackholed: Bool) {
        state.withLock { state in
            state.blackholed = blackholed
            for relay in state.relays { relay.wake.wake() }
        }
    }

    /// Closes every connection and stops listening.
    public func stop() {
        state.withLock { state in
            state.stopped = true
            for relay in state.relays {
                _ = shutdown(relay.client, Int32(SHUT_RDWR))
                if relay.server >= 0 { _ = shutdown(relay.server, Int32(SHUT_RDWR)) }
                relay.wake.wake()
            }
        }
        stopPipe.wake()
    }

    private func acceptLoop() {
        defer { Glibc.close(listener) }
        while true {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 2, -1) < 0 && errno != EINTR { return }
            if state.withLock({ $0.stopped }) { return }
            guard fds[0].revents & Int16(POLLIN) != 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            Self.closeOnExec(client)
            let server = targetPort.map(Self.connectLoopback) ?? -1
            guard targetPort == nil || server >= 0, let wake = try? Pipe() else {
                Glibc.close(client)
                if server >= 0 { Glibc.close(server) }
                continue
            }
            let relay = Relay(client: client, server: server, wake: wake)
            state.withLock { state in
                state.accepted += 1
                state.relays.append(relay)
            }
            let thread = Thread { [self] in self.run(relay) }
            thread.name = "test.tcp-proxy.relay"
            thread.start()
        }
    }

    /// Forwards between the two sockets until either closes or the proxy stops.
    private func run(_ relay: Relay) {
        defer {
            state.withLock { $0.relays.removeAll { $0.client == relay.client } }
            Glibc.close(relay.client)
            if relay.server >= 0 { Glibc.close(relay.server) }
            relay.wake.close()
        }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let (stopped, blackholed) = state.withLock { ($0.stopped, $0.blackholed) }
            if stopped { return }
            var fds = [pollfd(fd: relay.wake.read, events: Int16(POLLIN), revents: 0)]
            if !blackholed && relay.server >= 0 {
                fds.append(pollfd(fd: relay.client, events: Int16(POLLIN), revents: 0))
                fds.append(pollfd(fd: relay.server, events: Int16(POLLIN), revents: 0))
            }
            if poll(&fds, nfds_t(fds.count), -1) < 0 && errno != EINTR { return }
            if fds[0].revents != 0 {
                relay.wake.drain()
                continue
            }
            for (index, from, to) in [(1, relay.client, relay.server), (2, relay.server, relay.client)]
            where index < fds.count && fds[index].revents != 0 {
                // Read under the lock, so that nothing is read once setBlackholed(true) has returned.
                let count = state.withLock { state -> Int in
                    state.blackholed ? -2 : Glibc.read(from, &buffer, buffer.count)
                }
                if count == -2 { break }
                if count <= 0 { return }
                var sent = 0
                while sent < count {
                    let n = buffer.withUnsafeBytes { send(to, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
                    if n <= 0 { return }
                    sent += n
                }
            }
        }
    }

    /// A TCP socket that is close-on-exec from the start.
    private static let streamSocket = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)

    /// Marks `fd` close-on-exec. Glibc's `accept4` and `pipe2` are not visible to Swift; a
    /// child spawned in the instant between creating such a descriptor and this call would
    /// still inherit it.
    private static func closeOnExec(_ fd: Int32) {
        _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private static func connectLoopback(_ port: UInt16) -> Int32 {
        let fd = socket(AF_INET, streamSocket, 0)
        guard fd >= 0 else { return -1 }
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if connected != 0 {
            Glibc.close(fd)
            return -1
        }
        return fd
    }
}
