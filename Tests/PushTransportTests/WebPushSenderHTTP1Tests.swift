import Foundation
import MockPush
import PushCore
@testable import PushTransport
import Testing

/// "HTTP/2 where the push service offers it, HTTP/1.1 otherwise" (issue 47): push services whose
/// TLS offers only `http/1.1` (ALPN), as some self-hosted UnifiedPush distributors behind an
/// HTTP/1.1 proxy do, served by the mock's Web Push service over HTTP/1.1.
@Suite struct WebPushSenderHTTP1Tests {
    /// Six HTTP/1.1-only origins, four messages each, at most 4 connections: every message went
    /// over HTTP/1.1, was decrypted by the mock to its payload and answered 201 with a Location on
    /// its origin. An HTTP/1.1 connection carries one request at a time, so the 24 requests queue
    /// inside libcurl for the connections the bound allows (a quarter of 4 per origin, 1), and with
    /// more origins than connections idle ones are closed for the others: never more than 4 were
    /// open at once, counted where the sockets are made.
    @Test("HTTP/1.1-only origins: every message decrypted and answered over HTTP/1.1; the connection bound still holds")
    func http1OnlyOrigins() async throws {
        let harness = try await MockHarness.start()
        let origins = try await harness.server.listenForWebPushOrigins(6, http1Only: true)
        let s = try await WebPushSetup.start(harness: harness, allowed: origins, maxConnections: 4, threads: 1, requestTimeout: 30)
        do {
            var requests: [PushRequest] = []
            for (o, origin) in origins.enumerated() {
                for k in 0..<4 {
                    let subscription = try harness.server.makeWebPushSubscription(MockWebPushSubscriptionOptions(origin: origin))
                    // The last of each origin near the limit (3 000 bytes): a body libcurl may hold back
                    // behind `Expect: 100-continue` over HTTP/1.1.
                    let payload = k == 3 ? Array(#"{"web_push":8030,"notification":{"title":"\#(String(repeating: "x", count: 2_940))"}}"#.utf8) : nil
                    requests.append(try webPushRequest(o * 4 + k, subscription, payload: payload, urgency: k == 0 ? .high : nil,
                                                       topic: k == 0 ? "t\(o)" : nil))
                }
            }
            try s.sender.submit(requests)
            await s.collector.wait(for: requests.count)
            let answers = s.byTag()
            #expect(answers.count == requests.count)
            for request in requests {
                let answer = try #require(answers[request.tag])
                let origin = origins[Int(request.tag) / 4]
                #expect(answer.status == 201 && answer.outcome == .webPush(.sent), "\(request.tag): \(String(describing: answer.transportFailure))")
                #expect(answer.webPush?.location?.hasPrefix(origin + "/m/") == true, "\(String(describing: answer.webPush?.location))")
            }
            let recorded = harness.server.webPushRequests()
            #expect(recorded.count == requests.count)
            let byEndpoint = Dictionary(requests.map { ($0.deviceToken, $0.payload) }, uniquingKeysWith: { a, _ in a })
            for r in recorded {
                #expect(r.httpVersion == "HTTP/1.1", "\(r.httpVersion ?? "nil")")
                #expect(r.decrypted && r.endpoint.flatMap { byEndpoint[$0] } == r.plaintext, "\(r.message ?? "")")
                #expect(r.vapidAudience.map { origins.contains($0) } == true && r.contentEncoding == "aes128gcm")
                #expect(r.header("expect") == nil, "the sender does not wait for a 100 Continue: \(r.headers)")
            }
            #expect(recorded.filter { $0.bodyLength > 3_000 }.count == 6)
            #expect(recorded.filter { $0.urgency == "high" }.count == 6 && Set(recorded.compactMap(\.topic)) == Set((0..<6).map { "t\($0)" }))
            #expect(s.sender.peakOpenConnections <= 4 && s.sender.peakOpenConnections >= 1 && harness.server.stats().connectionsOpened >= 6,
                    "peak \(s.sender.peakOpenConnections) connections open at once")
            // One VAPID token per origin, reused over its connection's requests.
            #expect(s.sender.vapidTokensSigned == 6)
        } catch {
            try await s.stop()
            throw error
        }
        try await s.stop()
    }
}
