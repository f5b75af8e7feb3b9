import CCurl
import PushCore

/// Settings every easy handle of a sender shares, applied once when a slot is created.
struct EasyTemplate: Sendable {
    /// The service: APNs' URL ends with the device token and its requests carry `apns-*`
    /// headers; FCM's URL is the same for every message, which carries its token in the body.
    var provider: Provider = .apns
    /// APNs: `https://host[:port]/3/device/`; FCM: the whole `…/v1/projects/{id}/messages:send`.
    var urlPrefix: [UInt8]
    var requestTimeoutMilliseconds: Int
    var connectTimeoutMilliseconds: Int
    /// System roots plus the extra CA, when an extra CA is configured.
    var caBundle: [UInt8]?
    /// The extra CA's file, for messages.
    var caFile: String?
    var certificate: APNsClientCertificate?
    /// The certificate's notAfter (UNIX seconds), checked before each new connection.
    var certificateNotAfter: Int64?
    /// `CURLOPT_VERBOSE` (libcurl's trace on stderr; headers include the JWT: debugging only).
    var verbose = false

    /// Why no request may go out on a new connection at `now`: the client certificate expired.
    func certificateFailure(now: Int64) -> TransportFailure? {
        guard let certificate, let certificateNotAfter else { return nil }
        return APNsClientCertificate.expiredFailure(file: certificate.file, notAfter: certificateNotAfter, now: now)
    }
}

/// One reusable stream: an easy handle, its header list and buffers, and the request it carries.
///
/// Owns every piece of memory libcurl keeps pointers to while a transfer runs: the
/// header list (`CURLOPT_HTTPHEADER`), the body (`CURLOPT_POSTFIELDS`, not copied by
/// libcurl) and the error buffer (`CURLOPT_ERRORBUFFER`). libcurl also holds an unretained
/// pointer to the slot itself (`CURLOPT_PRIVATE`, `CURLOPT_HEADERDATA`, `CURLOPT_WRITEDATA`);
/// the slot outlives its easy handle because it owns it, and `deinit` cleans the handle up
/// before freeing the buffers. Built by the connection's `init` or on its thread, then used
/// and freed only on that thread.
final class StreamSlot {
    enum Header {
        static let authorization = 0, pushType = 1, topic = 2, priority = 3, apnsID = 4
        static let expiration = 5, collapseID = 6, accept = 7, contentType = 8, expect = 9
        /// Bytes per header node, NUL included: every value within ``APNsRequest/HeaderLimit``
        /// fits (`prefix + limit + 1`); the authorization node takes a JWT of ~200 bytes.
        static let capacities = [1024, 64, 13 + APNsRequest.HeaderLimit.topic, 16 + APNsRequest.HeaderLimit.priorityDigits,
                                 10 + APNsRequest.HeaderLimit.apnsID, 64, 19 + APNsRequest.HeaderLimit.collapseID, 16, 16, 16]
        /// FCM's: the authorization node takes any valid access token (`FCMAccessToken.isValidValue`:
        /// up to 4096 bytes); the `apns-*` nodes stay empty, so libcurl leaves them out.
        static let fcmCapacities = [23 + 4096, 2, 2, 2, 2, 2, 2, 16, 32, 16]
    }

    /// Nil only in `deinit`, which cleans the handle up before freeing what it points into.
    private(set) var easy: CurlEasy!
    private let headers: CurlHeaderList
    /// The URL under construction: prefix, then the device token, then NUL (FCM: the fixed URL,
    /// set once). libcurl copies it.
    private var url: UnsafeMutableBufferPointer<CChar>
    private let urlPrefixLength: Int
    /// The request body; libcurl reads it during the transfer (`CURLOPT_POSTFIELDS` is not copied).
    private var body: UnsafeMutableRawBufferPointer
    private let errorBuffer: UnsafeMutableBufferPointer<CChar>

