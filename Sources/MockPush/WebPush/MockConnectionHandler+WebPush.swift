import NIOCore
import NIOHPACK
import NIOHTTP2

/// The push service's side of Web Push (`POST /wp/<id>`): the subscription, VAPID, the
/// headers, the size, the decryption, then the rule's answer or 201 with `Location`.
extension MockConnectionHandler {
    /// The headers a push service reads, in one pass; repeated ones are joined with ", " as
    /// HTTP combines them (so `TTL: 1` twice is `1, 1`, which is no TTL).
    struct WebPushHead {
        var authority = ""
        var ttl: String?
        var urgency: String?
        var topic: String?
        var contentEncoding: String?

        init(_ headers: HPACKHeaders) {
            for (name, value, _) in headers {
                switch name {
                case ":authority", "host": if authority.isEmpty { authority = value }
                case "ttl": Self.add(&ttl, value)
                case "urgency": Self.add(&urgency, value)
                case "topic": Self.add(&topic, value)
                case "content-encoding": Self.add(&contentEncoding, value)
                default: break
                }
            }
        }

        private static func add(_ field: inout String?, _ value: String) {
            field = field.map { $0 + ", " + value } ?? value
        }
    }

    /// What the checks concluded about one message.
    struct WebPushVerdict {
        var keys: MockWebPushSubscriptionKeys?
        /// A refusal: status, reason, and why in words.
        var refusal: (status: Int, reason: String, message: String)?
        var claims: MockVAPIDClaims?
        var plaintext: [UInt8]?
        var decrypted = false
        var decryptionFailed = false

        /// For the counters: true decrypted, false failed, nil not attempted.
        var decryption: Bool? { decrypted ? true : decryptionFailed ? false : nil }

        mutating func refuse(_ status: Int, _ reason: String, _ message: String) {
            refusal = (status, reason, message)
        }
    }

    /// Whether this connection speaks HTTP/1.1 (through ``MockHTTP1Adapter``).
    var http1: Bool { listener.http1Only }

    func isWebPushPath(_ head: RequestHead) -> Bool {
        head.pathOnly.hasPrefix("/wp/")
    }

