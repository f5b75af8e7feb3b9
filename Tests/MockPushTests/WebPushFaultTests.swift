import Foundation
import MockPush
import Testing

/// Faults for Web Push messages: per-subscription and per-origin rules (statuses with
/// Retry-After, redirects, no answer), held answers, connection faults.
@Suite struct WebPushFaultTests {
    @Test func nextRequestsGetTheRuleStatusWithRetryAfterThen201() async throws {
        try await withMock { server, port in
            let target = try server.webPushTarget(port: port)
            let other = try server.webPushTarget(port: port)
            server.setWebPushRule(forEndpoint: target.subscription.endpoint, .next(2, .status(429, reason: "TooManyRequests", retryAfter: "30")))
            let result = try Curl.run(port: port, [try target.request(), try other.request(), try target.request(), try target.request()])
            #expect(result.exitCode == 0, "\(result.stderr)")
            #expect(result.responses.map(\.status) == [429, 201, 429, 201])
            #expect(result.responses[0].headers["retry-after"] == "30" && result.responses[0].reason == "TooManyRequests")
            // Rules apply after the checks: the rule's answers still decrypted the message.
            #expect(server.webPushRequests().allSatisfy { $0.decrypted })
            #expect(server.webPushRequests()[0].answerKind == "status")
        }
    }

    @Test func redirectCarriesLocationAndIsNotFollowedByTheMock() async throws {
        try await withMock { server, port in
            let target = try server.webPushTarget(port: port)
            let elsewhere = "https://127.0.0.1:\(port)/wp/elsewhere"
            server.setWebPushRule(forEndpoint: target.subscription.id, .always(.redirect(307, to: elsewhere)))
            let response = try Curl.one(port: port, try target.request())
            #expect(response.status == 307)
            #expect(response.headers["location"] == elsewhere)
            #expect(server.stats().webPushRequests == 1)
            #expect(server.webPushRequests().first?.location == elsewhere)
        }
    }

    /// An origin's rule answers every subscription on it that has no rule of its own, over the
    /// control API too.
    @Test func originRuleAnswersEverySubscriptionOnTheOrigin() async throws {
        try await withMock { server, port in
            let a = try server.webPushTarget(port: port)
            let b = try server.webPushTarget(port: port)
            let body = Array(#"{"origin":"https://127.0.0.1:\#(port)","rule":{"then":{"kind":"status","status":503,"retryAfter":"5"}}}"#.utf8)
            #expect(try Curl.one(port: port, TestRequest(method: "POST", path: "/_mock/webpush/rules", headers: [], body: body)).status == 200)
            server.setWebPushRule(forEndpoint: b.subscription.endpoint, .always(.normal))
            let result = try Curl.run(port: port, [try a.request(), try b.request()])
            #expect(result.responses.map(\.status) == [503, 201])
            #expect(result.responses[0].headers["retry-after"] == "5")
            try server.setWebPushRule(forOrigin: "https://127.0.0.1:\(port)", nil)
            #expect(try Curl.one(port: port, try a.request()).status == 201)
        }
    }

    /// Held answers hold Web Push answers too: the request is received and recorded, its answer
    /// waits for `releaseAnswers()`.
    @Test func heldAnswersHoldWebPushAnswersUntilReleased() async throws {
        try await withMock { server, port in
            let target = try server.webPushTarget(port: port)
            let request = try target.request()
            server.holdAnswers()
            let sent = Task { try Curl.one(port: port, request) }
            try await server.waitUntil(timeout: .seconds(30), "the held Web Push request") { $0.webPushRequests == 1 }
            // The request is recorded, then its answer kept on the connection's event loop: the count
            // can be read between the two, and keeping an answer is no event a waiter wakes on.
            let deadline = ContinuousClock.now + .seconds(30)
            while server.heldAnswerCount == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            #expect(server.heldAnswerCount == 1)
            server.releaseAnswers()
            let response = try await sent.value
            #expect(response.status == 201)
        }
    }

    @Test func noAnswerLeavesTheStreamUnansweredAndResetResetsIt() async throws {
        try await withMock { server, port in
            let target = try server.webPushTarget(port: port)
            server.setWebPushRule(forEndpoint: target.subscription.endpoint, MockWebPushRule(sequence: [.reset, .noAnswer]))
            let reset = try Curl.run(port: port, [try target.request()])
            #expect(reset.exitCode != 0 && reset.responses[0].status == 0)
            // No answer: curl's own deadline ends it (the mock never answers; 2 s is curl's wait, not an assertion).
            let unanswered = try Curl.run(port: port, [try target.request()], maxTime: 2)
            #expect(unanswered.exitCode == 28, "\(unanswered.stderr)")
            #expect(server.webPushRequests().map(\.answerKind) == ["reset", "noAnswer"])
        }
    }

    @Test func connectionFaultsCountWebPushRequests() async throws {
        try await withMock { server, port in
            let target = try server.webPushTarget(port: port)
            server.setFaults(MockConnectionFaults(closeAfterRequests: 1))
            #expect(try Curl.one(port: port, try target.request()).status == 201)
            try await server.waitUntil(timeout: .seconds(30), "the close") { $0.connectionsClosedByMock == 1 }
        }
    }
}

/// Decryption sampling, for benchmarks: one message in N decrypted, the others accepted after
/// their checks without it.
@Suite struct WebPushSampleTests {
    @Test func decryptSampleDecryptsOneMessageInN() async throws {
        try await withMock { server, port in
            let target = try server.webPushTarget(port: port)
            let body = Array(#"{"oneIn":2}"#.utf8)
            #expect(try Curl.one(port: port, TestRequest(method: "POST", path: "/_mock/webpush/decrypt-sample", headers: [], body: body)).status == 200)
            var garbage = try target.request()
            garbage.body![garbage.body!.count - 1] ^= 1
            let result = try Curl.run(port: port, [try target.request(), garbage, try target.request(), garbage])
            // Drawn: 1st and 3rd (decrypted; the 3rd is valid), the 2nd and 4th accepted undecrypted.
            #expect(result.responses.map(\.status) == [201, 201, 201, 201])
            #expect(server.webPushRequests().map(\.decrypted) == [true, false, true, false])
            server.reset()
            #expect(try Curl.one(port: port, garbage).status == 400)
        }
    }

    /// The bench verifies a sample and reads the outcome from the counters (records are off there):
    /// every request counted, the drawn ones split into decrypted and failed.
    @Test func statsCountEveryRequestAndTheSampleDecryptedOrFailed() async throws {
        try await withMock { server, port in
            let target = try server.webPushTarget(port: port)
            let body = Array(#"{"oneIn":2}"#.utf8)
            #expect(try Curl.one(port: port, TestRequest(method: "POST", path: "/_mock/webpush/decrypt-sample", headers: [], body: body)).status == 200)
            var garbage = try target.request()
            garbage.body![garbage.body!.count - 1] ^= 1
            // Drawn: the 1st (valid: decrypted) and the 3rd (garbage: DecryptionFailed); the others accepted undecrypted.
            let result = try Curl.run(port: port, [try target.request(), garbage, garbage, try target.request()])
            #expect(result.responses.map(\.status) == [201, 201, 400, 201])
            let stats = server.stats()
            #expect(stats.webPushRequests == 4)
            #expect(stats.webPushDecrypted == 1)
            #expect(stats.webPushDecryptionFailures == 1)
            let json = try Curl.one(port: port, TestRequest(method: "GET", path: "/_mock/stats", headers: [], body: nil))
            #expect(json.body.contains(#""webPushDecrypted":1"#) && json.body.contains(#""webPushDecryptionFailures":1"#))
        }
    }
}
