#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// The listening socket, made by hand so that child processes do not inherit it.
extension MockListener {
    /// A TCP socket bound to `host:port` with SO_REUSEADDR and close-on-exec, for
    /// `ServerBootstrap.withBoundSocket` (which makes it non-blocking and listens).
    ///
    /// NIO's own sockets lack close-on-exec, so every child process started meanwhile
    /// (tests start curl, nghttp, h2load) gets a copy; while a copy lives, a closed
    /// listener still completes handshakes and keeps the port bound, which would defeat
    /// `refuse` and a bind again.
    ///
    /// - Throws: NIO's `IOError` (with the errno) when `socket`, `setsockopt` or `bind` fails.
    static func boundSocket(host: String, port: Int) throws -> CInt {
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
        guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<CInt>.size)) == 0 else {
            let code = errno
            close(fd)
            throw IOError(errnoCode: code, reason: "setsockopt(SO_REUSEADDR)")
        }
        guard address.withSockAddr({ bind(fd, $0, socklen_t($1)) }) == 0 else {
            let code = errno
            close(fd)
            throw IOError(errnoCode: code, reason: "bind")
        }
        return fd
    }
}
