import Foundation
import MockPush
import Testing

@Suite("Faults on demand")
struct FaultTests {
    @Test("410 Unregistered with the timestamp set")
    func unregisteredWithTimestamp() async throws {
        try await withMock { server, port async throws in
            let token = Fixtures.token(410)
            server.setRule(forToken: token, .always(.unregistered(at: 1_700_000_123_456)))
            let response = try Curl.one(port: port, .valid(jwt: try Fixtures.jwt(), token: token))
            #expect(response.status == 410)
            #expect(response.reason == "Unregistered")
            #expect((response.json?["timestamp"] as? NSNumber)?.int64Value == 1_700_000_123_456)
            // Other tokens are unaffected.
            #expect(try Curl.one(port: port, .valid(jwt: try Fixtures.jwt())).status == 200)
        }
    }

    @Test("a sequence 500, 500, then 200")
    func sequence() async throws {
        try await withMock { server, port async throws in
            let token = Fixtures.token(500)
            server.setRule(forToken: token, MockTokenRule(sequence: [.error(.internalServerError), .error(.internalServerError)]))
            let jwt = try Fixtures.jwt()
            let result = try Curl.run(port: port, Array(repeating: .valid(jwt: jwt, token: token), count: 4))
            #expect(result.responses.map(\.status) == [500, 500, 200, 200])
            #expect(result.responses[0].reason == "InternalServerError")
            #expect(server.stats().count(status: 500) == 2)
        }
    }

    @Test("rules apply only to requests that pass validation")
    func rulesAfterValidation() async throws {
        try await withMock { server, port async throws in
            let token = Fixtures.token(7)
            server.setRule(forToken: token, MockTokenRule(sequence: [.error(.serviceUnavailable)]))
            var bad = TestRequest.valid(jwt: try Fixtures.jwt(), token: token)
            bad.set("apns-priority", "2")
            #expect(try Curl.one(port: port, bad).status == 400)
            #expect(try Curl.one(port: port, .valid(jwt: try Fixtures.jwt(), token: token)).status == 503)
        }
    }

    @Test("never answered: the client's deadline fires")
    func neverAnswered() async throws {
        try await withMock { server, port async throws in
            let token = Fixtures.token(0xdead)
            server.setRule(forToken: token, .always(.noAnswer))
            let result = try Curl.run(port: port, [.valid(jwt: try Fixtures.jwt(), token: token)], maxTime: 1)
            #expect(result.exitCode == 28, "curl should time out: \(result.stderr)")
            #expect(result.responses[0].status == 0)
            #expect(server.stats().unanswered == 1)
        }
    }

    @Test("stream reset: RST_STREAM instead of an answer")
    func streamReset() async throws {
        try await withMock { server, port async throws in
            let token = Fixtures.token(0x757)
            server.setRule(forToken: token, .always(.reset))
            let request = TestRequest.valid(jwt: try Fixtures.jwt(), token: token)
            let output = try Nghttp.run(port: port, paths: [request.path], headers: request.headers, body: request.body)
            #expect(Nghttp.received("RST_STREAM", in: output).count == 1, "\(output)")
            #expect(!output.contains(":status:"))
            #expect(server.stats().resets == 1)
        }
    }

    @Test("a delayed answer arrives after the delay")
    func delayed() async throws {
        try await withMock { server, port async throws in
            let token = Fixtures.token(0xd1)
            server.setRule(forToken: token, .always(MockAnswer.normal.delayed(by: 400)))
            let start = ContinuousClock.now
            let response = try Curl.one(port: port, .valid(jwt: try Fixtures.jwt(), token: token))
            #expect(response.status == 200)
            #expect(ContinuousClock.now - start >= .milliseconds(400))
        }
    }

    @Test("random failures follow the seed")
    func randomFailures() async throws {
        func run() async throws -> [Int] {
            try await withMock { server, port async throws in
                server.setFailureRate(MockFailureRate(rate: 0.5, answer: .error(.serviceUnavailable), seed: 99))
                let jwt = try Fixtures.jwt()
                return try Curl.run(port: port, Array(repeating: .valid(jwt: jwt), count: 12)).responses.map(\.status)
            }
        }
        let first = try await run()
        let second = try await run()
        #expect(first == second)
        #expect(first.contains(503))
        #expect(first.contains(200))
        #expect(Set(first).isSubset(of: [200, 503]))
    }

