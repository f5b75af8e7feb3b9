#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// The listening socket, made by hand so that child processes do not inherit it.
extension MockListener {
    /// A TCP socket bound to `host:port` with SO_REUSEADDR, SO_REUSEPORT and close-on-exec,
    /// for `ServerBootstrap.withBoundSocket` (which makes it non-blocking and listens), or to
    /// hold the port (``portKeeper(host:port:)``).
    ///
    /// NIO's own sockets lack close-on-exec, so every child process started meanwhile
    /// (tests start curl, nghttp, h2load) gets a copy; while a copy lives, a closed
    /// listener still completes handshakes and keeps the port bound, which would defeat
    /// `refuse` and a bind again.
    ///
    /// - Throws: NIO's `IOError` (with the errno) when `socket`, `setsockopt` or `bind` fails.
    static func boundSocket(host: String, port: Int, reuseAddress: Bool = true) throws -> CInt {
        let address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        #if canImport(Glibc)
        let type = CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        #else
        let type = SOCK_STREAM
        #endif
        let fd = socket(address.protocol.rawValue, type, 0)
        guard fd >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        #if !canImport(Glibc)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        #endif
        var one: CInt = 1
        guard !reuseAddress || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<CInt>.size)) == 0 else {
            let code = errno
            close(fd)
            throw IOError(errnoCode: code, reason: "setsockopt(SO_REUSEADDR)")
        }
        // The listener and the keeper share the port: both must ask for it.
        guard setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<CInt>.size)) == 0 else {
            let code = errno
            close(fd)
            throw IOError(errnoCode: code, reason: "setsockopt(SO_REUSEPORT)")
        }
        guard address.withSockAddr({ bind(fd, $0, socklen_t($1)) }) == 0 else {
            let code = errno
            close(fd)
            throw IOError(errnoCode: code, reason: "bind")
        }
        return fd
    }

    /// A socket bound to the listener's port and never listening, held from `start` to
    /// `stop`: while the mock refuses, its port stays taken, so no other server that binds
    /// port 0 (a test suite starts hundreds) is given it, and a connect is still refused by
    /// this host rather than answered by that server. The listener binds the port again
    /// beside it (both with SO_REUSEPORT); connections only ever reach a listening socket.
    /// Without SO_REUSEADDR: Linux lets two sockets that both ask for it share a port as long
    /// as neither listens, so another server binding the port with SO_REUSEADDR would get it.
    ///
    /// - Throws: NIO's `IOError` when the socket cannot be made or bound.
    static func portKeeper(host: String, port: Int) throws -> CInt {
        try boundSocket(host: host, port: port, reuseAddress: false)
    }

    /// Closes a keeper (``portKeeper(host:port:)``).
    static func release(keeper fd: CInt) {
        close(fd)
    }
}
