import CCurl
import Foundation
import Logging
import PushCore

/// Web Push's part of a ``PushSender`` (RFC 8030, 8291, 8292): `POST <endpoint>` with `TTL`,
/// `Urgency` and `Topic` when asked, `Content-Encoding: aes128gcm`, `Authorization: vapid
/// t=<JWT>, k=<key>` (one JWT per origin, ``WebPushVAPIDTokens``), and the payload encrypted for
/// the subscription with a fresh key pair and salt (``WebPushEncryptor``) on the connection's
/// thread, when a stream takes the request.
///
/// Unlike APNs and FCM, one credential speaks to many origins: each connection thread's multi
/// handle holds up to ``connectionsPerThread`` connections over all origins, HTTP/2 where the
/// push service offers it through ALPN, HTTP/1.1 otherwise (`CURL_HTTP_VERSION_2TLS`); libcurl
/// closes the oldest idle one when it needs room. Every request goes only to the addresses the
/// sender's resolver checked (``WebPushFields/pin``, `CURLOPT_RESOLVE`); a request that was not
/// checked is never sent. Streams speak https only, never follow a redirect and ignore the
/// environment's proxies (``configure(stream:)``).
struct WebPushProvider: PushProvider {
    /// The provider header nodes (``StreamLayout/headerCapacities``), in order.
    enum Header {
        static let authorization = 0
        static let ttl = 1
        static let urgency = 2
        static let topic = 3
    }

    /// The answer headers kept (``StreamLayout/answerHeaders``), in order.
    enum AnswerHeader {
        static let location = 0
        static let retryAfter = 1
    }

    let tokens: WebPushVAPIDTokens
    /// Every socket the streams open and close, counted (libcurl reports no count of its own).
    let sockets = WebPushSockets()
    let encryptor: WebPushEncryptor
    let streamsPerConnection: Int
    let connectionsPerThread: Int
    let connectionsPerHost: Int
    let layout: StreamLayout
    /// The database clock's offset, by which `TTL` (seconds left until `expires_at`) is counted.
    let databaseClock: DatabaseClockOffset
    var provider: Provider { .webpush }
    var baseURL: String { "(Web Push endpoints)" }
    var clientCertificate: CurlClientCertificate? { nil }

    /// - Parameters:
    ///   - threads: the sender's connection threads, over which ``WebPushConfiguration/maxConnections`` is shared.
    init(configuration: WebPushConfiguration, credential: WebPushCredential, threads: Int, databaseClock: DatabaseClockOffset,
         clock: @escaping @Sendable () -> Int64) throws {
        try configuration.validate()
        tokens = WebPushVAPIDTokens(credential: credential, clock: clock)
        encryptor = try WebPushEncryptor()
        streamsPerConnection = configuration.streamsPerThread
        connectionsPerThread = max(1, configuration.maxConnections / max(1, threads))
        // One origin takes at most a quarter of a thread's connections (HTTP/2 needs one; an
        // HTTP/1.1 service takes one per request in flight), so a slow origin never takes them all.
        connectionsPerHost = max(1, connectionsPerThread / 4)
        self.databaseClock = databaseClock
        // The URL is the endpoint whole (at most WebPushEndpoint.maximumLength bytes). The
        // authorization is a provider node (per origin), not the per-batch bearer node.
        layout = StreamLayout(urlPrefix: [], urlSuffixCapacity: WebPushEndpoint.maximumLength, authorizationPrefix: "authorization: ",
                              authorizationCapacity: 16, headerCapacities: [1024, 24, 24, 48],
                              fixedHeaders: ["accept:", "content-encoding: aes128gcm", "content-type: application/octet-stream", "expect:"],
                              answerHeaders: ["location:", "retry-after:"])
    }

    func makeAuthorizer(logger: Logger) -> WebPushAuthorizer { WebPushAuthorizer() }

    /// A request of another provider's, or one the resolver never checked, is refused.
    func problem(with request: PushRequest) -> String? {
        guard case .webPush(let fields) = request.fields else {
            return "a request for \(request.provider.serviceName) cannot go to a Web Push service"
        }
        return fields.pin == nil ? "the endpoint's addresses were not checked" : nil
    }

    /// https only, no redirect followed, no proxy from the environment (`http_proxy`,
    /// `https_proxy`, `ALL_PROXY` would otherwise route requests to any address).
    func configure(stream: StreamSlot) throws {
        let easy = stream.easy!
        try easy.set(CURLOPT_PROTOCOLS_STR, string: "https", "CURLOPT_PROTOCOLS_STR (Web Push needs libcurl 7.85 or later)")
        try easy.set(CURLOPT_REDIR_PROTOCOLS_STR, string: "https", "CURLOPT_REDIR_PROTOCOLS_STR")
        try easy.set(CURLOPT_FOLLOWLOCATION, 0, "CURLOPT_FOLLOWLOCATION")
        try easy.set(CURLOPT_PROXY, string: "", "CURLOPT_PROXY")
        try sockets.install(on: easy)
    }

