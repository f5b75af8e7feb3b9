import Foundation
// Internals: the per-connection token state machine and the age check are pure decisions,
// tested here without a socket (the same rules over TLS: ConnectionTokenRuleTests, JWTTests).
@testable import MockPush
import Testing

/// The token rules as pure decisions, without a socket.
@Suite("ConnectionTokenState")
struct ConnectionTokenStateTests {
    @Test("first token accepted, re-use accepted, early switch rejected, late switch accepted")
    func transitions() throws {
        let verifier = try JWTVerifier(
            tokenKeys: [MockTokenKey(keyID: Fixtures.keyID, teamID: Fixtures.teamID, publicKeyPEMPath: Fixtures.tokenKey)],
            futureSkewSeconds: 60
        )
        let t0: Int64 = 1_800_000_000
        let a = "bearer " + (try Fixtures.jwt(issuedAt: t0))
        let b = "bearer " + (try Fixtures.jwt(issuedAt: t0 + 100))
        var state = ConnectionTokenState()
        guard case .accepted(_, switched: false) = state.admit(authorization: a, now: t0, verifier: verifier) else {
            Issue.record("first token not accepted"); return
        }
        guard case .accepted(_, switched: false) = state.admit(authorization: a, now: t0 + 50, verifier: verifier) else {
            Issue.record("same token not accepted"); return
        }
        #expect(state.admit(authorization: b, now: t0 + 1199, verifier: verifier) == .rejected(.tooManyProviderTokenUpdates, .switchTooSoon))
        guard case .accepted(_, switched: true) = state.admit(authorization: b, now: t0 + 1200, verifier: verifier) else {
            Issue.record("switch at 20 minutes not accepted"); return
        }
        #expect(state.admit(authorization: b, now: t0 + 100 + 3601, verifier: verifier) == .rejected(.expiredProviderToken, nil))
    }

    @Test("checkAge against a limit", arguments: [
        // (limit, age in seconds, expired?)
        (3600, 3600, false), (3600, 3601, true), (600, 599, false), (600, 601, true),
        (0, 0, false), (0, 1, true), (-1, 0, true), (-1, -30, true), (-3600, 0, true),
    ] as [(Int64, Int64, Bool)])
    func checkAge(limit: Int64, age: Int64, expired: Bool) throws {
        let verifier = try JWTVerifier(tokenKeys: [], futureSkewSeconds: 60)
        let now: Int64 = 1_800_000_000
        let token = VerifiedJWT(keyID: Fixtures.keyID, issuer: Fixtures.teamID, issuedAt: now - age)
        #expect(verifier.checkAge(token, now: now, maxAgeSeconds: limit) == (expired ? .expiredProviderToken : nil))
    }
}
