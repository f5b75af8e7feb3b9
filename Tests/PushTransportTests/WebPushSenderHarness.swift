import Foundation
import Logging
import MockPush
import PushCore
@testable import PushTransport
import Testing

/// A ``WebPushSender`` against the mock's Web Push service (real TLS, HTTP/2, decryption).
struct WebPushSetup {
    let harness: MockHarness
    let sender: WebPushSender
    let collector: ResultCollector
    let credential: WebPushCredential

    static let subject = "mailto:push@example.com"

    /// A mock (or `harness`) and a started sender allowing `allowed` origins (the mock's own by default).
    static func start(harness: MockHarness? = nil, allowed: [String]? = nil, maxConnections: Int = 64, threads: Int = 1,
                      requestTimeout: Double = 10, logger: Logger = testLogger) async throws -> WebPushSetup {
        let harness = if let harness { harness } else { try await MockHarness.start() }
        let credential = WebPushCredential(key: try VAPIDKey(pem: TestKeyPair.generate().privatePEM), subject: try VAPIDSubject(subject))
        let origins = try WebPushEndpointPolicy.parseAllowedOrigins((allowed ?? [harness.url]).joined(separator: ","))
        let collector = ResultCollector()
        let configuration = harness.senderConfiguration(connections: threads).with { $0.requestTimeout = requestTimeout }
        let sender = try WebPushSender(configuration: configuration,
                                       webPush: WebPushConfiguration(allowedOrigins: origins, maxConnections: maxConnections),
                                       credential: credential, logger: logger, onResults: collector.onResults)
        try sender.start()
        return WebPushSetup(harness: harness, sender: sender, collector: collector, credential: credential)
    }

    func stop() async throws {
        _ = await sender.shutdown(deadline: .seconds(5))
        try await harness.stop()
    }

    func byTag() -> [Int64: PushResponse] {
        Dictionary(collector.responses.map { ($0.tag, $0) }, uniquingKeysWith: { a, _ in a })
    }
}

/// A Web Push request to `subscription` as the worker maps a row (`PushRequest(row:…)`).
func webPushRequest(_ tag: Int, _ subscription: MockWebPushSubscription, payload: [UInt8]? = nil, expiration: Int64? = nil,
                    urgency: WebPushUrgency? = nil, topic: String? = nil) throws -> PushRequest {
    try webPushRequest(tag, endpoint: subscription.endpoint, keys: subscription.keys, payload: payload, expiration: expiration,
                       urgency: urgency, topic: topic)
}

/// A Web Push request to `endpoint` (any text that parses) with `keys`.
func webPushRequest(_ tag: Int, endpoint: String, keys: MockWebPushSubscription.Keys, payload: [UInt8]? = nil, expiration: Int64? = nil,
                    urgency: WebPushUrgency? = nil, topic: String? = nil) throws -> PushRequest {
    let parsed = try WebPushEndpoint.parse(endpoint).get()
    let fields = WebPushFields(endpoint: parsed, keys: try WebPushKeys(p256dh: keys.p256dh, auth: keys.auth), urgency: urgency, topic: topic)
    return PushRequest(tag: Int64(tag), deviceToken: endpoint, payload: payload ?? webPushPayload(tag), expiration: expiration,
                       fields: .webPush(fields))
}

/// A Declarative Web Push message naming `tag`.
func webPushPayload(_ tag: Int) -> [UInt8] {
    Array(#"{"web_push":8030,"notification":{"title":"n\#(tag)","navigate":"https://example.com/m/\#(tag)"}}"#.utf8)
}
