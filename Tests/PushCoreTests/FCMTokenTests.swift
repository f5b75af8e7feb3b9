import PushCore
import Testing

@Suite struct FCMOAuthClaimsTests {
    @Test func headerAndClaims() throws {
        let claims = FCMOAuthClaims(keyID: "abc123", clientEmail: "s@p.iam.gserviceaccount.com",
                                    audience: "https://oauth2.googleapis.com/token", issuedAt: 1_700_000_000)
        #expect(claims.headerJSON == #"{"alg":"RS256","typ":"JWT","kid":"abc123"}"#)
        #expect(claims.claimsJSON == #"{"iss":"s@p.iam.gserviceaccount.com","scope":"https://www.googleapis.com/auth/firebase.messaging","aud":"https://oauth2.googleapis.com/token","iat":1700000000,"exp":1700003600}"#)
        let parts = claims.signingInput.split(separator: ".")
        #expect(parts.count == 2)
        let decoded = try #require(Base64URL.decode(parts[1]))
        #expect(JSONValue.parse(decoded)?["exp"]?.int64Value == 1_700_003_600)
        #expect(claims.assertion(signature: [1, 2, 3]) == claims.signingInput + ".AQID")
    }

    @Test func lifetimeIsClampedToAnHour() {
        #expect(FCMOAuthClaims(keyID: "k", clientEmail: "e", audience: "a", issuedAt: 10, lifetime: 99_999).expiresAt == 3610)
        #expect(FCMOAuthClaims(keyID: "k", clientEmail: "e", audience: "a", issuedAt: 10, lifetime: 600).expiresAt == 610)
        #expect(FCMOAuthClaims(keyID: "k", clientEmail: "e", audience: "a", issuedAt: 10, lifetime: 0).expiresAt == 11)
    }

    @Test func stringsAreEscaped() {
        let claims = FCMOAuthClaims(keyID: "k\"", clientEmail: "a\\b", audience: "x", issuedAt: 0)
        #expect(JSONValue.parse(Array(claims.headerJSON.utf8))?["kid"]?.stringValue == "k\"")
        #expect(JSONValue.parse(Array(claims.claimsJSON.utf8))?["iss"]?.stringValue == "a\\b")
    }

    @Test func formBody() {
        #expect(FCMOAuthClaims.tokenRequestBody(assertion: "h.c.s")
            == "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=h.c.s")
    }
}

@Suite struct FCMTokenAnswerTests {
    static func refusal(_ status: Int, _ body: String) -> FCMTokenRefusal? {
        if case .refused(let r) = FCMTokenAnswer.parse(status: status, body: Array(body.utf8)) { return r }
        return nil
    }

