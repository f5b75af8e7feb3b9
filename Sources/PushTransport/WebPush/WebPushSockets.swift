import CCurl
import Foundation
import Synchronization

/// Counts the sockets a Web Push sender's streams open and close, over every connection thread
/// and origin: libcurl opens and closes each through ``WebPushSockets/open`` and ``close``
/// (`CURLOPT_OPENSOCKETFUNCTION`, `CURLOPT_CLOSESOCKETFUNCTION`), so the count is exact where
/// libcurl reports no number of connections. ``PushSender/Stats/openConnections`` of a
/// ``WebPushSender`` is ``openNow``; ``peak`` shows the bound ``WebPushConfiguration/maxConnections``
/// held.
///
/// `Sendable`: atomics only. libcurl holds an unretained pointer to it (`CURLOPT_OPENSOCKETDATA`,
/// `CURLOPT_CLOSESOCKETDATA`); the provider that owns it outlives every stream.
final class WebPushSockets: Sendable {
    private let current = Atomic<Int>(0)
    private let highest = Atomic<Int>(0)
    private let total = Atomic<Int>(0)

    /// Sockets open now.
    var openNow: Int { current.load(ordering: .relaxed) }
    /// The most open at once since start.
    var peak: Int { highest.load(ordering: .relaxed) }
    /// Sockets opened since start.
    var opened: Int { total.load(ordering: .relaxed) }

    fileprivate func didOpen() {
        total.add(1, ordering: .relaxed)
        let now = current.add(1, ordering: .relaxed).newValue
        var seen = highest.load(ordering: .relaxed)
        while now > seen {
            let (exchanged, original) = highest.compareExchange(expected: seen, desired: now, ordering: .relaxed)
            if exchanged { break }
            seen = original
        }
    }

    fileprivate func didClose() { current.subtract(1, ordering: .relaxed) }

    /// Has `easy` open and close its sockets through this counter.
    func install(on easy: CurlEasy) throws {
        let me = Unmanaged.passUnretained(self).toOpaque()
        try checkCurl(ccurl_easy_setopt_opensocket_cb(easy.handle, webPushOpenSocket), "curl_easy_setopt(CURLOPT_OPENSOCKETFUNCTION)")
        try easy.set(CURLOPT_OPENSOCKETDATA, pointer: me, "CURLOPT_OPENSOCKETDATA")
        try checkCurl(ccurl_easy_setopt_closesocket_cb(easy.handle, webPushCloseSocket), "curl_easy_setopt(CURLOPT_CLOSESOCKETFUNCTION)")
        try easy.set(CURLOPT_CLOSESOCKETDATA, pointer: me, "CURLOPT_CLOSESOCKETDATA")
    }
}

/// `CURLOPT_OPENSOCKETFUNCTION`: the socket libcurl asked for, counted.
private func webPushOpenSocket(_ user: UnsafeMutableRawPointer?, _ purpose: curlsocktype, _ address: UnsafeMutablePointer<curl_sockaddr>?) -> curl_socket_t {
    guard let user, let address else { return -1 }
    let fd = socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
    if fd >= 0 { Unmanaged<WebPushSockets>.fromOpaque(user).takeUnretainedValue().didOpen() }
    return fd >= 0 ? fd : -1
}

/// `CURLOPT_CLOSESOCKETFUNCTION`: closes and uncounts it.
private func webPushCloseSocket(_ user: UnsafeMutableRawPointer?, _ fd: curl_socket_t) -> Int32 {
    if let user { Unmanaged<WebPushSockets>.fromOpaque(user).takeUnretainedValue().didClose() }
    return close(fd)
}
