import Foundation
import PushCore
import Synchronization

/// Resolves Web Push hosts with `getaddrinfo`, each lookup on a thread of its own (never a
/// connection thread, never Swift's cooperative pool), and keeps the answers for
/// ``freshSeconds``: the sender checks the addresses (``WebPushEndpointPolicy``) and pins them,
/// so that libcurl never resolves a subscriber's host name itself.
///
/// `getaddrinfo` has no deadline of its own: the caller gives up waiting for a lookup after its
/// own deadline, and a lookup that returns later still fills the cache. At most
/// ``maximumLookups`` run at once; hosts beyond wait for a free one.
final class WebPushResolver: Sendable {
    /// What a lookup found.
    struct Lookup: Sendable {
        /// 4- or 16-byte addresses in the resolver's order, nil when the lookup failed.
        var addresses: [[UInt8]]?
        /// Whether the name does not exist (`EAI_NONAME`, `EAI_NODATA`): no address, for sure.
        var nameUnknown: Bool
        /// The failure's words (`gai_strerror`), empty after a success.
        var message: String
        /// When it finished, monotonic nanoseconds.
        var finishedAt: Int64
    }

    private struct State {
        var cache: [String: Lookup] = [:]
        var running: Set<String> = []
    }

    /// How long a lookup is reused, in seconds: 30.
    static let freshSeconds: Int64 = 30
    /// Lookups running at once: 8.
    static let maximumLookups = 8

    private let state = Mutex(State())
    /// Called on the lookup's thread when one finishes (wakes the sender's resolve thread).
    private let finished: @Sendable () -> Void

    init(finished: @escaping @Sendable () -> Void) {
        self.finished = finished
    }

    /// The fresh lookup of `host`, else nil after starting one (unless one runs, or too many do).
    func lookup(_ host: String, now: Int64) -> Lookup? {
        let start = state.withLock { s -> Bool in
            if let cached = s.cache[host], now - cached.finishedAt < Self.freshSeconds * 1_000_000_000 { return false }
            guard !s.running.contains(host), s.running.count < Self.maximumLookups else { return false }
            s.running.insert(host)
            return true
        }
        if start {
            let thread = Thread { [self] in
                let result = Self.resolve(host)
                state.withLock { s in
                    s.running.remove(host)
                    s.cache[host] = result
                }
                finished()
            }
            thread.name = "pushq-webpush-resolve"
            thread.start()
            return nil
        }
        return state.withLock { s in
            guard let cached = s.cache[host], now - cached.finishedAt < Self.freshSeconds * 1_000_000_000 else { return nil }
            return cached
        }
    }

    /// `getaddrinfo(host)` for TCP, both families; blocks the calling thread.
    static func resolve(_ host: String) -> Lookup {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, nil, &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        guard rc == 0 else {
            return Lookup(addresses: nil, nameUnknown: rc == EAI_NONAME || rc == -5 /* glibc's EAI_NODATA */,
                          message: String(cString: gai_strerror(rc)), finishedAt: monotonicNanoseconds())
        }
        var addresses: [[UInt8]] = []
        var node = list
        while let n = node {
            if let sa = n.pointee.ai_addr {
                var bytes: [UInt8]?
                if n.pointee.ai_family == AF_INET {
                    bytes = sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { p in
                        withUnsafeBytes(of: p.pointee.sin_addr) { Array($0) }
                    }
                } else if n.pointee.ai_family == AF_INET6 {
                    bytes = sa.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { p in
                        withUnsafeBytes(of: p.pointee.sin6_addr) { Array($0) }
                    }
                }
                if let bytes, !addresses.contains(bytes) { addresses.append(bytes) }
            }
            node = n.pointee.ai_next
        }
        return Lookup(addresses: addresses, nameUnknown: addresses.isEmpty, message: "", finishedAt: monotonicNanoseconds())
    }

    /// The `CURLOPT_RESOLVE` entry pinning `origin`'s host to `addresses`: `host:port:a,b`
    /// (IPv6 addresses in brackets); empty for an IP-literal host, which libcurl never resolves.
    static func pin(_ origin: WebPushOrigin, _ addresses: [[UInt8]]) -> String {
        guard case .name(let host) = origin.host else { return "" }
        return "\(host):\(origin.port):" + addresses.map(text).joined(separator: ",")
    }

    /// An address as text: dotted quad, or bracketed IPv6 groups.
    static func text(_ address: [UInt8]) -> String {
        if address.count == 4 { return address.map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 16, by: 2).map { String(UInt16(address[$0]) << 8 | UInt16(address[$0 + 1]), radix: 16) }
        return "[" + groups.joined(separator: ":") + "]"
    }
}
