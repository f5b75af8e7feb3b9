import CCurl

/// Process-wide libcurl setup and the capability check done before any handle exists.
enum CurlRuntime {
    /// 7.77.0 (`CURLOPT_CAINFO_BLOB`), as `LIBCURL_VERSION_NUM`.
    static let minimumVersion = 0x07_4D_00

    /// `curl_global_init` once per process (it is not thread-safe, so a static `let` guards it)
    /// and the version check: HTTP/2 support and libcurl ≥ 7.77.0, the newest of what the code
    /// uses: `CURLOPT_CAINFO_BLOB` (7.77.0), `curl_multi_wakeup` (7.68.0), `curl_multi_poll` and
    /// `CURLMOPT_MAX_CONCURRENT_STREAMS` (7.67.0/7.66.0), `CURLOPT_UPLOAD_BUFFERSIZE` (7.62.0),
    /// and the multiplexed-POST fixes of 7.50.2.
    ///
    /// It also ignores SIGPIPE for the whole process (unless the program set a handler of its
    /// own). Every handle sets `CURLOPT_NOSIGNAL` (libcurl must not touch signals from several
    /// threads), and with it libcurl stops ignoring SIGPIPE around its calls; but OpenSSL writes
    /// to the socket itself (a TLS alert, `close_notify` when a connection is cleaned up) with
    /// plain `write()`, and a write to a connection the peer reset raises SIGPIPE, whose default
    /// action ends the process (curl#3787; libcurl before 8.x, e.g. 7.81 and 7.88). Ignored, the
    /// write fails with EPIPE and the transfer with a send error, which the sender retries.
    /// Done here, once, so every program that sends through this module is protected.
    static let check: Result<LibcurlInfo, PushTransportError> = {
        guard ccurl_ignore_sigpipe() >= 0 else {
            return .failure(PushTransportError(.unsupportedLibcurl, "sigaction(SIGPIPE) failed: SIGPIPE cannot be ignored, and a connection reset during a TLS write would end the process"))
        }
        let rc = ccurl_global_init_all()
        guard rc == CURLE_OK else {
            return .failure(PushTransportError(.unsupportedLibcurl, "curl_global_init failed: \(String(cString: curl_easy_strerror(rc)))"))
        }
        guard let info = ccurl_version_info() else {
            return .failure(PushTransportError(.unsupportedLibcurl, "curl_version_info returned nothing"))
        }
        let version = String(cString: info.pointee.version)
        let number = Int(info.pointee.version_num)
        guard info.pointee.features & CURL_VERSION_HTTP2 != 0 else {
            return .failure(PushTransportError(.unsupportedLibcurl, "libcurl \(version) was built without HTTP/2 (nghttp2); APNs and FCM need HTTP/2 — install a libcurl with HTTP/2 support"))
        }
        guard number >= minimumVersion else {
            return .failure(PushTransportError(.unsupportedLibcurl, "libcurl \(version) is too old: pushq needs 7.77.0 or later (CURLOPT_CAINFO_BLOB, curl_multi_wakeup)"))
        }
        let caInfo = info.pointee.cainfo.map { String(cString: $0) }
        let caPath = info.pointee.capath.map { String(cString: $0) }
        let ssl = info.pointee.ssl_version.map { String(cString: $0) } ?? "none"
        let nghttp2 = info.pointee.nghttp2_version.map { String(cString: $0) } ?? "none"
        return .success(LibcurlInfo(version: version, ssl: ssl, nghttp2: nghttp2, defaultCAInfo: caInfo, defaultCAPath: caPath))
    }()
}

/// What the running libcurl reports about itself.
public struct LibcurlInfo: Sendable, Hashable {
    /// e.g. `"7.88.1"`.
    public var version: String
    /// e.g. `"OpenSSL/3.0.19"`.
    public var ssl: String
    /// e.g. `"1.52.0"`.
    public var nghttp2: String
    /// The built-in CA bundle file (`CURLOPT_CAINFO` default), if any.
    public var defaultCAInfo: String?
    /// The built-in CA directory (`CURLOPT_CAPATH` default), if any.
    public var defaultCAPath: String?

    /// Checks the running libcurl (HTTP/2, version) once per process and returns its description.
    ///
    /// - Throws: ``PushTransportError`` `.unsupportedLibcurl` with an actionable message.
    public static func checked() throws -> LibcurlInfo { try CurlRuntime.check.get() }
}

/// libcurl's message for `code`.
func curlMessage(_ code: CURLcode) -> String { String(cString: curl_easy_strerror(code)) }
func curlMessage(_ code: CURLMcode) -> String { String(cString: curl_multi_strerror(code)) }

/// A libcurl result: `CURLcode` (easy handles) or `CURLMcode` (multi handles).
protocol CurlResult {
    var succeeded: Bool { get }
    /// libcurl's own message for it.
    var message: String { get }
}

extension CURLcode: CurlResult {
    var succeeded: Bool { self == CURLE_OK }
    var message: String { curlMessage(self) }
}

extension CURLMcode: CurlResult {
    var succeeded: Bool { self == CURLM_OK }
    var message: String { curlMessage(self) }
}

/// The one check of libcurl's setup calls (`curl_easy_setopt`, `curl_multi_setopt`...):
/// throws ``PushTransportError`` `.curlSetup` naming the call, with libcurl's message.
///
/// - Parameter call: e.g. `curl_easy_setopt(CURLOPT_URL)`.
func checkCurl(_ result: some CurlResult, _ call: @autoclosure () -> String) throws {
    guard result.succeeded else { throw PushTransportError(.curlSetup, "\(call()) failed: \(result.message)") }
}
