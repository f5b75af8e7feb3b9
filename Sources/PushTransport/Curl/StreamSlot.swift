import CCurl
import PushCore

/// One reusable stream: an easy handle, its header list and buffers, and the request it carries.
///
/// Provider-neutral: its buffers are sized from the sender's ``StreamLayout``, and the
/// provider (``PushProvider/load(_:into:)``, ``PushProvider/answer(status:stream:request:)``)
/// writes the URL and headers and reads the answer through the methods here.
///
/// Owns every piece of memory libcurl keeps pointers to while a transfer runs: the
/// header list (`CURLOPT_HTTPHEADER`), the body (`CURLOPT_POSTFIELDS`, not copied by
/// libcurl; the provider's ``PushProvider/body(for:)``), the error buffer
/// (`CURLOPT_ERRORBUFFER`) and the pinned addresses (`CURLOPT_RESOLVE`, ``pin(_:)``); the URL buffer is copied by libcurl
/// at each `CURLOPT_URL`. libcurl also holds an unretained pointer to the slot itself
/// (`CURLOPT_PRIVATE`, `CURLOPT_HEADERDATA`, `CURLOPT_WRITEDATA`); the slot outlives its easy
/// handle because it owns it, and `deinit` cleans the handle up before freeing the buffers.
/// Built by the connection's `init` or on its thread, then used and freed only on that thread.
final class StreamSlot {
    /// Nil only in `deinit`, which cleans the handle up before freeing what it points into.
    private(set) var easy: CurlEasy!
    /// Node 0 is the authorization header, then the provider's nodes, then the fixed ones.
    private let headers: CurlHeaderList
    private let authorizationPrefix: StaticString
    /// The URL under construction: prefix, then the request's suffix (APNs: the device token),
    /// then NUL. libcurl copies it.
    private var url: UnsafeMutableBufferPointer<CChar>
    private let urlPrefixLength: Int
    /// The request body; libcurl reads it during the transfer (`CURLOPT_POSTFIELDS` is not copied).
    private var body: UnsafeMutableRawBufferPointer
    private let errorBuffer: UnsafeMutableBufferPointer<CChar>
    /// The `CURLOPT_RESOLVE` list (``pin(_:)``), nil for none; libcurl reads it when a transfer starts.
    private var resolveList: UnsafeMutablePointer<curl_slist>?
    /// The entry ``resolveList`` holds.
    private var pinnedEntry: String?
    /// The answer headers to keep (the layout's), read by the header callback.
    fileprivate let answerHeaderNames: [StaticString]
    // Answer accumulators, reset per request; capacity is kept.
    fileprivate var answerHeaderValues: [[UInt8]]
    /// The first 4 KiB of the answer's body (an error's JSON; FCM's message name).
    fileprivate(set) var answerBody: [UInt8] = []

    /// The request in flight, nil while the slot is free.
    var request: PushRequest?
    /// Serial of the bearer token written into the authorization header, 0 for none.
    private(set) var tokenSerial = 0
    /// When that token was issued (UNIX seconds), 0 without one.
    private(set) var tokenIssuedAt: Int64 = 0

