import Glibc

/// A plain TCP socket to 127.0.0.1 (no TLS, no HTTP/2): to see a connect refused, and to
/// hold a connection open and see the mock close it.
final class RawTCP {
    enum Connect: Equatable {
        case connected
        case refused
        /// Any other errno.
        case failed(Int32)
    }

    private let fd: Int32
    /// How the connect ended.
    let result: Connect

    /// Connects (blocking; immediate on loopback).
    init(port: Int) {
        // Close-on-exec: child processes the tests start must not hold the connection open.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.fd = fd
        var address = Self.loopback(port: port)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if rc == 0 {
            result = .connected
        } else {
            result = errno == ECONNREFUSED ? .refused : .failed(errno)
        }
    }

    deinit { close(fd) }

    /// Blocks until the peer closes the connection (read gives end of file or a reset):
    /// true; false when `seconds` pass first or the socket never connected.
    func waitForClose(seconds: Int = 10) -> Bool {
        guard result == .connected else { return false }
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
            // The peer sent something (it never should before a ClientHello); keep reading.
        }
    }

    /// Whether a socket of another server could bind 127.0.0.1:`port` now: bound with
    /// SO_REUSEADDR (as servers bind, so a connection in TIME_WAIT does not count), without
    /// SO_REUSEPORT, then closed. False while a live socket holds the port.
    static func bindable(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// 127.0.0.1:`port`.
    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