    /// Which service the slot's requests go to.
    let provider: Provider
    /// The request in flight, nil while the slot is free.
    var request: APNsRequest?
    /// FCM: the access token written into the authorization header (its serial is ``tokenSerial``).
    var fcmToken: FCMAccessToken?
    /// Serial of the provider token written into the authorization header, 0 for none.
    var tokenSerial = 0
    /// The `iat` of that token (UNIX seconds), 0 without one.
    var tokenIssuedAt: Int64 = 0
    // Response accumulators, reset per request; capacity is kept.
    fileprivate var responseAPNsID: [UInt8] = []
    fileprivate var responseUniqueID: [UInt8] = []
    fileprivate var responseBody: [UInt8] = []
    /// `retry-after` (kept for FCM answers).
    fileprivate var responseRetryAfter: [UInt8] = []

    init(template: EasyTemplate) throws {
        provider = template.provider
        easy = try CurlEasy()
        headers = try CurlHeaderList(capacities: provider == .fcm ? Header.fcmCapacities : Header.capacities)
        urlPrefixLength = template.urlPrefix.count
        let tokenRoom = provider == .fcm ? 0 : APNsRequest.HeaderLimit.deviceToken
        let urlBuffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: template.urlPrefix.count + tokenRoom + 1)
        urlBuffer.initialize(repeating: 0)
        template.urlPrefix.withUnsafeBytes { src in
            UnsafeMutableRawPointer(urlBuffer.baseAddress!).copyMemory(from: src.baseAddress!, byteCount: src.count)
        }
        url = urlBuffer
        // Grown in `load` for a larger payload (at most 5 KiB); most are a few hundred bytes, and a
        // window keeps thousands of slots.
        body = .allocate(byteCount: 512, alignment: 1)
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0)
        responseAPNsID.reserveCapacity(64)
        responseUniqueID.reserveCapacity(64)
        responseBody.reserveCapacity(256)

        headers.setFixed(Header.accept, "accept:")
        headers.setFixed(Header.contentType, provider == .fcm ? "content-type: application/json" : "content-type:")
        headers.setFixed(Header.expect, "expect:")

        let me = Unmanaged.passUnretained(self).toOpaque()
        try easy.set(CURLOPT_PRIVATE, pointer: me, "CURLOPT_PRIVATE")
        try easy.set(CURLOPT_HEADERDATA, pointer: me, "CURLOPT_HEADERDATA")
        try easy.set(CURLOPT_WRITEDATA, pointer: me, "CURLOPT_WRITEDATA")
        try checkSet(ccurl_easy_setopt_header_cb(easy.handle, streamSlotHeaderCallback), "CURLOPT_HEADERFUNCTION")
        try checkSet(ccurl_easy_setopt_write_cb(easy.handle, streamSlotWriteCallback), "CURLOPT_WRITEFUNCTION")
        try easy.set(CURLOPT_ERRORBUFFER, pointer: errorBuffer.baseAddress, "CURLOPT_ERRORBUFFER")
        try easy.set(CURLOPT_HTTPHEADER, pointer: headers.list, "CURLOPT_HTTPHEADER")
        try easy.set(CURLOPT_POST, 1, "CURLOPT_POST")
        try easy.set(CURLOPT_POSTFIELDS, pointer: body.baseAddress, "CURLOPT_POSTFIELDS")
        if provider == .fcm {
            // The buffer holds the prefix, which is the whole URL, and its NUL.
            try easy.set(CURLOPT_URL, pointer: url.baseAddress, "CURLOPT_URL")
        }
        try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS), "CURLOPT_HTTP_VERSION")
        try easy.set(CURLOPT_PIPEWAIT, 1, "CURLOPT_PIPEWAIT")
        try easy.set(CURLOPT_NOSIGNAL, 1, "CURLOPT_NOSIGNAL")
        try easy.set(CURLOPT_TIMEOUT_MS, template.requestTimeoutMilliseconds, "CURLOPT_TIMEOUT_MS")
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, template.connectTimeoutMilliseconds, "CURLOPT_CONNECTTIMEOUT_MS")
        try easy.set(CURLOPT_DNS_CACHE_TIMEOUT, 0, "CURLOPT_DNS_CACHE_TIMEOUT")
        // Every slot keeps its buffers for its whole life, and a window has thousands of slots:
        // libcurl's defaults (16 KiB receive, 64 KiB upload) would hold ~160 MB for 2x1000 streams.
        // APNs answers are a few hundred bytes and payloads at most 5 KiB: use the minimums.
        try easy.set(CURLOPT_BUFFERSIZE, 1024, "CURLOPT_BUFFERSIZE")
        try easy.set(CURLOPT_UPLOAD_BUFFERSIZE, 16 * 1024, "CURLOPT_UPLOAD_BUFFERSIZE")
        try easy.set(CURLOPT_SSL_VERIFYPEER, 1, "CURLOPT_SSL_VERIFYPEER")
        try easy.set(CURLOPT_SSL_VERIFYHOST, 2, "CURLOPT_SSL_VERIFYHOST")
        try easy.set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2), "CURLOPT_SSLVERSION")
        if template.verbose { try easy.set(CURLOPT_VERBOSE, 1, "CURLOPT_VERBOSE") }
        if let bundle = template.caBundle {
            try easy.set(CURLOPT_CAINFO_BLOB, blob: bundle, "CURLOPT_CAINFO_BLOB for PUSHQ_APNS_CA_FILE \(template.caFile ?? "")")
        }
        if let cert = template.certificate {
            try easy.set(CURLOPT_SSLCERT, string: cert.file, "CURLOPT_SSLCERT for \(cert.file)")
            switch cert.format {
            case .pkcs12:
                try easy.set(CURLOPT_SSLCERTTYPE, string: "P12", "CURLOPT_SSLCERTTYPE")
            case .pem(let keyFile):
                try easy.set(CURLOPT_SSLCERTTYPE, string: "PEM", "CURLOPT_SSLCERTTYPE")
                try easy.set(CURLOPT_SSLKEY, string: keyFile ?? cert.file, "CURLOPT_SSLKEY")
                try easy.set(CURLOPT_SSLKEYTYPE, string: "PEM", "CURLOPT_SSLKEYTYPE")
            }
            if let password = cert.password {
                try easy.set(CURLOPT_KEYPASSWD, string: password, "CURLOPT_KEYPASSWD")
            }
        }
    }

    deinit {
        // Ownership order: the easy handle points into the buffers and the header list, so it
        // goes first (`curl_easy_cleanup`), then the buffers; `headers` is freed after this body.
        easy = nil
        url.deallocate()
        body.deallocate()
        errorBuffer.deallocate()
    }

    private func checkSet(_ rc: CURLcode, _ name: String) throws {
        guard rc == CURLE_OK else { throw PushTransportError(.curlSetup, "curl_easy_setopt(\(name)) failed: \(curlMessage(rc))") }
    }

    /// Writes FCM's authorization header for `token`.
    ///
    /// - Returns: false if the token does not fit its header (the slot then carries none).
    func setBearer(_ token: FCMAccessToken) -> Bool {
        guard headers.set(Header.authorization, prefix: "authorization: Bearer ", value: token.value) else {
            tokenSerial = 0
            fcmToken = nil
            return false
        }
        tokenSerial = token.serial
        fcmToken = token
        return true
    }

    /// Writes the authorization header for `token` (nil: certificate auth, no header).
    ///
    /// - Returns: false if the token does not fit its header (the slot then carries none).
    func setAuthorization(_ token: ProviderTokenManager.Token?) -> Bool {
        if let token {
            guard headers.set(Header.authorization, prefix: "authorization: bearer ", value: token.value) else {
                tokenSerial = 0
                return false
            }
            tokenSerial = token.serial
            tokenIssuedAt = token.issuedAt
        } else {
            headers.clear(Header.authorization)
            tokenSerial = 0
        }
        return true
    }

    /// Loads `request` into the handle. Returns nil on success, or why it cannot be sent.
    ///
    /// The caller has checked ``APNsRequest/headerProblem``; every value then fits, and a
    /// value that still does not is reported the same way (`invalidHeader`).
    func load(_ request: APNsRequest) -> TransportFailure? {
        if provider == .apns {
            // URL: prefix + token + NUL.
            var token = request.deviceToken
            let urlOK = token.withUTF8 { t -> Bool in
                guard t.count < url.count - urlPrefixLength, let base = t.baseAddress else { return false }
                UnsafeMutableRawPointer(url.baseAddress! + urlPrefixLength).copyMemory(from: base, byteCount: t.count)
                url[urlPrefixLength + t.count] = 0
                return true
            }
            guard urlOK else { return TransportFailure(kind: .invalidHeader, message: "the device token is too long for a request path") }
        }
        // Set for every request, FCM's fixed URL too: libcurl 7.88 handles a reused handle whose
        // URL was set once about 2x slower (sender-bench --fcm, 1 x 1000 streams: 1900 → 3600
        // req/s, 350 → 270 µs CPU per request).
        var rc = ccurl_easy_setopt_ptr(easy.handle, CURLOPT_URL, url.baseAddress)
        guard rc == CURLE_OK else { return TransportFailure(kind: .other, code: Int32(rc.rawValue), message: curlMessage(rc)) }

        // Body: copied into the slot's buffer, which libcurl reads during the transfer.
        let count = request.payload.count
        if count > body.count {
            body.deallocate()
            body = .allocate(byteCount: count, alignment: 1)
            rc = ccurl_easy_setopt_ptr(easy.handle, CURLOPT_POSTFIELDS, body.baseAddress)
            guard rc == CURLE_OK else { return TransportFailure(kind: .other, code: Int32(rc.rawValue), message: curlMessage(rc)) }
        }
        request.payload.withUnsafeBytes { src in
            if let base = src.baseAddress { body.baseAddress!.copyMemory(from: base, byteCount: count) }
        }
        rc = ccurl_easy_setopt_long(easy.handle, CURLOPT_POSTFIELDSIZE, count)
        guard rc == CURLE_OK else { return TransportFailure(kind: .other, code: Int32(rc.rawValue), message: curlMessage(rc)) }

        responseAPNsID.removeAll(keepingCapacity: true)
        responseUniqueID.removeAll(keepingCapacity: true)
        responseBody.removeAll(keepingCapacity: true)
        errorBuffer[0] = 0
        if provider == .fcm {
            // FCM's headers are fixed but for the bearer token, which the connection writes.
            responseRetryAfter.removeAll(keepingCapacity: true)
            self.request = request
            return nil
        }

        // Headers, in place.
        var fits = headers.set(Header.pushType, prefix: "apns-push-type: ", value: request.pushType.rawValue)
        fits = fits && headers.set(Header.topic, prefix: "apns-topic: ", value: request.topic)
        fits = fits && headers.set(Header.priority, prefix: "apns-priority: ", integer: Int64(request.priority))
        fits = fits && headers.set(Header.apnsID, prefix: "apns-id: ", value: request.apnsID)
        if let expiration = request.expiration {
            fits = fits && headers.set(Header.expiration, prefix: "apns-expiration: ", integer: expiration)
        } else {
            headers.clear(Header.expiration)
        }
        if let collapseID = request.collapseID {
            fits = fits && headers.set(Header.collapseID, prefix: "apns-collapse-id: ", value: collapseID)
        } else {
            headers.clear(Header.collapseID)
        }
        guard fits else { return TransportFailure(kind: .invalidHeader, message: "a header value (topic, priority, apns-id, expiration or collapse id) is too long for its header") }
        self.request = request
        return nil
    }

    /// Builds the response for the finished transfer and frees the slot.
    func finish(result: CURLcode) -> APNsResponse? {
        guard let request else { return nil }
        self.request = nil
        var response = APNsResponse(request: request)
        response.provider = provider
        var status = 0
        var result = result
        if result == CURLE_OK {
            let rc = easy.responseCode(&status)
            if rc != CURLE_OK { result = rc }
        }
        if result == CURLE_OK, status > 0, provider == .fcm {
            response.status = status
            response.durationNanoseconds = easy.totalMicroseconds() * 1000
            readFCMAnswer(status: status, into: &response)
        } else if result == CURLE_OK, status > 0 {
            response.status = status
            response.durationNanoseconds = easy.totalMicroseconds() * 1000
            response.apnsID = responseAPNsID.elementsEqual(request.apnsID.utf8)
                ? request.apnsID : (responseAPNsID.isEmpty ? nil : String(decoding: responseAPNsID, as: UTF8.self))
            if !responseUniqueID.isEmpty { response.apnsUniqueID = String(decoding: responseUniqueID, as: UTF8.self) }
            if status != 200, !responseBody.isEmpty {
                let parsed = responseBody.withUnsafeBytes { ErrorBodyParser.parse($0) }
                response.reason = parsed.reason.map(APNsReason.init)
                response.timestamp = parsed.timestamp
            }
        } else {
            response.transportFailure = transportFailure(result == CURLE_OK ? CURLE_GOT_NOTHING : result)
        }
        return response
    }

    /// FCM's answer: the message name of a 200, else the error body and `Retry-After`.
    private func readFCMAnswer(status: Int, into response: inout APNsResponse) {
        if status == 200 {
            response.fcmMessageName = FCMSendSuccess.messageName(responseBody)
            return
        }
        response.fcmError = FCMErrorBody.parse(responseBody)
        if !responseRetryAfter.isEmpty {
            response.retryAfterSeconds = FCMVerdict.retryAfterSeconds(String(decoding: responseRetryAfter, as: UTF8.self), now: Int64(time(nil)))
        }
    }

    /// A failure for a transfer removed before it finished (shutdown deadline).
    func cancel(_ message: String) -> APNsResponse? {
        guard let request else { return nil }
        self.request = nil
        var response = APNsResponse(request: request)
        response.provider = provider
        response.transportFailure = TransportFailure(kind: .cancelled, message: message)
        return response
    }

    private func transportFailure(_ code: CURLcode) -> TransportFailure {
        let detail = String(cString: errorBuffer.baseAddress!)
        let message = detail.isEmpty ? curlMessage(code) : curlMessage(code) + ": " + detail
        return TransportFailure(kind: Self.kind(of: code), code: Int32(code.rawValue), message: message)
    }

    static func kind(of code: CURLcode) -> TransportFailure.Kind {
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return .timeout
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_PROXY: return .connect
        case CURLE_SSL_CERTPROBLEM, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED: return .clientCertificate
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE,
             CURLE_SSL_CIPHER, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE, CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return .tls
        case CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING,
             CURLE_PARTIAL_FILE, CURLE_WRITE_ERROR, CURLE_READ_ERROR:
            return .connectionLost
        default: return .other
        }
    }
}

