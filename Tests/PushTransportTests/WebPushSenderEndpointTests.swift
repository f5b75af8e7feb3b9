import Foundation
import MockPush
import PushCore
@testable import PushTransport
import Testing

/// Endpoints are untrusted input: the sender connects only to addresses its policy allows
/// (loopback, private, link-local and their IPv4-mapped forms refused unless the origin is
/// allowlisted), pinned, and never follows a redirect. Each refused case has a real listener on
/// the refused address, which must see no connection at all.
@Suite struct WebPushSenderEndpointTests {
    /// A mock on 127.0.0.1 that nothing may reach, and a sender whose allowlist is `allowed`
    /// (another origin, so that the allowlist is not simply empty).
    @Test("loopback, localhost and IPv4-mapped loopback endpoints are refused with no connection at the listener")
    func loopbackRefused() async throws {
        let target = try await MockHarness.start()
        let s = try await WebPushSetup.start(allowed: ["https://push.example.org"])
        do {
            let subscription = try target.server.makeWebPushSubscription()
            let path = "/wp/" + subscription.id
            let endpoints = [
                target.url + path,                                     // 127.0.0.1, not allowlisted
                "https://localhost:\(target.port)" + path,             // a name resolving to loopback
                "https://[::ffff:127.0.0.1]:\(target.port)" + path,    // IPv4-mapped loopback
                "https://[::ffff:7f00:1]:\(target.port)" + path,       // the same, in hex
                "https://[::1]:\(target.port)" + path,                 // IPv6 loopback
                "https://10.0.0.1:\(target.port)" + path,              // private ranges, link-local, unspecified
                "https://169.254.169.254" + path,
                "https://[fe80::1]" + path,
                "https://0.0.0.0:\(target.port)" + path,
            ]
            try s.sender.submit(try endpoints.enumerated().map { try webPushRequest($0.offset, endpoint: $0.element, keys: subscription.keys) })
            await s.collector.wait(for: endpoints.count)
            for response in s.collector.responses {
                let refusal = response.webPush?.endpointRefusal
                #expect(refusal != nil && response.status == nil, "\(endpoints[Int(response.tag)]): \(response.outcome)")
                if case .webPush(.endpointNotAllowed) = response.outcome {} else { Issue.record("\(endpoints[Int(response.tag)]): \(response.outcome)") }
                // The message names the origin, never the path (the subscription's secret).
                #expect(refusal.map { !$0.message.contains(subscription.id) } == true)
            }
            #expect(target.server.stats().connectionsOpened == 0)
            #expect(target.server.webPushRequests().isEmpty)
            #expect(s.sender.stats().connectionsOpened == 0 && s.sender.peakOpenConnections == 0)
        } catch {
            try await s.stop()
            try await target.stop()
            throw error
        }
        try await s.stop()
        try await target.stop()
    }

    /// A mock listening on ::1 (when this host has IPv6 loopback): `https://[::1]:port/` is refused
    /// and that listener sees nothing.
    @Test("https://[::1]:port/ is refused; a listener on ::1 sees no connection")
    func ipv6LoopbackRefused() async throws {
        guard let target = try? await MockHarness.start({ $0.host = "::1" }) else { return }  // no IPv6 loopback here
        let s = try await WebPushSetup.start(allowed: ["https://push.example.org"])
        do {
            let subscription = try target.server.makeWebPushSubscription()
            #expect(subscription.endpoint.hasPrefix("https://[::1]:"))
            try s.sender.submit([try webPushRequest(1, subscription)])
            await s.collector.wait(for: 1)
            #expect(s.collector.responses.first?.webPush?.endpointRefusal?.code == .address)
            #expect(target.server.stats().connectionsOpened == 0)
        } catch {
            try await s.stop()
            try await target.stop()
            throw error
        }
        try await s.stop()
        try await target.stop()
    }

