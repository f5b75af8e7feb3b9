import Foundation
import MockPush
import Testing

/// The `/_mock/` endpoints another process uses.
@Suite("Control endpoints")
struct ControlAPITests {
    static func control(_ method: String, _ path: String, body: String? = nil) -> TestRequest {
        TestRequest(method: method, path: path, headers: [("content-type", "application/json")], body: body.map { Array($0.utf8) })
    }

    @Test("POST /_mock/rules sets a token rule")
    func setRule() async throws {
        try await withMock { _, port async throws in
            let token = Fixtures.token(0x41)
            let set = try Curl.one(port: port, Self.control("POST", "/_mock/rules", body: #"""
            {"token":"\#(token)","rule":{"sequence":[{"kind":"status","status":429,"reason":"TooManyRequests"}]}}
            """#))
            #expect(set.status == 200)
            let jwt = try Fixtures.jwt()
            let result = try Curl.run(port: port, [.valid(jwt: jwt, token: token), .valid(jwt: jwt, token: token)])
            #expect(result.responses.map(\.status) == [429, 200])
            #expect(result.responses[0].reason == "TooManyRequests")
            // null removes it
            #expect(try Curl.one(port: port, Self.control("POST", "/_mock/rules", body: #"{"token":"\#(token)","rule":null}"#)).status == 200)
        }
    }

    @Test("GET /_mock/stats counts requests but not control calls")
    func stats() async throws {
        try await withMock { _, port async throws in
            let jwt = try Fixtures.jwt()
            var bad = TestRequest.valid(jwt: jwt)
            bad.set("apns-topic", nil)
            _ = try Curl.run(port: port, [.valid(jwt: jwt), bad])
            let response = try Curl.one(port: port, Self.control("GET", "/_mock/stats", body: nil))
            let stats = try JSONDecoder().decode(MockPushStats.self, from: Data(response.body.utf8))
            #expect(stats.requests == 2)
            #expect(stats.byStatus == [200: 1, 400: 1])
            #expect(stats.byReason == ["MissingTopic": 1])
        }
    }

    @Test("GET /_mock/requests returns the records; POST /_mock/reset clears them")
    func requestsAndReset() async throws {
        try await withMock { server, port async throws in
            _ = try Curl.one(port: port, .valid(jwt: try Fixtures.jwt()))
            let listed = try Curl.one(port: port, Self.control("GET", "/_mock/requests"))
            let records = try JSONDecoder().decode([MockRecordedRequest].self, from: Data(listed.body.utf8))
            #expect(records.count == 1)
            #expect(records.first?.deviceToken == Fixtures.token)
            server.setRule(forToken: Fixtures.token, .always(.error(.badDeviceToken)))
            #expect(try Curl.one(port: port, Self.control("POST", "/_mock/reset")).status == 200)
            #expect(server.requests().isEmpty)
            #expect(server.stats().requests == 0)
            #expect(try Curl.one(port: port, .valid(jwt: try Fixtures.jwt())).status == 200, "rules cleared by reset")
        }
    }

    @Test("POST /_mock/failure-rate and /_mock/faults")
    func failureRateAndFaults() async throws {
        try await withMock { server, port async throws in
            #expect(try Curl.one(port: port, Self.control("POST", "/_mock/failure-rate", body: #"""
            {"rate":1.0,"answer":{"kind":"status","status":503,"reason":"ServiceUnavailable"},"seed":3}
            """#)).status == 200)
            let response = try Curl.one(port: port, .valid(jwt: try Fixtures.jwt()))
            #expect(response.status == 503)
            #expect(response.reason == "ServiceUnavailable")
            #expect(try Curl.one(port: port, Self.control("POST", "/_mock/failure-rate", body: "null")).status == 200)
            #expect(try Curl.one(port: port, Self.control("POST", "/_mock/faults", body: #"{"goawayAfterStreams":1}"#)).status == 200)
            #expect(try Curl.one(port: port, .valid(jwt: try Fixtures.jwt())).status == 200)
            try await server.waitUntil(timeout: .seconds(10), "a GOAWAY") { $0.goawaysSent == 1 }
        }
    }

    @Test("GET /_mock/wait answers once enough requests arrived, 408 on timeout")
    func wait() async throws {
        try await withMock { _, port async throws in
            let timedOut = try Curl.one(port: port, Self.control("GET", "/_mock/wait?count=1&timeoutMs=100"))
            #expect(timedOut.status == 408)
            _ = try Curl.one(port: port, .valid(jwt: try Fixtures.jwt()))
            let reached = try Curl.one(port: port, Self.control("GET", "/_mock/wait?count=1&timeoutMs=5000"))
            #expect(reached.status == 200)
            #expect((reached.json?["requests"] as? NSNumber)?.intValue == 1)
        }
    }

    @Test("bad control requests")
    func badControlRequests() async throws {
        try await withMock { _, port async throws in
            let bad = try Curl.one(port: port, Self.control("POST", "/_mock/rules", body: "{"))
            #expect(bad.status == 400)
            #expect(bad.reason == "BadControlRequest")
            #expect(try Curl.one(port: port, Self.control("GET", "/_mock/nothing")).status == 404)
            #expect(try Curl.one(port: port, Self.control("DELETE", "/_mock/stats")).status == 405)
        }
    }
}
