import Foundation
import MockPush
import Testing

/// `MockConnectionFaults.tokenMaxAgeSeconds`: the provider-token age limit as a fault.
@Suite("Token age limit")
struct TokenMaxAgeTests {
    @Test("-1: every fresh token gets 403 ExpiredProviderToken; nil: the same token is accepted")
    func negativeExpiresEverything() async throws {
        try await withMock { server, port async throws in
            let jwt = try Fixtures.jwt()
            server.setFaults(MockConnectionFaults(tokenMaxAgeSeconds: -1))
            let result = try Curl.run(port: port, [.valid(jwt: jwt), .valid(jwt: jwt, token: Fixtures.token(2))])
            #expect(result.responses.map(\.status) == [403, 403])
            #expect(result.responses.map(\.reason) == ["ExpiredProviderToken", "ExpiredProviderToken"])
            server.setFaults(MockConnectionFaults(tokenMaxAgeSeconds: nil))
            #expect(try Curl.one(port: port, .valid(jwt: jwt)).status == 200)
            #expect(server.stats().byReason == ["ExpiredProviderToken": 2])
        }
    }

    @Test("a positive limit by the mock clock")
    func positiveLimit() async throws {
        let clock = TestClock()
        try await withMock({ $0.clock = clock.closure; $0.faults = MockConnectionFaults(tokenMaxAgeSeconds: 600) }) { server, port async throws in
            #expect(try Curl.one(port: port, .valid(jwt: try Fixtures.jwt(issuedAt: clock.now - 599))).status == 200)
            let old = try Curl.one(port: port, .valid(jwt: try Fixtures.jwt(issuedAt: clock.now - 601)))
            #expect(old.status == 403)
            #expect(old.reason == "ExpiredProviderToken")
            // reset() goes back to the configured faults, this limit included.
            server.reset()
            #expect(try Curl.one(port: port, .valid(jwt: try Fixtures.jwt(issuedAt: clock.now - 601))).status == 403)
        }
    }

    @Test("set at run time over POST /_mock/faults, it applies to a connection already open")
    func appliesToOpenConnection() async throws {
        try await withMock { server, port async throws in
            let jwt = try Fixtures.jwt()
            let result = try Curl.run(port: port, [
                .valid(jwt: jwt),
                ControlAPITests.control("POST", "/_mock/faults", body: #"{"tokenMaxAgeSeconds":-1}"#),
                .valid(jwt: jwt),
                ControlAPITests.control("POST", "/_mock/faults", body: "{}"),
                .valid(jwt: jwt),
            ])
            #expect(result.responses.map(\.status) == [200, 200, 403, 200, 200], "\(result.stderr)")
            #expect(result.responses[2].reason == "ExpiredProviderToken")
            let stats = server.stats()
            #expect(stats.connectionsOpened == 1)
            #expect(stats.requestsByConnection == [1: 3])
        }
    }
}