    /// Builds the handle with every option that stays for its life.
    ///
    /// - Throws: ``PushTransportError`` `.curlSetup` naming the option libcurl refused.
    init(layout: StreamLayout, transfer: CurlTransferSettings, certificate: CurlClientCertificate?) throws {
        easy = try CurlEasy()
        authorizationPrefix = layout.authorizationPrefix
        headers = CurlHeaderList(limits: [layout.authorizationCapacity] + layout.headerCapacities
            + layout.fixedHeaders.map { $0.utf8CodeUnitCount + 1 })
        urlPrefixLength = layout.urlPrefix.count
        let urlBuffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: layout.urlPrefix.count + layout.urlSuffixCapacity + 1)
        urlBuffer.initialize(repeating: 0)
        layout.urlPrefix.withUnsafeBytes { src in
            UnsafeMutableRawPointer(urlBuffer.baseAddress!).copyMemory(from: src.baseAddress!, byteCount: src.count)
        }
        url = urlBuffer
        // Grown in `load` for a larger payload (at most 5 KiB); most are a few hundred bytes, and a
        // window keeps thousands of slots.
        body = .allocate(byteCount: 512, alignment: 1)
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0)
        answerHeaderNames = layout.answerHeaders
        answerHeaderValues = layout.answerHeaders.map { _ in [UInt8]() }
        for i in answerHeaderValues.indices { answerHeaderValues[i].reserveCapacity(64) }
        answerBody.reserveCapacity(256)
        for (i, text) in layout.fixedHeaders.enumerated() { headers.setFixed(1 + layout.headerCapacities.count + i, text) }
        try configure(transfer: transfer, certificate: certificate)
    }

    /// The options of the handle: what points into this slot, then the stream's own settings.
    private func configure(transfer: CurlTransferSettings, certificate: CurlClientCertificate?) throws {
        let me = Unmanaged.passUnretained(self).toOpaque()
        try easy.set(CURLOPT_PRIVATE, pointer: me, "CURLOPT_PRIVATE")
        try easy.set(CURLOPT_HEADERDATA, pointer: me, "CURLOPT_HEADERDATA")
        try easy.set(CURLOPT_WRITEDATA, pointer: me, "CURLOPT_WRITEDATA")
        try easy.setHeaderCallback(streamSlotHeaderCallback)
        try easy.setWriteCallback(streamSlotWriteCallback)
        try easy.set(CURLOPT_ERRORBUFFER, pointer: errorBuffer.baseAddress, "CURLOPT_ERRORBUFFER")
        try easy.set(CURLOPT_HTTPHEADER, pointer: headers.list, "CURLOPT_HTTPHEADER")
        try easy.set(CURLOPT_POST, 1, "CURLOPT_POST")
        try easy.set(CURLOPT_POSTFIELDS, pointer: body.baseAddress, "CURLOPT_POSTFIELDS")
        try easy.set(CURLOPT_PIPEWAIT, 1, "CURLOPT_PIPEWAIT")
        try easy.set(CURLOPT_DNS_CACHE_TIMEOUT, 0, "CURLOPT_DNS_CACHE_TIMEOUT")
        // Every slot keeps its buffers for its whole life, and a window has thousands of slots:
        // libcurl's defaults (16 KiB receive, 64 KiB upload) would hold ~160 MB for 2x1000 streams.
        // Answers are a few hundred bytes and payloads at most 5 KiB: use the minimums.
        try easy.set(CURLOPT_BUFFERSIZE, 1024, "CURLOPT_BUFFERSIZE")
        try easy.set(CURLOPT_UPLOAD_BUFFERSIZE, 16 * 1024, "CURLOPT_UPLOAD_BUFFERSIZE")
        try transfer.apply(to: easy)
        try certificate?.apply(to: easy)
    }

    deinit {
        // Ownership order: the easy handle points into the buffers and the header list, so it
        // goes first (`curl_easy_cleanup`), then the buffers; `headers` is freed after this body.
        easy = nil
        if let resolveList { curl_slist_free_all(resolveList) }
        url.deallocate()
        body.deallocate()
        errorBuffer.deallocate()
    }

    /// Writes the authorization header for `token` (nil: no header, e.g. certificate authentication).
    ///
    /// - Returns: false if the token does not fit its node (the slot then carries none).
    func setAuthorization(_ token: BearerToken?) -> Bool {
        guard let token else {
            headers.clear(0)
            tokenSerial = 0
            tokenIssuedAt = 0
            return true
        }
        guard headers.set(0, prefix: authorizationPrefix, value: token.value) else {
            tokenSerial = 0
            tokenIssuedAt = 0
            return false
        }
        tokenSerial = token.serial
        tokenIssuedAt = token.issuedAt
        return true
    }

    /// Writes `prefix` then `value` into the provider's header node `index`; false (and the
    /// node left out) if it does not fit. The value is copied as it is: the provider checks it
    /// holds no CR, LF or NUL (``PushProvider/problem(with:)``).
    func setHeader(_ index: Int, prefix: StaticString, value: String) -> Bool {
        headers.set(1 + index, prefix: prefix, value: value)
    }

    /// Writes `prefix` then the decimal `value` into the provider's header node `index`; false
    /// (and the node left out) if it does not fit.
    func setHeader(_ index: Int, prefix: StaticString, integer value: Int64) -> Bool {
        headers.set(1 + index, prefix: prefix, integer: value)
    }

    /// Leaves the provider's header node `index` out of the request.
    func clearHeader(_ index: Int) { headers.clear(1 + index) }

    /// Sets the URL: the layout's prefix, then `path` (a fixed part, e.g. APNs' `/3/device/`),
    /// then `suffix` (both empty: the prefix alone).
    ///
    /// Set for every request, a fixed URL too: libcurl 7.88 handles a reused handle whose URL
    /// was set once about 2x slower (sender-bench --fcm, 1 x 1000 streams: 1900 → 3600 req/s,
    /// 350 → 270 µs CPU per request).
    ///
    /// - Returns: nil, or why the request cannot be sent (`path` and `suffix` longer than the layout's room).
    func setURL(path: StaticString = "", suffix: String) -> TransportFailure? {
        var suffix = suffix
        let p = path.utf8CodeUnitCount
        let fits = suffix.withUTF8 { s -> Bool in
            guard p + s.count < url.count - urlPrefixLength else { return false }
            let start = UnsafeMutableRawPointer(url.baseAddress! + urlPrefixLength)
            start.copyMemory(from: path.utf8Start, byteCount: p)
            if let base = s.baseAddress { (start + p).copyMemory(from: base, byteCount: s.count) }
            url[urlPrefixLength + p + s.count] = 0
            return true
        }
        guard fits else { return TransportFailure(kind: .invalidHeader, message: "the device token or bundle id is too long for a request path") }
        let rc = ccurl_easy_setopt_ptr(easy.handle, CURLOPT_URL, url.baseAddress)
        guard rc == CURLE_OK else { return TransportFailure(kind: .other, code: Int32(rc.rawValue), message: curlMessage(rc)) }
        return nil
    }

    /// Loads `request` into the handle: its body, then its URL and headers, written by `provider`.
    ///
    /// - Returns: nil on success (the slot then carries the request), or why it cannot be sent.
    func load<P: PushProvider>(_ request: PushRequest, for provider: P) -> TransportFailure? {
        // Body: the provider's (the payload, or Web Push's encryption of it, made here on the
        // connection's thread), copied into the slot's buffer, which libcurl reads during the transfer.
        let payload: [UInt8]
        switch provider.body(for: request) {
        case .success(let bytes): payload = bytes
        case .failure(let failure): return failure
        }
        let count = payload.count
        if count > body.count {
            body.deallocate()
            body = .allocate(byteCount: count, alignment: 1)
            let rc = ccurl_easy_setopt_ptr(easy.handle, CURLOPT_POSTFIELDS, body.baseAddress)
            guard rc == CURLE_OK else { return TransportFailure(kind: .other, code: Int32(rc.rawValue), message: curlMessage(rc)) }
        }
        payload.withUnsafeBytes { src in
            if let base = src.baseAddress { body.baseAddress!.copyMemory(from: base, byteCount: count) }
        }
        let rc = ccurl_easy_setopt_long(easy.handle, CURLOPT_POSTFIELDSIZE, count)
        guard rc == CURLE_OK else { return TransportFailure(kind: .other, code: Int32(rc.rawValue), message: curlMessage(rc)) }
        for i in answerHeaderValues.indices { answerHeaderValues[i].removeAll(keepingCapacity: true) }
        answerBody.removeAll(keepingCapacity: true)
        errorBuffer[0] = 0
        if let failure = provider.load(request, into: self) { return failure }
        self.request = request
        return nil
    }

    /// The answer header the layout lists at `index`, trimmed; empty if the answer had none.
    func answerHeader(_ index: Int) -> [UInt8] { answerHeaderValues[index] }

    /// Pins host names to addresses for the next transfers (`CURLOPT_RESOLVE`, entries
    /// `host:port:addr[,addr…]`), so that libcurl connects to the addresses the caller checked
    /// instead of resolving the name itself; nil or empty clears the list. The list is owned by
    /// the slot (libcurl reads it when a transfer starts) and replaced only when it changes.
    ///
    /// - Returns: nil, or why it cannot be set.
    func pin(_ entry: String?) -> TransportFailure? {
        guard entry != pinnedEntry else { return nil }
        let list = entry.flatMap { $0.isEmpty ? nil : curl_slist_append(nil, $0) }
        if entry?.isEmpty == false, list == nil {
            return TransportFailure(kind: .other, message: "curl_slist_append failed (out of memory)")
        }
        let rc = ccurl_easy_setopt_ptr(easy.handle, CURLOPT_RESOLVE, list.map { UnsafeRawPointer($0) })
        guard rc == CURLE_OK else {
            if let list { curl_slist_free_all(list) }
            return TransportFailure(kind: .other, code: Int32(rc.rawValue), message: "CURLOPT_RESOLVE: " + curlMessage(rc))
        }
        if let resolveList { curl_slist_free_all(resolveList) }
        resolveList = list
        pinnedEntry = entry
        return nil
    }

    /// libcurl's detail about a failed transfer (`CURLOPT_ERRORBUFFER`), empty if none.
    var errorMessage: String { String(cString: errorBuffer.baseAddress!) }
}

