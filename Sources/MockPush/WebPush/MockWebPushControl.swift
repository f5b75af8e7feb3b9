/// The Web Push control endpoints, beside the others under `/_mock/` (``MockControlAPI``):
///
/// | request | body | answer |
/// |---|---|---|
/// | `POST /_mock/webpush/subscriptions` | ``MockWebPushSubscriptionOptions`` (`{}` for a fresh one) | 201, ``MockWebPushSubscription`` (as `PushSubscription.toJSON()`) |
/// | `POST /_mock/webpush/unsubscribe` | `{"endpoint":"…"}` | `{"ok":true}`; 404 `{"reason":"NotFound"}` for an endpoint the mock did not make |
/// | `POST /_mock/webpush/rules` | `{"endpoint":"…","rule":MockWebPushRule}` or `{"origin":"https://host:port","rule":…}`; `rule` null removes | `{"ok":true}` |
/// | `POST /_mock/webpush/decrypt-sample` | `{"oneIn":N}`, N ≥ 1 | `{"ok":true}`; one message in N decrypted (benchmarks; 1 after reset) |
/// | `GET /_mock/webpush/requests` | | `[MockWebPushRecordedRequest]` |
enum MockWebPushControl {
    struct EndpointRequest: Codable {
        var endpoint: String
    }

    struct SampleRequest: Codable {
        var oneIn: Int
    }

    struct RuleRequest: Codable {
        var endpoint: String?
        var origin: String?
        var rule: MockWebPushRule?
    }

    static let routes: [String: MockControlAPI.Route] = [
        "/_mock/webpush/subscriptions": MockControlAPI.Route(method: "POST") { request, core in
            let options = request.body.isEmpty ? MockWebPushSubscriptionOptions() : try request.decode(MockWebPushSubscriptionOptions.self)
            let subscription = try core.makeWebPushSubscription(options)
            return .respond(status: 201, body: subscription.toJSON())
        },
        "/_mock/webpush/unsubscribe": MockControlAPI.Route(method: "POST") { request, core in
            let unsubscribe = try request.decode(EndpointRequest.self)
            return core.unsubscribeWebPush(unsubscribe.endpoint) ? MockControlAPI.ok : .respond(status: 404, body: #"{"reason":"NotFound"}"#)
        },
        "/_mock/webpush/rules": MockControlAPI.Route(method: "POST") { request, core in
            let rule = try request.decode(RuleRequest.self)
            switch (rule.endpoint, rule.origin) {
            case (let endpoint?, nil): core.setWebPushRule(forEndpoint: endpoint, rule.rule)
            case (nil, let origin?): try core.setWebPushRule(forOrigin: origin, rule.rule)
            default: throw MockPushError(.badConfiguration, "give endpoint or origin, not both")
            }
            return MockControlAPI.ok
        },
        "/_mock/webpush/decrypt-sample": MockControlAPI.Route(method: "POST") { request, core in
            let sample = try request.decode(SampleRequest.self)
            guard sample.oneIn >= 1 else { throw MockPushError(.badConfiguration, "decrypt-sample needs oneIn ≥ 1") }
            core.setWebPushDecryptSample(oneIn: sample.oneIn)
            return MockControlAPI.ok
        },
        "/_mock/webpush/requests": MockControlAPI.Route(method: "GET") { _, core in
            .respond(status: 200, body: try MockControlAPI.encode(core.webPushRequests()))
        },
    ]
}
