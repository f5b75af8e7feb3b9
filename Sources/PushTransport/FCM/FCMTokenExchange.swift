import CCurl
import PushCore

/// How the OAuth exchange reaches `token_uri`: trusted CAs and deadlines.
public struct FCMTokenExchangeConfiguration: Sendable {
    /// An extra trusted CA certificate (PEM), added to the system's roots, as for APNs
    /// (``PushSenderConfiguration/extraCAFile``). Defaults to nil.
    public var extraCAFile: String?
    /// Deadline of the whole exchange, seconds. Defaults to 20.
    public var requestTimeout: Double
    /// Deadline of the TCP+TLS setup, seconds. Defaults to 10.
    public var connectTimeout: Double
    /// libcurl's trace on stderr; it prints the assertion: debugging against the mock only. Defaults to false.
    var curlVerbose = false

    public init(extraCAFile: String? = nil, requestTimeout: Double = 20, connectTimeout: Double = 10) {
        self.extraCAFile = extraCAFile
        self.requestTimeout = requestTimeout
        self.connectTimeout = connectTimeout
    }
}

/// One blocking POST of an assertion to a token endpoint with a libcurl easy handle.
///
/// Blocks the calling thread for up to ``FCMTokenExchangeConfiguration/requestTimeout``:
/// call it only from a thread of its own (``FCMAccessTokenProvider`` starts one per
/// refresh), never from Swift's cooperative pool. TLS is always verified.
struct FCMTokenExchange: Sendable {
    let url: String
    /// Deadlines and TLS, the same as the senders' streams'.
    let transfer: CurlTransferSettings

    /// - Throws: ``FCMTransportError`` `.configuration` for a bad CA file or timeouts, `.curlSetup`
    ///   for a libcurl without HTTP/2 or too old.
    init(url: String, configuration: FCMTokenExchangeConfiguration) throws(FCMTransportError) {
        let libcurl: LibcurlInfo
        do { libcurl = try LibcurlInfo.checked() } catch {
            throw FCMTransportError(.curlSetup, "\(error)")
        }
        guard configuration.requestTimeout > 0, configuration.connectTimeout > 0 else {
            throw FCMTransportError(.configuration, "the token exchange's timeouts must be positive (timeouts are always on)")
        }
        do {
            // The same extra CA file, read by the same rule, as the senders' connections'.
            transfer = try CurlTransferSettings(requestTimeout: configuration.requestTimeout, connectTimeout: configuration.connectTimeout,
                                                extraCAFile: configuration.extraCAFile, verbose: configuration.curlVerbose, libcurl: libcurl)
        } catch {
            throw FCMTransportError(.configuration, "\(error) (the extra CA is also trusted for the FCM token endpoint)")
        }
        self.url = url
    }

    /// POSTs `assertion` and reads the answer.
    ///
    /// - Returns: the granted token's value and lifetime (seconds).
    /// - Throws: ``FCMTransportError`` `.tokenRefused` (with ``FCMTokenRefusal``'s advice),
    ///   `.tokenEndpointUnreachable` or `.curlSetup`. Messages never contain the assertion.
    func run(assertion: String) throws(FCMTransportError) -> (value: String, expiresIn: Int64) {
        let (status, body) = try post(FCMOAuthClaims.tokenRequestBody(assertion: assertion))
        switch FCMTokenAnswer.parse(status: status, body: body) {
        case .granted(let value, let expiresIn):
            return (value, expiresIn)
        case .refused(let refusal):
            throw FCMTransportError(.tokenRefused, "FCM token exchange with \(url) failed: \(refusal)", refusal: refusal)
        }
    }

    /// The HTTP status and body of one form POST.
    private func post(_ form: String) throws(FCMTransportError) -> (Int, [UInt8]) {
        let easy: CurlEasy
        do { easy = try CurlEasy() } catch { throw FCMTransportError(.curlSetup, "\(error)") }
        let answer = ExchangeBuffer()
        var headers: UnsafeMutablePointer<curl_slist>? = curl_slist_append(nil, "content-type: application/x-www-form-urlencoded")
        headers = headers.flatMap { curl_slist_append($0, "accept: application/json") }
        guard let headers else { throw FCMTransportError(.curlSetup, "curl_slist_append failed (out of memory)") }
        defer { curl_slist_free_all(headers) }
        // libcurl writes into the error buffer during `curl_easy_perform`; freed after it.
        let errorBuffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0)
        defer { errorBuffer.deallocate() }
        return try withExtendedLifetime(answer) { () throws(FCMTransportError) -> (Int, [UInt8]) in
            do {
                try easy.set(CURLOPT_URL, string: url, "CURLOPT_URL")
                try easy.set(CURLOPT_POSTFIELDSIZE, form.utf8.count, "CURLOPT_POSTFIELDSIZE")
                // COPYPOSTFIELDS: libcurl keeps its own copy of the body.
                try easy.set(CURLOPT_COPYPOSTFIELDS, string: form, "CURLOPT_COPYPOSTFIELDS")
                try easy.set(CURLOPT_HTTPHEADER, pointer: headers, "CURLOPT_HTTPHEADER")
                try easy.set(CURLOPT_WRITEDATA, pointer: Unmanaged.passUnretained(answer).toOpaque(), "CURLOPT_WRITEDATA")
                try easy.setWriteCallback(exchangeWriteCallback)
                try easy.set(CURLOPT_ERRORBUFFER, pointer: errorBuffer.baseAddress, "CURLOPT_ERRORBUFFER")
                try easy.set(CURLOPT_FOLLOWLOCATION, 0, "CURLOPT_FOLLOWLOCATION")
                try transfer.apply(to: easy)
            } catch {
                throw FCMTransportError(.curlSetup, "\(error)")
            }
            let rc = curl_easy_perform(easy.handle)
            guard rc == CURLE_OK else {
                let detail = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                let why = detail.isEmpty ? curlMessage(rc) : "\(curlMessage(rc)): \(detail)"
                if rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE {
                    throw FCMTransportError(.tokenEndpointUntrusted, "the FCM token endpoint \(url) is not trusted (\(why)): check token_uri in the service account file, the extra CA file and the system's CA certificates")
                }
                throw FCMTransportError(.tokenEndpointUnreachable, "cannot reach the FCM token endpoint \(url): \(why)")
            }
            var status = 0
            let info = ccurl_easy_getinfo_long(easy.handle, CURLINFO_RESPONSE_CODE, &status)
            guard info == CURLE_OK else {
                throw FCMTransportError(.curlSetup, "curl_easy_getinfo(CURLINFO_RESPONSE_CODE) failed: \(curlMessage(info))")
            }
            return (status, answer.bytes)
        }
    }
}

/// The answer's body, filled by libcurl's write callback on the exchanging thread.
private final class ExchangeBuffer {
    var bytes: [UInt8] = []
}

/// `CURLOPT_WRITEFUNCTION`: appends to the ``ExchangeBuffer`` in `CURLOPT_WRITEDATA`;
/// stops the transfer (returns 0) past 64 KiB: token answers are a few hundred bytes.
private func exchangeWriteCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    guard let data, let user else { return 0 }
    let buffer = Unmanaged<ExchangeBuffer>.fromOpaque(user).takeUnretainedValue()
    let n = size * count
    guard buffer.bytes.count + n <= 65_536 else { return 0 }
    data.withMemoryRebound(to: UInt8.self, capacity: n) { buffer.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: n)) }
    return n
}