    /// Userinfo and schemes other than https never become a request (the row is refused
    /// `EndpointNotAllowed` when it is mapped), so nothing can reach the listener they name.
    @Test("userinfo and http:// endpoints never become requests")
    func formsRefused() async throws {
        // Nothing below throws (a refusal is PushRequest's typed error, caught here): the target stops at the end.
        let target = try await MockHarness.start()
        for endpoint in ["https://user:pw@127.0.0.1:\(target.port)/wp/x", "http://127.0.0.1:\(target.port)/wp/x",
                         "https://127.0.0.1:\(target.port)@evil.example/wp/x", "https://127.1:\(target.port)/wp/x"] {
            let row = ClaimedNotification(id: 1, provider: .webpush, deviceToken: endpoint, payload: webPushPayload(1),
                                          apnsID: "00000000-0000-4000-8000-000000000001",
                                          webpushKeys: #"{"p256dh":"BAAA","auth":"AAAA"}"#)
            do throws(PushRequest.Refusal) {
                _ = try PushRequest(row: row, defaultTopic: nil, sendBy: nil)
                Issue.record("\(endpoint) became a request")
            } catch {
                #expect(error.reason == "EndpointNotAllowed", "\(endpoint): \(error)")
            }
        }
        #expect(target.server.stats().connectionsOpened == 0)
        try await target.stop()
    }

    /// An allowlisted origin answering 301/302/307/308 to a refused address: the redirect is never
    /// followed (the row fails `Redirect`) and the listener at the target sees no connection.
    @Test("301/302/307/308 to a refused address are not followed: failed Redirect, no connection at the target")
    func redirectsNotFollowed() async throws {
        let target = try await MockHarness.start()
        let s = try await WebPushSetup.start()
        do {
            let elsewhere = try target.server.makeWebPushSubscription()
            var requests: [PushRequest] = []
            for (i, status) in [301, 302, 307, 308].enumerated() {
                let subscription = try s.harness.server.makeWebPushSubscription()
                s.harness.server.setWebPushRule(forEndpoint: subscription.endpoint, .always(.redirect(status, to: elsewhere.endpoint)))
                requests.append(try webPushRequest(i, subscription))
            }
            try s.sender.submit(requests)
            await s.collector.wait(for: 4)
            for response in s.collector.responses {
                #expect(response.outcome == .webPush(.fail(.redirect)) && [301, 302, 307, 308].contains(response.status ?? 0))
            }
            #expect(s.harness.server.webPushRequests().count == 4)
            #expect(target.server.stats().connectionsOpened == 0 && target.server.webPushRequests().isEmpty)
        } catch {
            try await s.stop()
            try await target.stop()
            throw error
        }
        try await s.stop()
        try await target.stop()
    }

    /// An allowlisted name is resolved by the sender, checked and pinned: the request reaches the
    /// mock through `localhost`, which the policy would refuse were it not listed.
    @Test("an allowlisted name is resolved, pinned and sent")
    func allowlistedNameSent() async throws {
        let harness = try await MockHarness.start()
        let origin = "https://localhost:\(harness.port)"
        let s = try await WebPushSetup.start(harness: harness, allowed: [origin])
        do {
            let subscription = try harness.server.makeWebPushSubscription(MockWebPushSubscriptionOptions(origin: origin))
            try s.sender.submit([try webPushRequest(1, subscription)])
            await s.collector.wait(for: 1)
            let response = try #require(s.collector.responses.first)
            #expect(response.status == 201, "\(response.outcome)")
            #expect(harness.server.webPushRequests().first?.plaintext == webPushPayload(1))
        } catch {
            try await s.stop()
            throw error
        }
        try await s.stop()
    }

    /// The pinning itself: what libcurl connects to is what the resolver checked. A request
    /// carrying a pin to another address than its host's goes there (the pin wins over DNS), so a
    /// second lookup by libcurl cannot swap the checked address for another.
    @Test("the checked addresses are pinned: libcurl connects where the pin says, not where DNS would")
    func pinWins() async throws {
        let s = try await WebPushSetup.start()
        do {
            let subscription = try s.harness.server.makeWebPushSubscription(MockWebPushSubscriptionOptions(origin: "https://localhost:\(s.harness.port)"))
            // localhost resolves to loopback; pinned to 127.0.0.2 (no listener there) instead.
            var request = try webPushRequest(1, subscription)
            guard case .webPush(var fields) = request.fields else { return }
            fields.pin = "localhost:\(s.harness.port):127.0.0.2"
            request.fields = .webPush(fields)
            let collector = ResultCollector()
            let sender = try PushSender(provider: WebPushProvider(configuration: WebPushConfiguration(), credential: s.credential, threads: 1,
                                                                  databaseClock: DatabaseClockOffset(), clock: { Int64(time(nil)) }),
                                        configuration: s.harness.senderConfiguration(), logger: testLogger, onResults: collector.onResults)
            try sender.start()
            try sender.submit([request])
            await collector.wait(for: 1)
            _ = await sender.shutdown(deadline: .seconds(5))
            #expect(collector.responses.first?.outcome == .retry(.outcomeUnknown(.connect)))
            #expect(s.harness.server.stats().connectionsOpened == 0)
        } catch {
            try await s.stop()
            throw error
        }
        try await s.stop()
    }
}
