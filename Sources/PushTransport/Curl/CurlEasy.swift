import CCurl

/// Owns one `CURL*` easy handle; freed in `deinit`.
///
/// Not `Sendable`: an easy handle lives on its connection's thread.
final class CurlEasy {
    let handle: UnsafeMutableRawPointer

    /// A `CURLOPT_HEADERFUNCTION` / `CURLOPT_WRITEFUNCTION` callback.
    typealias Callback = @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int

    init() throws {
        guard let handle = curl_easy_init() else {
            throw PushTransportError(.curlSetup, "curl_easy_init failed (out of memory)")
        }
        self.handle = handle
    }

    deinit { curl_easy_cleanup(handle) }

    func set(_ option: CURLoption, _ value: Int, _ name: @autoclosure () -> String) throws {
        try checkCurl(ccurl_easy_setopt_long(handle, option, value), "curl_easy_setopt(\(name()))")
    }

    func set(_ option: CURLoption, pointer: UnsafeRawPointer?, _ name: @autoclosure () -> String) throws {
        try checkCurl(ccurl_easy_setopt_ptr(handle, option, pointer), "curl_easy_setopt(\(name()))")
    }

    func set(_ option: CURLoption, string: String, _ name: @autoclosure () -> String) throws {
        // libcurl copies string options (since 7.17), so the pointer need not outlive the call.
        try string.withCString { try checkCurl(ccurl_easy_setopt_ptr(handle, option, $0), "curl_easy_setopt(\(name()))") }
    }

    /// Sets a blob option; libcurl copies the bytes (`CURL_BLOB_COPY`).
    func set(_ option: CURLoption, blob: [UInt8], _ name: @autoclosure () -> String) throws {
        var copy = blob
        let rc = copy.withUnsafeMutableBytes { raw -> CURLcode in
            var b = curl_blob(data: raw.baseAddress, len: raw.count, flags: UInt32(CURL_BLOB_COPY))
            return ccurl_easy_setopt_blob(handle, option, &b)
        }
        try checkCurl(rc, "curl_easy_setopt(\(name()))")
    }

    /// `CURLOPT_HEADERFUNCTION`, called with each answer header line and `CURLOPT_HEADERDATA`.
    func setHeaderCallback(_ callback: Callback) throws {
        try checkCurl(ccurl_easy_setopt_header_cb(handle, callback), "curl_easy_setopt(CURLOPT_HEADERFUNCTION)")
    }

    /// `CURLOPT_WRITEFUNCTION`, called with each piece of the answer body and `CURLOPT_WRITEDATA`.
    func setWriteCallback(_ callback: Callback) throws {
        try checkCurl(ccurl_easy_setopt_write_cb(handle, callback), "curl_easy_setopt(CURLOPT_WRITEFUNCTION)")
    }

    /// `CURLINFO_RESPONSE_CODE` into `code`; libcurl's result code.
    func responseCode(_ code: inout Int) -> CURLcode {
        ccurl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code)
    }

    /// `CURLINFO_NUM_CONNECTS`: new connections this transfer had to open (0 if libcurl cannot say).
    func connectsMade() -> Int {
        var n = 0
        guard ccurl_easy_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &n) == CURLE_OK else { return 0 }
        return n
    }

    /// `CURLINFO_TOTAL_TIME_T`: the transfer's time so far, in microseconds (0 if unknown).
    func totalMicroseconds() -> Int64 {
        var us: curl_off_t = 0
        _ = ccurl_easy_getinfo_off(handle, CURLINFO_TOTAL_TIME_T, &us)
        return Int64(us)
    }
}