    func handleWebPush(context: ChannelHandlerContext, streamID: HTTP2StreamID, head: RequestHead, headers: HPACKHeaders, body: ByteBuffer?) {
        requestsCompleted += 1
        if streamID > highestCompletedStreamID { highestCompletedStreamID = streamID }
        if streamsLimited {
            // Push services do not hold a new connection to one stream: lift the APNs limit at once.
            streamsLimited = false
            let raised = HTTP2Setting(parameter: .maxConcurrentStreams, value: core.configuration.maxConcurrentStreams)
            write(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([raised]))), context: context)
        }
        let received = MockClock.monotonicNanoseconds()
        let webHead = WebPushHead(headers)
        let id = String(head.pathOnly.dropFirst("/wp/".utf8.count))
        let bytes = body.map { Array($0.readableBytesView) } ?? []
        let (entry, decrypt) = core.state.withLock { s in
            (s.webPush.subscriptions[id], bytes.isEmpty ? true : s.webPush.drawDecrypt())
        }
        let verdict = checkWebPush(entry: entry, head: head, webHead: webHead, body: bytes, decrypt: decrypt)
        let origin = verdict.keys?.origin.serialized ?? ""
        let messageLocation = origin + "/m/" + rng.uuidString()
        let connectionID = self.connectionID
        let (answer, waiters, faults) = core.state.withLock { s -> (MockWebPushAnswer, [MockSharedState.Waiter], MockConnectionFaults) in
            let answer: MockWebPushAnswer
            if let refusal = verdict.refusal {
                answer = .status(refusal.status, reason: refusal.reason)
            } else {
                answer = s.webPush.answer(subscriptionID: id, origin: origin)
            }
            let location = answer.kind == .normal ? messageLocation : answer.location
            var record = s.recordRequests ? Self.webPushRecord(
                connectionID: connectionID, streamID: streamID, head: head, webHead: webHead, headers: headers, id: id,
                verdict: verdict, body: bytes, answer: answer, location: location, received: received) : nil
            record?.httpVersion = http1 ? "HTTP/1.1" : "HTTP/2"
            let waiters = s.countWebPush(status: answer.decidedStatus, decrypted: verdict.decryption, record: record)
            return (answer, waiters, s.faults)
        }
        for waiter in waiters { waiter.notify(true) }
        deliverWebPush(answer, message: verdict.refusal?.message, location: answer.kind == .normal ? messageLocation : answer.location,
                       ttl: webHead.ttl, streamID: streamID, context: context)
        applyConnectionFaults(faults, context: context)
    }

    /// The checks, in order (the DocC article lists them); decryption runs here, outside the lock.
    private func checkWebPush(entry: MockWebPushState.Entry?, head: RequestHead, webHead: WebPushHead, body: [UInt8],
                              decrypt: Bool) -> WebPushVerdict {
        var verdict = WebPushVerdict()
        guard let entry else {
            verdict.refuse(404, "NotFound", "no subscription at \(head.pathOnly): the mock never made it")
            return verdict
        }
        verdict.keys = entry.keys
        let origin = entry.keys.origin
        guard let addressed = MockWebPushOrigin(authority: Substring(webHead.authority)), addressed == origin else {
            verdict.refuse(404, "NotFound", "the request was addressed to \(webHead.authority), the endpoint is on \(origin.serialized)")
            return verdict
        }
        guard entry.active else {
            verdict.refuse(410, "Gone", "the subscription was unsubscribed")
            return verdict
        }
        guard head.method == "POST" else {
            verdict.refuse(405, "MethodNotAllowed", "push messages are POSTed, not \(head.method ?? "sent without a method")")
            return verdict
        }
        switch checkVAPID(head.authorization, keys: entry.keys) {
        case .failure(let problem):
            verdict.refuse(403, "BadJwtToken", problem.description)
            return verdict
        case .success(let claims):
            verdict.claims = claims
        }
        guard let ttl = webHead.ttl else {
            verdict.refuse(400, "MissingTTL", "the TTL header is required (RFC 8030 §5.2)")
            return verdict
        }
        guard MockWebPushRules.isValidTTL(ttl) else {
            verdict.refuse(400, "BadTTL", "TTL \"\(ttl)\" is not delta-seconds (RFC 8030 §5.2)")
            return verdict
        }
        if let urgency = webHead.urgency, !MockWebPushRules.urgencies.contains(urgency) {
            verdict.refuse(400, "BadUrgency", "Urgency \"\(urgency)\" is not very-low, low, normal or high (RFC 8030 §5.3)")
            return verdict
        }
        if let topic = webHead.topic, !MockWebPushRules.isValidTopic(topic) {
            verdict.refuse(400, "BadWebPushTopic", "Topic \"\(topic)\" is not 1 to 32 characters of A-Z a-z 0-9 - _ (RFC 8030 §5.4)")
            return verdict
        }
        guard body.count <= MockWebPushRules.maxBodyBytes else {
            verdict.refuse(413, "PayloadTooLarge", "the body is \(body.count) octets, over \(MockWebPushRules.maxBodyBytes) (RFC 8030 §7.2)")
            return verdict
        }
        // A push message without a payload (RFC 8030 §5) has nothing to decrypt.
        guard !body.isEmpty else { return verdict }
        guard webHead.contentEncoding?.lowercased() == MockWebPushRules.contentEncoding else {
            verdict.refuse(400, "BadContentEncoding",
                           "Content-Encoding is \(webHead.contentEncoding.map { "\"\($0)\"" } ?? "missing"); exactly aes128gcm (RFC 8291 §4)")
            return verdict
        }
        // Sampling (a benchmark's choice): a message not drawn is accepted without decryption.
        guard decrypt else { return verdict }
        switch MockWebPushDecryptor.decrypt(body, receiver: entry.keys.privateKey, authSecret: entry.keys.authSecret) {
        case .failure(let failure):
            verdict.refuse(400, "DecryptionFailed", failure.description)
            verdict.decryptionFailed = true
        case .success(let plaintext):
            verdict.plaintext = plaintext
            verdict.decrypted = true
        }
        return verdict
    }

    /// VAPID (RFC 8292): the claims, or why the authorization is refused. A connection keeps the
    /// last authorization that verified, so a sender reusing its JWT costs one comparison (no
    /// parsing, no signature check); the audience, the expiry and the subscription's key are
    /// checked on every request.
    private func checkVAPID(_ authorization: String?, keys: MockWebPushSubscriptionKeys) -> Result<MockVAPIDClaims, MockWebPushDecryptor.Failure> {
        guard let authorization else {
            return .failure(.init("no Authorization: vapid t=<JWT>, k=<key> header (RFC 8292 §3)"))
        }
        let claims: MockVAPIDClaims
        if let cached = lastVAPID, cached.authorization == authorization {
            claims = cached.claims
        } else {
            guard let (token, key) = MockWebPushVAPID.parameters(authorization) else {
                return .failure(.init("no Authorization: vapid t=<JWT>, k=<key> header (RFC 8292 §3)"))
            }
            switch MockWebPushVAPID.verify(token: token, key: key) {
            case .failure(let failure): return .failure(failure)
            case .success(let verified):
                claims = verified
                lastVAPID = (authorization, verified)
            }
        }
        if let problem = MockWebPushVAPID.check(claims, origin: keys.origin.serialized, now: core.now()) {
            return .failure(.init(problem))
        }
        if let restricted = keys.applicationServerKey, MockBase64URL.decode(Substring(claims.publicKey)) != restricted {
            return .failure(.init("k is not the applicationServerKey the subscription was made with (RFC 8292 §4.2)"))
        }
        return .success(claims)
    }

    static func webPushRecord(
        connectionID: Int, streamID: HTTP2StreamID, head: RequestHead, webHead: WebPushHead, headers: HPACKHeaders, id: String,
        verdict: WebPushVerdict, body: [UInt8], answer: MockWebPushAnswer, location: String?, received: Int64
    ) -> MockWebPushRecordedRequest {
        var recorded: [[String]] = []
        recorded.reserveCapacity(headers.count)
        for (name, value, _) in headers {
            if name == "authorization" {
                let k = MockWebPushVAPID.parameters(value).map { String($0.key) } ?? ""
                recorded.append([name, "vapid t=<redacted>, k=" + k])
            } else {
                recorded.append([name, value])
            }
        }
        return MockWebPushRecordedRequest(
            sequenceNumber: 0, connectionID: connectionID, streamID: Int(Int32(streamID)), method: head.method ?? "",
            authority: webHead.authority, path: head.path ?? "", endpoint: verdict.keys?.subscription.endpoint, subscriptionID: id,
            headers: recorded, ttl: webHead.ttl, urgency: webHead.urgency, topic: webHead.topic, contentEncoding: webHead.contentEncoding,
            vapidSubject: verdict.claims?.subject, vapidAudience: verdict.claims?.audience, vapidExpiresAt: verdict.claims?.expiresAt,
            vapidPublicKey: verdict.claims?.publicKey, body: body, bodyLength: body.count, plaintext: verdict.plaintext,
            decrypted: verdict.decrypted, status: answer.decidedStatus, reason: verdict.refusal?.reason ?? answer.reason,
            message: verdict.refusal?.message, answerKind: verdict.refusal == nil ? answer.kind.rawValue : "invalid",
            location: location, receivedMonotonicNanoseconds: received, receivedWallNanoseconds: MockClock.wallNanoseconds()
        )
    }

    /// Writes the answer now, after its delay, or when held answers are released; `noAnswer`
    /// writes nothing.
    func deliverWebPush(_ answer: MockWebPushAnswer, message: String?, location: String?, ttl: String?,
                        streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        if answer.kind == .noAnswer { return }
        let write: (MockConnectionHandler, ChannelHandlerContext) -> Void = { handler, context in
            handler.writeWebPushAnswer(answer, message: message, location: location, ttl: ttl, streamID: streamID, context: context)
        }
        if core.heldAnswers.isHolding, park(context: context, { handler, context in
            handler.deliverWebPush(answer, message: message, location: location, ttl: ttl, streamID: streamID, context: context)
        }) { return }
        let delay = answer.delayMilliseconds ?? 0
        guard delay > 0 else {
            write(self, context)
            return
        }
        delayedAnswers += 1
        context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(delay))) {
            self.delayedAnswers -= 1
            guard context.channel.isActive else { return }
            write(self, context)
            self.needsFlush = false
            context.flush()
            self.finishGoawayIfDone(context: context)
        }
    }

    private func writeWebPushAnswer(_ answer: MockWebPushAnswer, message: String?, location: String?, ttl: String?,
                                    streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        var headers = HPACKHeaders()
        switch answer.kind {
        case .noAnswer:
            return
        case .reset:
            write(HTTP2Frame(streamID: streamID, payload: .rstStream(.internalError)), context: context)
            return
        case .normal:
            // RFC 8030 §5: 201 Created, Location naming the push message resource, and the TTL kept.
            headers.add(name: ":status", value: "201")
            if let location { headers.add(name: "location", value: location) }
            if let ttl { headers.add(name: "ttl", value: ttl) }
            write(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: true))), context: context)
            return
        case .status:
            headers.add(name: ":status", value: String(answer.status ?? 201))
            if let location { headers.add(name: "location", value: location) }
            if let retryAfter = answer.retryAfter { headers.add(name: "retry-after", value: retryAfter) }
        }
        guard answer.reason != nil || message != nil else {
            write(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: true))), context: context)
            return
        }
        var body = "{"
        if let reason = answer.reason { body += #""reason":"# + MockJSON.quoted(reason) }
        if let message { body += (answer.reason == nil ? "" : ",") + #""message":"# + MockJSON.quoted(message) }
        body += "}"
        headers.add(name: "content-type", value: "application/json")
        headers.add(name: "content-length", value: String(body.utf8.count))
        write(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers))), context: context)
        let buffer = context.channel.allocator.buffer(string: body)
        write(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(buffer), endStream: true))), context: context)
    }
}
