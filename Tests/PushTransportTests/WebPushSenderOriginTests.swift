import Foundation
import MockPush
import PushCore
@testable import PushTransport
import Testing

/// One Web Push credential, many origins: connections per origin under one bound over all of
/// them (`PUSHQ_WEBPUSH_MAX_CONNECTIONS`), the idle ones closed first, and a dead origin holding
/// only its own requests.
@Suite struct WebPushSenderOriginTests {
    /// 50 origins (50 ports of 127.0.0.1 served by one mock, each allowlisted), 16 connections at
    /// most: every message is delivered and decrypted, at least one connection per origin was
    /// opened (the mock counts them over all ports), and never more than 16 were open at once.
    @Test("50 origins with max 16 connections: all delivered, never more than 16 open at once")
    func fiftyOriginsSixteenConnections() async throws {
        let harness = try await MockHarness.start()
        let origins = try await harness.server.listenForWebPushOrigins(50)
        let s = try await WebPushSetup.start(harness: harness, allowed: origins, maxConnections: 16, threads: 2)
        do {
            var requests: [PushRequest] = []
            for (o, origin) in origins.enumerated() {
                for k in 0..<3 {
                    let subscription = try harness.server.makeWebPushSubscription(MockWebPushSubscriptionOptions(origin: origin))
                    requests.append(try webPushRequest(o * 3 + k, subscription))
                }
            }
            // In three rounds, so that connections to the first origins go idle and are closed
            // for later ones: the bound holds over time, not only for one burst.
            for round in 0..<3 {
                try s.sender.submit(requests.filter { Int($0.tag) % 3 == round })
                await s.collector.wait(for: (round + 1) * origins.count)
            }
            let answers = s.collector.responses
            #expect(answers.count == requests.count)
            #expect(answers.allSatisfy { $0.status == 201 && $0.outcome == .webPush(.sent) },
                    "\(answers.filter { $0.status != 201 }.prefix(3).map { "\($0.tag): \(String(describing: $0.transportFailure))" })")
            let recorded = harness.server.webPushRequests()
            #expect(recorded.count == requests.count && recorded.allSatisfy(\.decrypted))
            let byEndpoint = Dictionary(requests.map { ($0.deviceToken, $0.payload) }, uniquingKeysWith: { a, _ in a })
            #expect(recorded.allSatisfy { $0.endpoint.flatMap { byEndpoint[$0] } == $0.plaintext })
            #expect(Set(recorded.map(\.authority)).count == 50)
            // The bound, counted exactly where the connections are made: every socket libcurl opened
            // and closed went through the sender's callbacks. (The mock's own count of open
            // connections lags: it learns of a close when its event loop reads the FIN, possibly
            // after another listener's thread accepted the connection opened in its place.)
            #expect(s.sender.peakOpenConnections <= 16 && s.sender.peakOpenConnections >= 2,
                    "peak \(s.sender.peakOpenConnections) connections open at once")
            // At least one connection per origin, so idle ones were closed to open the others.
            let stats = harness.server.stats()
            #expect(stats.connectionsOpened >= 50 && stats.connectionsOpened == s.sender.stats().connectionsOpened)
            // One VAPID token per origin, reused for its three messages.
            #expect(s.sender.vapidTokensSigned == 50)
        } catch {
            try await s.stop()
            throw error
        }
        try await s.stop()
    }

    /// An origin whose connections are accepted and then never answered (a dead push service)
    /// takes its own requests to their deadline; the other origins' requests are answered
    /// meanwhile: every one of them came back before the first of the dead origin's (which the
    /// deadline ends), so none waited behind the dead origin's connection or its requests.
    @Test("a dead origin holds only its own requests: the others are answered before its deadline")
    func deadOriginHoldsOnlyItsOwn() async throws {
        let harness = try await MockHarness.start()
        let origins = try await harness.server.listenForWebPushOrigins(4)
        let s = try await WebPushSetup.start(harness: harness, allowed: origins, maxConnections: 4, threads: 1, requestTimeout: 5)
        do {
            try harness.server.setWebPushRule(forOrigin: origins[0], .always(.noAnswer))
            var requests: [PushRequest] = []
            for i in 0..<40 {
                let subscription = try harness.server.makeWebPushSubscription(MockWebPushSubscriptionOptions(origin: origins[i % 4]))
                requests.append(try webPushRequest(i, subscription))
            }
            try s.sender.submit(requests)
            await s.collector.wait(for: 40)
            let answers = s.collector.responses
            let dead = answers.enumerated().filter { Int($0.element.tag) % 4 == 0 }
            let alive = answers.enumerated().filter { Int($0.element.tag) % 4 != 0 }
            #expect(dead.count == 10 && dead.allSatisfy { $0.element.outcome == .retry(.outcomeUnknown(.timeout)) })
            #expect(alive.count == 30 && alive.allSatisfy { $0.element.outcome == .webPush(.sent) })
            // Order of delivery, not time: the live origins' answers all came first.
            #expect(alive.map(\.offset).max()! < dead.map(\.offset).min()!)
        } catch {
            try await s.stop()
            throw error
        }
        try await s.stop()
    }
}