/// `CURLOPT_HEADERFUNCTION`: keeps `apns-id` and `apns-unique-id`, and FCM's `retry-after`.
private func streamSlotHeaderCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    let length = size * count
    guard let data, let user, length > 8 else { return length }
    let slot = Unmanaged<StreamSlot>.fromOpaque(user).takeUnretainedValue()
    let line = UnsafeRawBufferPointer(start: data, count: length)
    if line[0] == UInt8(ascii: "a") || line[0] == UInt8(ascii: "A") {
        if hasPrefixIgnoringCase(line, "apns-id:") {
            appendTrimmed(line, from: 8, to: &slot.responseAPNsID)
        } else if hasPrefixIgnoringCase(line, "apns-unique-id:") {
            appendTrimmed(line, from: 15, to: &slot.responseUniqueID)
        }
    } else if line[0] == UInt8(ascii: "r") || line[0] == UInt8(ascii: "R") {
        if hasPrefixIgnoringCase(line, "retry-after:") { appendTrimmed(line, from: 12, to: &slot.responseRetryAfter) }
    }
    return length
}

/// `CURLOPT_WRITEFUNCTION`: keeps the first 4 KiB of the body (error JSON; FCM's message name).
private func streamSlotWriteCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    let length = size * count
    guard let data, let user else { return length }
    let slot = Unmanaged<StreamSlot>.fromOpaque(user).takeUnretainedValue()
    let room = 4096 - slot.responseBody.count
    if room > 0 {
        slot.responseBody.append(contentsOf: UnsafeRawBufferPointer(start: data, count: min(room, length)))
    }
    return length
}

private func hasPrefixIgnoringCase(_ line: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
    let n = prefix.utf8CodeUnitCount
    guard line.count >= n else { return false }
    let p = prefix.utf8Start
    for i in 0..<n where line[i] | 0x20 != p[i] | 0x20 { return false }
    return true
}

private func appendTrimmed(_ line: UnsafeRawBufferPointer, from start: Int, to out: inout [UInt8]) {
    var s = start
    var e = line.count
    while s < e, line[s] == 0x20 || line[s] == 0x09 { s += 1 }
    while e > s, line[e - 1] == 0x0a || line[e - 1] == 0x0d || line[e - 1] == 0x20 { e -= 1 }
    out.removeAll(keepingCapacity: true)
    out.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[s..<e]))
}