/// `CURLOPT_HEADERFUNCTION`: keeps the answer headers the layout names (``StreamSlot/answerHeader(_:)``).
private func streamSlotHeaderCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    let length = size * count
    guard let data, let user, length > 2 else { return length }
    let slot = Unmanaged<StreamSlot>.fromOpaque(user).takeUnretainedValue()
    let line = UnsafeRawBufferPointer(start: data, count: length)
    let first = line[0] | 0x20
    for (i, name) in slot.answerHeaderNames.enumerated() where name.utf8Start[0] == first && hasPrefixIgnoringCase(line, name) {
        appendTrimmed(line, from: name.utf8CodeUnitCount, to: &slot.answerHeaderValues[i])
        break
    }
    return length
}

/// `CURLOPT_WRITEFUNCTION`: keeps the first 4 KiB of the body (an error's JSON; FCM's message name).
private func streamSlotWriteCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    let length = size * count
    guard let data, let user else { return length }
    let slot = Unmanaged<StreamSlot>.fromOpaque(user).takeUnretainedValue()
    let room = 4096 - slot.answerBody.count
    if room > 0 {
        slot.answerBody.append(contentsOf: UnsafeRawBufferPointer(start: data, count: min(room, length)))
    }
    return length
}

/// Whether `line` starts with `prefix` (lower-case), ignoring the case of letters.
private func hasPrefixIgnoringCase(_ line: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
    let n = prefix.utf8CodeUnitCount
    guard line.count >= n else { return false }
    let p = prefix.utf8Start
    for i in 0..<n where line[i] | 0x20 != p[i] | 0x20 { return false }
    return true
}

/// Replaces `out` with `line[start...]` without leading blanks and trailing blanks and CR LF.
private func appendTrimmed(_ line: UnsafeRawBufferPointer, from start: Int, to out: inout [UInt8]) {
    var s = start
    var e = line.count
    while s < e, line[s] == 0x20 || line[s] == 0x09 { s += 1 }
    while e > s, line[e - 1] == 0x0a || line[e - 1] == 0x0d || line[e - 1] == 0x20 { e -= 1 }
    out.removeAll(keepingCapacity: true)
    out.append(contentsOf: UnsafeRawBufferPointer(rebasing: line[s..<e]))
}
