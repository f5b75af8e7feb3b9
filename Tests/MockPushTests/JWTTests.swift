import Foundation
import MockPush
import Testing

@Suite("Provider token (JWT) checks")
struct JWTTests {
    @Test("signature by another key → InvalidProviderToken")
    func badSignature() async throws {
        try await withMock { _, port async throws in
            // Signed with the other key but naming the main key's id.
            let jwt = try Fixtures.jwt(key: Fixtures.otherKey, keyID: Fixtures.keyID)
            let response = try Curl.one(port: port, .valid(jwt: jwt))
            #expect(response.status == 403)
            #expect(response.reason == "InvalidProviderToken")
        }
    }

    @Test("a tampered claim → InvalidProviderToken")
    func tamperedClaims() async throws {
        try await withMock { _, port async throws in
            // The claim changed relative to the token's own `iat`: read from the clock again, a
            // second later on a busy machine, `now - 1` was that `iat`, and the "tampered" claim
            // the signed one.
            let issuedAt = MockClock.wallSeconds()
            let jwt = try Fixtures.jwt(issuedAt: issuedAt)
            var parts = jwt.split(separator: ".").map(String.init)
            parts[1] = base64url(Array(#"{"iss":"\#(Fixtures.teamID)","iat":\#(issuedAt - 1)}"#.utf8))
            let response = try Curl.one(port: port, .valid(jwt: parts.joined(separator: ".")))
            #expect(response.status == 403)
            #expect(response.reason == "InvalidProviderToken")
        }
    }

    @Test("iss is not the key's team → InvalidProviderToken")
    func wrongIssuer() async throws {
        try await withMock { _, port async throws in
            let response = try Curl.one(port: port, .valid(jwt: try Fixtures.jwt(teamID: "OTHERTEAM1")))
            #expect(response.status == 403)
            #expect(response.reason == "InvalidProviderToken")
        }
    }

    @Test("unknown kid → InvalidProviderToken")
    func unknownKeyID() async throws {
        try await withMock { _, port async throws in
            let response = try Curl.one(port: port, .valid(jwt: try Fixtures.jwt(keyID: "NOSUCHKEY1")))
            #expect(response.status == 403)
            #expect(response.reason == "InvalidProviderToken")
        }
    }

    @Test("older than 60 minutes (mock clock) → ExpiredProviderToken; 59 minutes is fine")
    func tooOld() async throws {
        let clock = TestClock()
        try await withMock({ $0.clock = clock.closure }) { _, port async throws in
            let fresh = try Fixtures.jwt(issuedAt: clock.now - 59 * 60)
            #expect(try Curl.one(port: port, .valid(jwt: fresh)).status == 200)
            let old = try Fixtures.jwt(issuedAt: clock.now - 3601)
            let response = try Curl.one(port: port, .valid(jwt: old))
            #expect(response.status == 403)
            #expect(response.reason == "ExpiredProviderToken")
        }
    }

    @Test("a token a connection already uses expires when the mock clock passes 60 minutes")
    func expiresOnOpenConnection() async throws {
        // The clock advances 1801 s on every reading: the second request sees the token at 3602 s.
        let clock = TestClock()
        let start = clock.now
        try await withMock({ $0.clock = { clock.advance(by: 1801); return clock.now } }) { _, port async throws in
            let jwt = try Fixtures.jwt(issuedAt: start)
            let result = try Curl.run(port: port, [.valid(jwt: jwt), .valid(jwt: jwt)])
            #expect(result.responses.map(\.status) == [200, 403])
            #expect(result.responses[1].reason == "ExpiredProviderToken")
        }
    }

    @Test("issued in the future beyond the skew → InvalidProviderToken")
    func fromTheFuture() async throws {
        let clock = TestClock()
        try await withMock({ $0.clock = clock.closure }) { _, port async throws in
            let response = try Curl.one(port: port, .valid(jwt: try Fixtures.jwt(issuedAt: clock.now + 3600)))
            #expect(response.status == 403)
            #expect(response.reason == "InvalidProviderToken")
        }
    }

    @Test("a valid JWT's public parts are recorded, the token itself is not")
    func recordsClaimsNotSecret() async throws {
        try await withMock { server, port async throws in
            let jwt = try Fixtures.jwt(issuedAt: MockClock.wallSeconds() - 5)
            _ = try Curl.one(port: port, .valid(jwt: jwt))
            let record = try #require(server.requests().first)
            #expect(record.auth == "token")
            #expect(record.jwtKeyID == Fixtures.keyID)
            #expect(record.jwtIssuer == Fixtures.teamID)
            #expect(record.header("authorization") == "bearer <redacted>")
            #expect(!record.headers.flatMap { $0 }.contains { $0.contains(jwt) })
        }
    }
}
