import Foundation
import MockPush
import Testing

@Suite("Per-connection token rules")
struct ConnectionTokenRuleTests {
    @Test("switching JWTs within 20 minutes on one connection → 429 TooManyProviderTokenUpdates")
    func switchTooSoon() async throws {
        let clock = TestClock()
        try await withMock({ $0.clock = clock.closure }) { server, port async throws in
            let first = try Fixtures.jwt(issuedAt: clock.now - 10)
            let second = try Fixtures.jwt(issuedAt: clock.now)
            let result = try Curl.run(port: port, [.valid(jwt: first), .valid(jwt: second), .valid(jwt: first)])
            #expect(result.responses.map(\.status) == [200, 429, 200])
            #expect(result.responses[1].reason == "TooManyProviderTokenUpdates")
            let stats = server.stats()
            #expect(stats.connectionsOpened == 1)
            #expect(stats.tokenSwitchViolations == 1)
            #expect(stats.tokenSwitches == 0)
        }
    }

    @Test("switching after 20 minutes (mock clock) is allowed and counted")
    func switchAfterWindow() async throws {
        // Each request reads the clock once; readings are 0 s, then 1201 s later.
        let clock = TestClock()
        let start = clock.now
        let readings = TestClock(start - 1201)
        try await withMock({ $0.clock = { readings.advance(by: 1201); return readings.now } }) { server, port async throws in
            let first = try Fixtures.jwt(issuedAt: start)
            let second = try Fixtures.jwt(issuedAt: start + 1201)
            let result = try Curl.run(port: port, [.valid(jwt: first), .valid(jwt: second)])
            #expect(result.responses.map(\.status) == [200, 200])
            #expect(server.stats().tokenSwitches == 1)
            #expect(server.stats().tokenSwitchViolations == 0)
        }
    }

    @Test("the same token on a new connection is not a switch")
    func newConnectionNewToken() async throws {
        let clock = TestClock()
        try await withMock({ $0.clock = clock.closure }) { server, port async throws in
            #expect(try Curl.one(port: port, .valid(jwt: try Fixtures.jwt(issuedAt: clock.now - 10))).status == 200)
            #expect(try Curl.one(port: port, .valid(jwt: try Fixtures.jwt(issuedAt: clock.now))).status == 200)
            #expect(server.stats().connectionsOpened == 2)
            #expect(server.stats().tokenSwitchViolations == 0)
        }
    }

    @Test("a different kid on the same connection → 403 UnrelatedKeyIdInToken")
    func keyIDChange() async throws {
        try await withMock { server, port async throws in
            let first = try Fixtures.jwt()
            let other = try Fixtures.jwt(key: Fixtures.otherKey, keyID: Fixtures.otherKeyID)
            let result = try Curl.run(port: port, [.valid(jwt: first), .valid(jwt: other)])
            #expect(result.responses.map(\.status) == [200, 403])
            #expect(result.responses[1].reason == "UnrelatedKeyIdInToken")
            #expect(server.stats().keyIDChanges == 1)
            // On its own connection the other key is fine.
            #expect(try Curl.one(port: port, .valid(jwt: other)).status == 200)
        }
    }

    @Test("a new connection allows 1 stream until a valid request succeeds, then maxConcurrentStreams")
    func streamLimitRaisedAfterFirstSuccess() async throws {
        try await withMock({ $0.maxConcurrentStreams = 777 }) { _, port async throws in
            let request = TestRequest.valid(jwt: try Fixtures.jwt())
            let output = try Nghttp.run(port: port, paths: [request.path + "?1", request.path + "?2"], headers: request.headers, body: request.body)
            #expect(Nghttp.receivedMaxConcurrentStreams(in: output) == [1, 777], "\(output)")
            #expect(output.components(separatedBy: ":status: 200").count - 1 == 2)
        }
    }

    @Test("with the limit off, the first SETTINGS already allows maxConcurrentStreams")
    func noStreamLimit() async throws {
        try await withMock({ $0.limitStreamsUntilFirstValidToken = false; $0.maxConcurrentStreams = 555 }) { _, port async throws in
            let request = TestRequest.valid(jwt: try Fixtures.jwt())
            let output = try Nghttp.run(port: port, paths: [request.path], headers: request.headers, body: request.body)
            #expect(Nghttp.receivedMaxConcurrentStreams(in: output) == [555], "\(output)")
        }
    }
}
