import CCurl
import PushCore

/// One libcurl easy handle for channel-management requests, with the buffers its callbacks
/// fill: performs one request at a time, blocking the calling thread.
///
/// `@unchecked Sendable`: the handle and its buffers are used by one thread at a time. An
/// ``APNsChannelClient`` keeps idle transfers in its mutex-guarded pool and hands each to the
/// one thread that performs a request with it; nothing else touches it meanwhile. The handle
/// keeps its HTTP/2 connection between requests (`curl_easy_reset` keeps live connections).
final class ChannelTransfer: @unchecked Sendable {
    private let easy: CurlEasy
    /// The answer's body and the two headers read, filled by the callbacks during `perform`.
    fileprivate var body: [UInt8] = []
    fileprivate var requestID: String?
    fileprivate var channelID: String?
    /// libcurl writes its error text here during `curl_easy_perform`; freed in `deinit`.
    private let errorBuffer: UnsafeMutableBufferPointer<CChar>

    /// The largest body read: a list of 10 000 channel ids is a few hundred KB.
    static let maximumBody = 4 << 20

    init() throws {
        easy = try CurlEasy()
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0)
    }

    deinit { errorBuffer.deallocate() }

    /// What one request sends beside the operation's own method, path, header and body.
    struct Request {
        var url: String
        var operation: ChannelOperation
        /// `authorization: bearer …`, nil for certificate authentication. Secret: never logged.
        var authorization: String?
        var requestID: String?
        var clientCertificate: CurlClientCertificate?
        var settings: CurlTransferSettings
    }

    /// Performs `request` and returns its answer or why none came. Blocks the calling thread
    /// for up to the request deadline: call it from a thread of its own, never the cooperative pool.
    func perform(_ request: Request) -> ChannelResponse {
        body.removeAll(keepingCapacity: true)
        requestID = nil
        channelID = nil
        errorBuffer[0] = 0
        // A channel id from the database goes into a header: one that cannot be a header value
        // (CR/LF would inject a header) is refused before anything is sent, as a broadcast's is.
        if let problem = request.operation.problem {
            return ChannelResponse(operation: request.operation, transportFailure: TransportFailure(kind: .invalidHeader, message: problem))
        }
        var list: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(list) }
        do {
            list = try headerList(request)
            try configure(request, headers: list)
        } catch {
            return ChannelResponse(operation: request.operation, transportFailure: TransportFailure(kind: .other, message: "\(error)"))
        }
        let rc = withExtendedLifetime(self) { curl_easy_perform(easy.handle) }
        guard rc == CURLE_OK else {
            let detail = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let message = detail.isEmpty ? curlMessage(rc) : "\(curlMessage(rc)): \(detail)"
            let failure = TransportFailure(kind: StreamSlot.kind(of: rc), code: Int32(rc.rawValue), message: message)
            return ChannelResponse(operation: request.operation, transportFailure: failure)
        }
        var status = 0
        _ = easy.responseCode(&status)
        let answer = ChannelAnswer.parse(status: status, requestID: requestID, channelID: channelID, body: body)
        return ChannelResponse(operation: request.operation, answer: answer)
    }

    /// The request's headers; the caller frees the list.
    private func headerList(_ request: Request) throws -> UnsafeMutablePointer<curl_slist>? {
        var lines = ["accept:", "expect:", "content-type: application/json"]
        if let authorization = request.authorization { lines.append("authorization: bearer \(authorization)") }
        if let id = request.operation.channelID { lines.append("apns-channel-id: \(id)") }
        if let id = request.requestID { lines.append("apns-request-id: \(id)") }
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard let appended = curl_slist_append(list, line) else {
                curl_slist_free_all(list)
                throw PushTransportError(.curlSetup, "curl_slist_append failed (out of memory)")
            }
            list = appended
        }
        return list
    }

    /// Resets the handle (its connection stays) and sets the request's options.
    private func configure(_ request: Request, headers: UnsafeMutablePointer<curl_slist>?) throws {
        curl_easy_reset(easy.handle)
        try easy.set(CURLOPT_URL, string: request.url, "CURLOPT_URL")
        switch request.operation.method {
        case "POST":
            let body = request.operation.body
            try easy.set(CURLOPT_POSTFIELDSIZE, body.count, "CURLOPT_POSTFIELDSIZE")
            // COPYPOSTFIELDS: libcurl keeps its own copy of the body.
            try easy.set(CURLOPT_COPYPOSTFIELDS, string: String(decoding: body, as: UTF8.self), "CURLOPT_COPYPOSTFIELDS")
        case "GET":
            try easy.set(CURLOPT_HTTPGET, 1, "CURLOPT_HTTPGET")
        default:
            try easy.set(CURLOPT_CUSTOMREQUEST, string: request.operation.method, "CURLOPT_CUSTOMREQUEST")
        }
        try easy.set(CURLOPT_HTTPHEADER, pointer: headers, "CURLOPT_HTTPHEADER")
        let me = Unmanaged.passUnretained(self).toOpaque()
        try easy.set(CURLOPT_WRITEDATA, pointer: me, "CURLOPT_WRITEDATA")
        try easy.setWriteCallback(channelBodyCallback)
        try easy.set(CURLOPT_HEADERDATA, pointer: me, "CURLOPT_HEADERDATA")
        try easy.setHeaderCallback(channelHeaderCallback)
        try easy.set(CURLOPT_ERRORBUFFER, pointer: errorBuffer.baseAddress, "CURLOPT_ERRORBUFFER")
        try easy.set(CURLOPT_FOLLOWLOCATION, 0, "CURLOPT_FOLLOWLOCATION")
        try request.settings.apply(to: easy)
        try request.clientCertificate?.apply(to: easy)
    }
}

/// `CURLOPT_WRITEFUNCTION`: appends to the transfer's body; stops the transfer past ``ChannelTransfer/maximumBody``.
private func channelBodyCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    guard let data, let user else { return 0 }
    let transfer = Unmanaged<ChannelTransfer>.fromOpaque(user).takeUnretainedValue()
    let n = size * count
    guard transfer.body.count + n <= ChannelTransfer.maximumBody else { return 0 }
    data.withMemoryRebound(to: UInt8.self, capacity: n) { transfer.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: n)) }
    return n
}

/// `CURLOPT_HEADERFUNCTION`: keeps `apns-request-id` and `apns-channel-id`.
private func channelHeaderCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    let n = size * count
    guard let data, let user else { return n }
    let transfer = Unmanaged<ChannelTransfer>.fromOpaque(user).takeUnretainedValue()
    let line = data.withMemoryRebound(to: UInt8.self, capacity: n) { String(decoding: UnsafeBufferPointer(start: $0, count: n), as: UTF8.self) }
    guard let colon = line.firstIndex(of: ":") else { return n }
    let name = line[..<colon].lowercased()
    let value = line[line.index(after: colon)...].trimmingCharacters(in: " \t\r\n")
    if name == "apns-request-id" { transfer.requestID = value }
    if name == "apns-channel-id" { transfer.channelID = value }
    return n
}

private extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var s = self
        while let first = s.first, set.contains(first) { s.removeFirst() }
        while let last = s.last, set.contains(last) { s.removeLast() }
        return String(s)
    }
}
