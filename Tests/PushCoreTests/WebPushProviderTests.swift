import PushCore
import Testing

/// Web Push as a provider (issue 47): a claimed `webpush` row's request, its endpoint (per origin
/// for holds, never an origin in a metric label), and its answers through the Outcome, the
/// Disposition and the Decider.
@Suite struct WebPushProviderTests {
    static let p256dh = [UInt8](repeating: 0x04, count: 1) + [UInt8](repeating: 7, count: 64)
    static let auth = [UInt8](repeating: 9, count: 16)
    static let keysJSON = #"{"p256dh": "\#(Base64URL.encode(p256dh))", "auth": "\#(Base64URL.encode(auth))"}"#
    static let endpoint = "https://Push.Example.org:8443/wpush/v2/AbC?up=1"

    static func row(endpoint: String = endpoint, keys: String? = keysJSON, payload: [UInt8] = Array(#"{"web_push":8030}"#.utf8),
                    priority: Int? = nil, collapseID: String? = nil, credential: String = "default") -> ClaimedNotification {
        ClaimedNotification(id: 11, provider: .webpush, deviceToken: endpoint, payload: payload, priority: priority,
                            expiresAt: 1_800_000_100, collapseID: collapseID, apnsID: "00000000-0000-4000-8000-00000000000b",
                            credential: credential, lease: 42, webpushKeys: keys)
    }

    static func refusal(_ row: ClaimedNotification) -> PushRequest.Refusal? {
        do throws(PushRequest.Refusal) {
            _ = try PushRequest(row: row, defaultTopic: "com.example.app", sendBy: nil)
            return nil
        } catch {
            return error
        }
    }

    @Test("a webpush row maps to its endpoint, keys, Urgency and Topic; the payload is the plaintext byte for byte")
    func mapsRow() throws {
        let row = Self.row(priority: 5, collapseID: "inbox-12")
        let request = try PushRequest(row: row, defaultTopic: "com.example.app", sendBy: 99)
        guard case .webPush(let fields) = request.fields else {
            Issue.record("not Web Push fields: \(request.fields)")
            return
        }
        #expect(request.provider == .webpush)
        #expect(fields.endpoint.text == Self.endpoint)
        #expect(fields.endpoint.origin.description == "https://push.example.org:8443")
        #expect(fields.keys.p256dh == Self.p256dh && fields.keys.auth == Self.auth)
        #expect(fields.urgency == .normal && fields.topic == "inbox-12")
        #expect(request.payload == row.payload && request.deviceToken == Self.endpoint)
        #expect(request.expiration == 1_800_000_100 && request.tag == 11 && request.claim == 42 && request.startDeadline == 99)
        // TTL is the whole seconds left when the request goes out, not when the row was mapped.
        #expect(fields.headers(expiration: request.expiration, now: 1_800_000_000_500).ttl == 99)
        #expect(fields.headers(expiration: request.expiration, now: 1_800_000_200_000).ttl == 0)
        #expect(fields.headers(expiration: nil, now: 0).ttl == WebPushHeaders.defaultTTL)
    }

    /// Rows a producer wrote around the table's rules (or before them) end failed with a reason, no request.
    @Test("bad webpush rows are refused with their reason", arguments: [
        (row(keys: nil), "InvalidSubscriptionKeys"),
        (row(keys: #"{"p256dh": "AAAA", "auth": "AAAA"}"#), "InvalidSubscriptionKeys"),
        (row(keys: #"{"auth": "x"}"#), "InvalidSubscriptionKeys"),
        (row(keys: "[1]"), "InvalidSubscriptionKeys"),
        (row(endpoint: "http://push.example.org/x"), "EndpointNotAllowed"),
        (row(endpoint: "https://user@push.example.org/x"), "EndpointNotAllowed"),
        (row(endpoint: "https://127.1/x"), "EndpointNotAllowed"),
        (row(payload: [UInt8](repeating: 0x61, count: 3994)), "PayloadTooLarge"),
        (row(priority: 7), "InvalidPriority"),
        (row(collapseID: "has space"), "InvalidTopic"),
        (row(collapseID: String(repeating: "a", count: 33)), "InvalidTopic"),
    ])
    func refusesBadRows(_ row: ClaimedNotification, _ reason: String) {
        let refusal = Self.refusal(row)
        #expect(refusal?.reason == reason)
        // The message never carries the endpoint's path (the subscription's secret) nor a key.
        #expect(refusal.map { !$0.message.contains("wpush") && !$0.message.contains(Base64URL.encode(Self.auth)) } == true)
    }

    @Test("3 993 payload bytes are accepted")
    func largestPayload() {
        #expect(Self.refusal(Self.row(payload: [UInt8](repeating: 0x61, count: 3993))) == nil)
    }

    /// A Web Push row's endpoint is its credential at its origin: the key of its holds in
    /// pushq.credential_pauses (`channel`); metrics label it `webpush`, never the origin.
    @Test("a webpush row's endpoint is its credential at its origin; metrics see only webpush")
    func endpointPerOrigin() throws {
        let e = Self.row(credential: "web").endpoint
        #expect(e.provider == .webpush && e.credential == "web")
        #expect(e.channel == "https://push.example.org:8443")
        #expect(e.metricEnvironment == "webpush" && e.withoutOrigin.metricEnvironment == "webpush")
        #expect(e.withoutOrigin == .webPush("web", origin: nil) && e.withoutOrigin.channel == "webpush")
        #expect(Endpoint(credential: "web", channel: e.channel) == e)
        #expect(Endpoint(credential: "web", channel: "webpush") == e.withoutOrigin)
        #expect(Endpoint(credential: "web", channel: "https://push.example.org:443") == Endpoint(credential: "web", channel: "https://push.example.org"))
        #expect(Endpoint(credential: "web", channel: "https://bad host") == nil)
        let other = Self.row(endpoint: "https://fcm.googleapis.com/fcm/send/x", credential: "web").endpoint
        #expect(other != e && other.channel == "https://fcm.googleapis.com")
        // The credential's sender endpoint (no origin) is what Endpoint(credential:environment:provider:) names.
        #expect(Endpoint(credential: "web", environment: .development, provider: .webpush) == e.withoutOrigin)
        #expect(Provider(rawValue: "webpush") == .webpush && Provider.webpush.serviceName == "Web Push")
    }

    @Test("a webpush answer is classified by its verdict; the sender's refusal is EndpointNotAllowed")
    func answers() throws {
        let request = try PushRequest(row: Self.row(), defaultTopic: nil, sendBy: nil)
        var response = PushResponse(request: request, status: 201, answer: .webPush(WebPushAnswer(location: "https://push.example.org/m/1")))
        #expect(response.outcome == .webPush(.sent) && response.webPush?.location == "https://push.example.org/m/1")
        response = PushResponse(request: request, status: 410, answer: .webPush(WebPushAnswer()))
        #expect(response.outcome == .webPush(.invalidateEndpoint(.gone)))
        let refusal = WebPushEndpointRefusal(.address, "https://push.example.org:8443 resolves to a private address")
        response = PushResponse(request: request, answer: .webPush(WebPushAnswer(endpointRefusal: refusal)))
        #expect(response.outcome == .webPush(.endpointNotAllowed(refusal)) && response.reasonText == "EndpointNotAllowed")
        let d = Disposition.decide(outcome: response.outcome, reason: response.reasonText, attempts: 1, maxAttempts: 5, lastReason: nil,
                                   policy: RetryPolicy(), unitRandom: { 0.5 })
        #expect(d == Disposition(status: .failed, reason: "EndpointNotAllowed"))
        // No answer at all: the transport failure decides, as for APNs and FCM.
        response = PushResponse(request: request, answer: .webPush(WebPushAnswer()), transportFailure: TransportFailure(kind: .timeout, message: "t"))
        #expect(response.outcome == .retry(.outcomeUnknown(.timeout)))
        #expect(Outcome.webPush(.throttleSubscription(seconds: 5)).retryLabel == "too_many_requests")
        #expect(Outcome.webPush(.retry(.serverError(status: 503), retryAfter: nil)).retryLabel == "server_error")
        #expect(MetricLabel.reason("EndpointNotAllowed") == "EndpointNotAllowed" && MetricLabel.reason("Gone") == "Gone")
    }

    static let policy = RetryPolicy(baseSeconds: 1, capSeconds: 600, throttleDelaySeconds: 300)
    static let a = Endpoint.webPush("default", origin: try! WebPushOrigin.parse("https://a.example").get())
    static let b = Endpoint.webPush("default", origin: try! WebPushOrigin.parse("https://b.example").get())

    static func answer(_ row: Int64, _ e: Endpoint, _ outcome: Outcome, http: Bool = true) -> Answer {
        Answer(row: row, endpoint: e, attempts: 1, maxAttempts: 10, lastReason: nil, outcome: outcome,
               reasonText: nil, isHTTPAnswer: http)
    }

    /// 401/403 hold the credential at that origin only: an origin is a subscriber's choice, and
    /// one refusing the key must not stop the rows to the others.
    @Test("401/403 from one origin hold the credential there only; the other origin's rows go on")
    func credentialHoldPerOrigin() {
        var d = Decider(policy: Self.policy, random: FixedUnit(0.5))
        let out = d.decide([Self.answer(1, Self.a, .webPush(WebPushVerdict.classify(status: 403, reason: "BadJwtToken", retryAfter: nil))),
                            Self.answer(2, Self.b, .webPush(.sent))])
        #expect(out.holds.count == 1)
        #expect(out.holds.first?.endpoint == Self.a && out.holds.first?.kind == .credential && out.holds.first?.reason == "Forbidden")
        #expect(out.holds.first?.message.contains("https://a.example") == true)
        #expect(out.dispositions[0].refundsAttempt && out.dispositions[0].status == .retrying)
        #expect(out.dispositions[1].status == .sent && out.resumed == [Self.b])
    }

    /// An origin answering only 5xx (or unreachable) is held as an outage on its own; another
    /// origin of the same credential stays up.
    @Test("an origin answering 503 to three rows is held as down; the other origin is not")
    func outagePerOrigin() {
        var d = Decider(policy: Self.policy, random: FixedUnit(0.5))
        let failing = (1...3).map { Self.answer(Int64($0), Self.a, .webPush(.retry(.serverError(status: 503), retryAfter: nil))) }
        let out = d.decide(failing + [Self.answer(9, Self.b, .webPush(.sent))])
        #expect(out.holds.map(\.endpoint) == [Self.a] && out.holds.first?.kind == .outage)
        #expect(out.resumed == [Self.b])
        // Refused endpoints say nothing about the origin: no hold however many.
        let refusal = WebPushEndpointRefusal(.address, "refused")
        var e = Decider(policy: Self.policy, random: FixedUnit(0.5))
        let refused = e.decide((1...10).map { Self.answer(Int64($0), Self.a, .webPush(.endpointNotAllowed(refusal)), http: false) })
        #expect(refused.holds.isEmpty && refused.dispositions.allSatisfy { $0.status == .failed })
    }
}
