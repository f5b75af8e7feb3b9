import PushCore
import Testing

@Suite struct Base64URLTests {
    // RFC 4648 §10 vectors, converted to the URL alphabet without padding.
    @Test(arguments: [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"),
                      ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy")])
    func rfcVectors(plain: String, encoded: String) {
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        #expect(Base64URL.decode(encoded) == Array(plain.utf8))
    }

    @Test func usesTheURLAlphabet() {
        #expect(Base64URL.encode([0xfb, 0xff, 0xbf]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == [0xfb, 0xff, 0xbf])
        #expect(Base64URL.decode("a+b/") == nil)
        #expect(Base64URL.decode("a") == nil)
    }

    @Test func roundTripsEveryLength() {
        var rng = SystemRandomNumberGenerator()
        for n in 0..<70 {
            let bytes = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
    }
}

@Suite struct ProviderTokenClaimsTests {
    @Test func encodesHeaderAndClaims() {
        // The example from Apple's "Establishing a token-based connection to APNs".
        let claims = ProviderTokenClaims(keyID: "ABC123DEFG", teamID: "DEF123GHIJ", issuedAt: 1_437_179_036)
        #expect(claims.headerJSON == #"{"alg":"ES256","kid":"ABC123DEFG"}"#)
        #expect(claims.claimsJSON == #"{"iss":"DEF123GHIJ","iat":1437179036}"#)
        let parts = claims.signingInput.split(separator: ".")
        #expect(parts.count == 2)
        #expect(Base64URL.decode(parts[0]) == Array(claims.headerJSON.utf8))
        #expect(Base64URL.decode(parts[1]) == Array(claims.claimsJSON.utf8))
        #expect(!claims.signingInput.contains("="))
        let token = claims.token(rawSignature: Array(repeating: 7, count: 64))
        #expect(token.split(separator: ".").count == 3)
        #expect(Base64URL.decode(token.split(separator: ".")[2]) == Array(repeating: 7, count: 64))
    }

    @Test func validatesIDs() {
        #expect(ProviderTokenClaims.isValidID("ABC123DEFG"))
        #expect(!ProviderTokenClaims.isValidID(""))
        #expect(!ProviderTokenClaims.isValidID("AB\"C"))
        #expect(!ProviderTokenClaims.isValidID("ABC 123"))
    }

    @Test("a token is replaced once it reaches the limit, or when its iat lies after now (the clock went back)",
          arguments: [
              (issuedAt: Int64(1000), now: Int64(1000), limit: Int64(1500), replace: false),
              (issuedAt: 1000, now: 2499, limit: 1500, replace: false),
              (issuedAt: 1000, now: 2500, limit: 1500, replace: true),
              (issuedAt: 1000, now: 999, limit: 1500, replace: true),
              (issuedAt: 8200, now: 1000, limit: 3000, replace: true),
              (issuedAt: Int64.max, now: Int64.min, limit: 3000, replace: true),
              (issuedAt: Int64.min, now: Int64.max, limit: 3000, replace: true),
          ])
    func replacement(_ c: (issuedAt: Int64, now: Int64, limit: Int64, replace: Bool)) {
        #expect(ProviderTokenAge.needsReplacing(issuedAt: c.issuedAt, now: c.now, limit: c.limit) == c.replace)
    }
}
