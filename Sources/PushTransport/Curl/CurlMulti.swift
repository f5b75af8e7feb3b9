import CCurl

/// Owns one `CURLM*`: for APNs and FCM exactly one HTTP/2 connection (`CURLMOPT_MAX_HOST_CONNECTIONS = 1`);
/// for Web Push up to `connections` over all origins, libcurl closing the oldest idle one when a
/// new one is needed and the cache is full (`CURLMOPT_MAX_TOTAL_CONNECTIONS`, `CURLMOPT_MAXCONNECTS`).
///
/// `@unchecked Sendable`: every method except ``wakeup()`` is called only from the
/// connection's own thread. ``wakeup()`` may be called from any thread, but only through
/// `WakeTarget`, under its lock, which the connection clears before ``close()``; libcurl
/// documents `curl_multi_wakeup` as safe to call concurrently with the thread in
/// `curl_multi_poll`. The connection closes the handle on its own thread with ``close()``
/// once every easy handle was removed; `deinit` frees it only for a multi that never
/// reached a thread (a sender that was never started).
final class CurlMulti: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    private var closed = false

    /// - Parameters:
    ///   - maxConcurrentStreams: `CURLMOPT_MAX_CONCURRENT_STREAMS` (libcurl's default is 100).
    ///   - connections: connections open at once over all hosts (`CURLMOPT_MAX_TOTAL_CONNECTIONS`)
    ///     and kept when idle (`CURLMOPT_MAXCONNECTS`); transfers beyond wait inside libcurl.
    ///   - perHost: connections open at once to one host (`CURLMOPT_MAX_HOST_CONNECTIONS`).
    init(maxConcurrentStreams: Int, connections: Int = 1, perHost: Int = 1) throws {
        guard let handle = curl_multi_init() else {
            throw PushTransportError(.curlSetup, "curl_multi_init failed (out of memory)")
        }
        self.handle = handle
        try set(CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX), "CURLMOPT_PIPELINING")
        try set(CURLMOPT_MAX_HOST_CONNECTIONS, perHost, "CURLMOPT_MAX_HOST_CONNECTIONS")
        try set(CURLMOPT_MAX_TOTAL_CONNECTIONS, connections, "CURLMOPT_MAX_TOTAL_CONNECTIONS")
        try set(CURLMOPT_MAXCONNECTS, connections, "CURLMOPT_MAXCONNECTS")
        try set(CURLMOPT_MAX_CONCURRENT_STREAMS, maxConcurrentStreams, "CURLMOPT_MAX_CONCURRENT_STREAMS")
    }

    deinit { if !closed { curl_multi_cleanup(handle) } }

    /// `curl_multi_cleanup`: closes the connection. Call once, on the owning thread.
    func close() -> CURLMcode {
        guard !closed else { return CURLM_OK }
        closed = true
        return curl_multi_cleanup(handle)
    }

    private func set(_ option: CURLMoption, _ value: Int, _ name: String) throws {
        try checkCurl(ccurl_multi_setopt_long(handle, option, value), "curl_multi_setopt(\(name))")
    }

    func add(_ easy: CurlEasy) -> CURLMcode { curl_multi_add_handle(handle, easy.handle) }
    func remove(_ easy: CurlEasy) -> CURLMcode { curl_multi_remove_handle(handle, easy.handle) }

    /// Drives transfers; returns the number still running.
    func perform() -> (CURLMcode, Int32) {
        var running: Int32 = 0
        let rc = curl_multi_perform(handle, &running)
        return (rc, running)
    }

    /// Waits for socket activity, a timeout, or ``wakeup()``.
    func poll(timeoutMilliseconds: Int32) -> CURLMcode {
        curl_multi_poll(handle, nil, 0, timeoutMilliseconds, nil)
    }

    /// Interrupts ``poll(timeoutMilliseconds:)`` from another thread.
    func wakeup() -> CURLMcode { curl_multi_wakeup(handle) }

    /// A finished transfer.
    struct Done {
        /// Its easy handle.
        var easy: UnsafeMutableRawPointer
        /// `CURLINFO_PRIVATE`, nil if libcurl could not return it (`privateResult`).
        var privatePointer: UnsafeMutableRawPointer?
        var privateResult: CURLcode
        /// The transfer's result.
        var result: CURLcode
    }

    /// Calls `body` for each finished transfer.
    func forEachDone(_ body: (Done) -> Void) {
        var left: Int32 = 0
        while let message = curl_multi_info_read(handle, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            var privatePointer: UnsafeMutableRawPointer? = nil
            let rc = ccurl_easy_getinfo_ptr(easy, CURLINFO_PRIVATE, &privatePointer)
            body(Done(easy: easy, privatePointer: rc == CURLE_OK ? privatePointer : nil, privateResult: rc, result: ccurl_msg_result(message)))
        }
    }
}