    @Test("GOAWAY with a JSON reason after N streams")
    func goawayAfterStreams() async throws {
        try await withMock({ $0.faults = MockConnectionFaults(goawayAfterStreams: 2, goawayReason: "Shutdown") }) { server, port async throws in
            let request = TestRequest.valid(jwt: try Fixtures.jwt())
            // Three streams: two answered, the third refused by the GOAWAY (so nghttp is
            // still reading when the GOAWAY arrives).
            let paths = (1...3).map { request.path + "?\($0)" }
            let output = try Nghttp.run(port: port, paths: paths, headers: request.headers, body: request.body)
            let goaway = Nghttp.received("GOAWAY", in: output)
            #expect(goaway.count == 1, "\(output)")
            #expect(output.contains(#"{"reason":"Shutdown"}"#), "\(output)")
            #expect(output.components(separatedBy: ":status: 200").count - 1 == 2)
            #expect(server.stats().goawaysSent == 1)
        }
    }

    @Test("after GOAWAY curl continues on a new connection")
    func goawayThenReconnect() async throws {
        try await withMock({ $0.faults = MockConnectionFaults(goawayAfterStreams: 2) }) { server, port async throws in
            let jwt = try Fixtures.jwt()
            let result = try Curl.run(port: port, Array(repeating: .valid(jwt: jwt), count: 3))
            #expect(result.responses.map(\.status) == [200, 200, 200])
            #expect(server.stats().connectionsOpened == 2)
        }
    }

    @Test("closing connections after N requests")
    func closeAfterRequests() async throws {
        try await withMock { server, port async throws in
            server.setFaults(MockConnectionFaults(closeAfterRequests: 1))
            let jwt = try Fixtures.jwt()
            // The second request may race the close (then curl reports an error) or go
            // on a new connection; either way connection 1 served exactly one request.
            let result = try Curl.run(port: port, [.valid(jwt: jwt), .valid(jwt: jwt)])
            #expect(result.responses[0].status == 200)
            let stats = server.stats()
            #expect(stats.requestsByConnection[1] == 1)
            #expect(stats.connectionsClosedByMock >= 1)
            #expect(try Curl.one(port: port, .valid(jwt: jwt)).status == 200)
        }
    }

    @Test("idle connections are killed")
    func idleKill() async throws {
        try await withMock({ $0.faults = MockConnectionFaults(idleTimeoutMilliseconds: 150) }) { server, port async throws in
            // nghttp keeps the connection open only while it has streams; curl's --rate spaces
            // the two requests 1 s apart, so the first connection sits idle in between.
            let jwt = try Fixtures.jwt()
            let result = try Curl.run(port: port, [.valid(jwt: jwt), .valid(jwt: jwt)], extra: ["--rate", "1/s"])
            #expect(result.responses.map(\.status) == [200, 200], "\(result.stderr)")
            let stats = server.stats()
            #expect(stats.connectionsOpened == 2)
            #expect(stats.connectionsClosedByMock >= 1)
        }
    }

    @Test("blackholed idle connections: the client waits until its own deadline")
    func idleBlackhole() async throws {
        try await withMock({ $0.faults = MockConnectionFaults(idleTimeoutMilliseconds: 150, idleBlackhole: true) }) { server, port async throws in
            let jwt = try Fixtures.jwt()
            // The second request goes 1 s later on the same (now blackholed) connection.
            let result = try Curl.run(port: port, [.valid(jwt: jwt), .valid(jwt: jwt)], maxTime: 2, extra: ["--rate", "1/s"])
            #expect(result.responses[0].status == 200)
            #expect(result.responses[1].status == 0)
            #expect(result.exitCode == 28, "curl should time out: \(result.stderr)")
            let stats = server.stats()
            #expect(stats.connectionsBlackholed == 1)
            #expect(stats.connectionsOpened == 1)
            #expect(stats.requests == 1)
        }
    }
}