    @Test func granted() {
        #expect(FCMTokenAnswer.parse(status: 200, body: Array(#"{"access_token":"ya29.abc","expires_in":3599,"token_type":"Bearer"}"#.utf8))
            == .granted(value: "ya29.abc", expiresIn: 3599))
    }

    /// (status, body) → refusal kind; the message says what to fix.
    static let refusals: [(Int, String, FCMTokenRefusal.Kind, String)] = [
        (400, #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#, .keyRejected, "not deleted or disabled"),
        (400, #"{"error":"invalid_grant","error_description":"Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."}"#, .clock, "clock"),
        (400, #"{"error":"invalid_grant","error_description":"Invalid grant: account not found"}"#, .accountUnknown, "client_email"),
        (401, #"{"error":"invalid_client","error_description":"The OAuth client was not found."}"#, .accountUnknown, "client_email"),
        (400, #"{"error":"invalid_scope","error_description":"x"}"#, .scope, "Cloud Messaging API"),
        (400, #"{"error":"unsupported_grant_type"}"#, .badRequest, "token_uri"),
        (503, "", .unavailable, "later"),
        (404, "<html>not found</html>", .unreadable, "token_uri"),
        (200, #"{"access_token":"x","token_type":"Bearer"}"#, .unreadable, "token_uri"),
        (200, #"{"access_token":"x","expires_in":3599,"token_type":"MAC"}"#, .unreadable, "token_uri"),
        (200, #"{"access_token":"has space","expires_in":3599,"token_type":"Bearer"}"#, .unreadable, "token_uri"),
    ]

    @Test(arguments: refusals.indices)
    func refused(_ i: Int) throws {
        let (status, body, kind, words) = Self.refusals[i]
        let refusal = try #require(Self.refusal(status, body))
        #expect(refusal.kind == kind)
        #expect(refusal.description.contains(words))
        #expect(refusal.description.contains("HTTP \(status)"))
        #expect(refusal.isTransient == (kind == .unavailable))
    }
}

@Suite struct FCMAccessTokenCacheTests {
    @Test func firstUseRefreshesAndOthersWait() {
        var cache = FCMAccessTokenCache()
        #expect(cache.next(now: 1000) == .refresh)
        #expect(cache.next(now: 1000) == .wait)
        #expect(cache.next(now: 1001) == .wait)
        let token = cache.refreshed(value: "t1", expiresIn: 3600, now: 1000)
        #expect(token == FCMAccessToken(value: "t1", expiresAt: 4600, serial: 1))
        #expect(cache.next(now: 1002) == .use(token))
        #expect(!token.description.contains("t1"))
    }

    /// (seconds after the grant, expected decision) for a token living 3600 s, margin 300, minimum 60.
    @Test func refreshesAheadOfExpiryOnce() {
        var cache = FCMAccessTokenCache(refreshMargin: 300, minimumValidity: 60, retryAfterFailure: 30)
        _ = cache.next(now: 0)
        let token = cache.refreshed(value: "t1", expiresIn: 3600, now: 0)
        #expect(cache.next(now: 3299) == .use(token))
        #expect(cache.next(now: 3300) == .useAndRefresh(token))
        #expect(cache.next(now: 3301) == .use(token))  // one refresh at a time
        #expect(cache.next(now: 3540) == .wait)  // too close to expiry to hand out
        let next = cache.refreshed(value: "t2", expiresIn: 3600, now: 3541)
        #expect(next.serial == 2)
        #expect(cache.next(now: 3542) == .use(next))
    }

    @Test func failedRefreshIsNotRepeatedAtOnce() {
        var cache = FCMAccessTokenCache(refreshMargin: 300, minimumValidity: 60, retryAfterFailure: 30)
        #expect(cache.next(now: 0) == .refresh)
        cache.refreshFailed(now: 5)
        #expect(cache.next(now: 6) == .failed)
        #expect(cache.next(now: 34) == .failed)
        #expect(cache.next(now: 35) == .refresh)
        // A failed refresh ahead of expiry keeps the old token in use.
        let token = cache.refreshed(value: "t", expiresIn: 1000, now: 40)
        #expect(cache.next(now: 740) == .useAndRefresh(token))
        cache.refreshFailed(now: 741)
        #expect(cache.next(now: 760) == .use(token))
        #expect(cache.next(now: 771) == .useAndRefresh(token))
    }

    @Test func invalidateOncePerToken() {
        var cache = FCMAccessTokenCache()
        _ = cache.next(now: 0)
        let t1 = cache.refreshed(value: "t1", expiresIn: 3600, now: 0)
        #expect(cache.invalidate(t1) == .dropped)
        #expect(cache.invalidate(t1) == .alreadyReplaced)  // 100 streams failed with t1: one refresh
        #expect(cache.next(now: 10) == .refresh)
        #expect(cache.invalidate(t1) == .alreadyReplaced)
        #expect(cache.next(now: 10) == .wait)
        let t2 = cache.refreshed(value: "t2", expiresIn: 3600, now: 11)
        #expect(t2.replacedRejected)
        #expect(cache.invalidate(t1) == .alreadyReplaced)
        #expect(cache.next(now: 12) == .use(t2))
        // The replacement refused too: refreshing again will not help.
        #expect(cache.invalidate(t2) == .rejectedAgain)
    }

    @Test func invalidateIgnoresARecentFailure() {
        var cache = FCMAccessTokenCache()
        _ = cache.next(now: 0)
        let t1 = cache.refreshed(value: "t1", expiresIn: 3600, now: 0)
        _ = cache.next(now: 3400)  // background refresh starts
        cache.refreshFailed(now: 3401)
        #expect(cache.invalidate(t1) == .dropped)
        #expect(cache.next(now: 3402) == .refresh)
    }

    @Test func tokenValues() {
        #expect(FCMAccessToken.isValidValue("ya29.a0AfH6SM-_~+/="))
        #expect(!FCMAccessToken.isValidValue(""))
        #expect(!FCMAccessToken.isValidValue("a b"))
        #expect(!FCMAccessToken.isValidValue("a\r\nx: y"))
    }
}