    /// The payload encrypted for the subscription's keys (fresh key pair and salt).
    func body(for request: PushRequest) -> Result<[UInt8], TransportFailure> {
        guard case .webPush(let fields) = request.fields else {
            return .failure(TransportFailure(kind: .invalidHeader, message: "not a Web Push request"))
        }
        do {
            return .success(try encryptor.encrypt(request.payload, for: fields.keys))
        } catch let refusal as PushRequest.Refusal {
            // A p256dh that is not a point on P-256: the subscription's fault, permanent, and the
            // row ends with the reason the keys' other checks give (InvalidSubscriptionKeys).
            return .failure(TransportFailure(kind: .invalidHeader, message: refusal.message, refusalReason: refusal.reason))
        } catch {
            return .failure(TransportFailure(kind: .other, message: "Web Push encryption failed: \(error)"))
        }
    }

    /// The endpoint as the URL, its checked addresses pinned, then the headers.
    func load(_ request: PushRequest, into stream: StreamSlot) -> TransportFailure? {
        guard case .webPush(let fields) = request.fields, let pin = fields.pin else {
            return TransportFailure(kind: .invalidHeader, message: "the endpoint's addresses were not checked")
        }
        if let failure = stream.setURL(suffix: fields.endpoint.text) { return failure }
        if let failure = stream.pin(pin) { return failure }
        let authorization: String
        do {
            authorization = try tokens.authorization(for: fields.endpoint.origin)
        } catch {
            return TransportFailure(kind: .signingFailed, message: "the VAPID token cannot be signed: \(error)")
        }
        guard stream.setHeader(Header.authorization, prefix: "authorization: ", value: authorization) else {
            return TransportFailure(kind: .signingFailed, message: "the VAPID authorization does not fit its header")
        }
        var now = timeval()
        gettimeofday(&now, nil)
        let nowMilliseconds = (Int64(now.tv_sec) + databaseClock.seconds) * 1000 + Int64(now.tv_usec) / 1000
        let headers = fields.headers(expiration: request.expiration, now: nowMilliseconds)
        _ = stream.setHeader(Header.ttl, prefix: "ttl: ", integer: headers.ttl)
        if let urgency = headers.urgency {
            _ = stream.setHeader(Header.urgency, prefix: "urgency: ", value: urgency.rawValue)
        } else {
            stream.clearHeader(Header.urgency)
        }
        if let topic = headers.topic {
            _ = stream.setHeader(Header.topic, prefix: "topic: ", value: topic)
        } else {
            stream.clearHeader(Header.topic)
        }
        return nil
    }

    /// `Location` of a 2xx; `Retry-After` (seconds or HTTP-date) and the body's `reason` otherwise.
    func answer(status: Int, stream: StreamSlot, request: PushRequest) -> ProviderAnswer {
        var answer = WebPushAnswer()
        if (200...299).contains(status) {
            let location = stream.answerHeader(AnswerHeader.location)
            if !location.isEmpty { answer.location = String(decoding: location, as: UTF8.self) }
            return .webPush(answer)
        }
        let retryAfter = stream.answerHeader(AnswerHeader.retryAfter)
        if !retryAfter.isEmpty {
            answer.retryAfterSeconds = WebPushAnswer.retryAfterSeconds(String(decoding: retryAfter, as: UTF8.self), now: Int64(time(nil)))
        }
        answer.reason = Self.reason(stream.answerBody)
        return .webPush(answer)
    }

    /// A push service's `{"reason": "BadJwtToken"}` (Apple's), kept only when it is a short
    /// word (letters, digits, `_`, `-`): the service is whoever the subscriber named, and its
    /// words reach logs and the hold's message.
    static func reason(_ body: [UInt8]) -> String? {
        guard body.first == UInt8(ascii: "{"), let text = JSONValue.parse(body)?["reason"]?.stringValue,
              (1...64).contains(text.utf8.count),
              text.utf8.allSatisfy({ WebPushHeaders.isValidTopic(String(UnicodeScalar($0))) }) else { return nil }
        return text
    }

    /// Never replaces the thread's connections: they serve every origin (``connectionsPerThread``).
    func connectionAction(after response: PushResponse) -> ConnectionAction { .keep }
}

/// Web Push's authorizer: nothing per batch (the VAPID token is per origin, written per
/// request by ``WebPushProvider/load(_:into:)``).
struct WebPushAuthorizer: PushAuthorizer {
    mutating func authorize(newConnection: Bool) -> Authorization { .certificate }
    mutating func answered(_ response: inout PushResponse, tokenSerial: Int, tokenIssuedAt: Int64) -> Bool { false }
    func renew(afterSerial serial: Int) {}
}
