import CCurl

/// Owns one `CURLM*`: in pushq, exactly one HTTP/2 connection (`CURLMOPT_MAX_HOST_CONNECTIONS = 1`).
///
/// `@unchecked Sendable`: every method except ``wakeup()`` is called only from the
/// connection's own thread. ``wakeup()`` may be called from any thread; libcurl documents
/// `curl_multi_wakeup` as safe to call concurrently with the thread in `curl_multi_poll`.
/// The handle is freed in `deinit`, which runs only after every easy handle was removed
/// (the connection removes them before dropping its multi).
final class CurlMulti: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer

    /// - Parameter maxConcurrentStreams: `CURLMOPT_MAX_CONCURRENT_STREAMS` (libcurl's default is 100).
    init(maxConcurrentStreams: Int) throws {
        guard let handle = curl_multi_init() else {
            throw APNsTransportError(.curlSetup, "curl_multi_init failed (out of memory)")
        }
        self.handle = handle
        try set(CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX), "CURLMOPT_PIPELINING")
        try set(CURLMOPT_MAX_HOST_CONNECTIONS, 1, "CURLMOPT_MAX_HOST_CONNECTIONS")
        try set(CURLMOPT_MAX_TOTAL_CONNECTIONS, 1, "CURLMOPT_MAX_TOTAL_CONNECTIONS")
        try set(CURLMOPT_MAXCONNECTS, 1, "CURLMOPT_MAXCONNECTS")
        try set(CURLMOPT_MAX_CONCURRENT_STREAMS, maxConcurrentStreams, "CURLMOPT_MAX_CONCURRENT_STREAMS")
    }

    deinit { curl_multi_cleanup(handle) }

    private func set(_ option: CURLMoption, _ value: Int, _ name: String) throws {
        let rc = ccurl_multi_setopt_long(handle, option, value)
        guard rc == CURLM_OK else {
            throw APNsTransportError(.curlSetup, "curl_multi_setopt(\(name)) failed: \(curlMessage(rc))")
        }
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
    func wakeup() { _ = curl_multi_wakeup(handle) }

    /// Calls `body` for each finished transfer with its easy handle's private pointer and result.
    func forEachDone(_ body: (UnsafeMutableRawPointer?, CURLcode) -> Void) {
        var left: Int32 = 0
        while let message = curl_multi_info_read(handle, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            var privatePointer: UnsafeMutableRawPointer? = nil
            _ = ccurl_easy_getinfo_ptr(easy, CURLINFO_PRIVATE, &privatePointer)
            body(privatePointer, ccurl_msg_result(message))
        }
    }
}
