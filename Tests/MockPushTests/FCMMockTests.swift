import Foundation
import MockPush
import Testing

/// The mock's FCM endpoints, driven with `/usr/bin/curl` over TLS + HTTP/2.
@Suite struct FCMMockTests {
    static let registrationToken = "fcm-token_1:APA91b" + String(repeating: "Q", count: 120)

    static func tokenRequest(assertion: String, grantType: String = "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer") -> TestRequest {
        TestRequest(method: "POST", path: "/token", headers: [("content-type", "application/x-www-form-urlencoded")],
                    body: Array("grant_type=\(grantType)&assertion=\(assertion)".utf8))
    }

    static func sendRequest(accessToken: String, project: String = Fixtures.fcmProjectID, body: String) -> TestRequest {
        TestRequest(method: "POST", path: "/v1/projects/\(project)/messages:send",
                    headers: [("authorization", "Bearer " + accessToken), ("content-type", "application/json")],
                    body: Array(body.utf8))
    }

    static func message(token: String = registrationToken) -> String {
        #"{"message":{"token":"\#(token)","notification":{"title":"hi"},"data":{"k":"v"}}}"#
    }

    static func assertion(key: String = Fixtures.fcmKey, port: Int, issuedAt: Int64 = MockClock.wallSeconds(),
                          lifetime: Int64 = 3600, scope: String = MockFCMRules.oauthScope, audience: String? = nil,
                          issuer: String = Fixtures.fcmClientEmail) throws -> String {
        let header = #"{"alg":"RS256","typ":"JWT","kid":"\#(Fixtures.main.identity.fcmKeyID)"}"#
        let claims = #"{"iss":"\#(issuer)","scope":"\#(scope)","aud":"\#(audience ?? "https://127.0.0.1:\(port)/token")","iat":\#(issuedAt),"exp":\#(issuedAt + lifetime)}"#
        return try fcmAssertion(privateKeyPath: key, headerJSON: header, claimsJSON: claims)
    }

    /// Exchanges a valid assertion for an access token.
    static func accessToken(port: Int, issuedAt: Int64 = MockClock.wallSeconds()) throws -> (value: String, expiresIn: Int64) {
        let response = try Curl.one(port: port, tokenRequest(assertion: try assertion(port: port, issuedAt: issuedAt)))
        #expect(response.status == 200, "\(response.body)")
        let json = try #require(response.json)
        #expect(json["token_type"] as? String == "Bearer")
        return (try #require(json["access_token"] as? String), try #require((json["expires_in"] as? NSNumber)?.int64Value))
    }

    @Test func issuesAccessTokensForValidAssertions() async throws {
        try await withMock({ $0.fcm.accessTokenLifetimeSeconds = 120 }) { server, port in
            let granted = try Self.accessToken(port: port)
            #expect(granted.expiresIn == 120)
            let sent = try Curl.one(port: port, Self.sendRequest(accessToken: granted.value, body: Self.message()))
            #expect(sent.status == 200, "\(sent.body)")
            #expect((sent.json?["name"] as? String)?.hasPrefix("projects/\(Fixtures.fcmProjectID)/messages/") == true)
            let records = server.fcmRequests()
            #expect(records.map(\.endpoint) == ["token", "send"])
            #expect(records[0].clientEmail == Fixtures.fcmClientEmail)
            #expect(records[1].registrationToken == Self.registrationToken)
            #expect(records[1].accessTokenSerial == 1)
            #expect(records[1].body == Array(Self.message().utf8))
            // Control API: the same records over HTTP.
            let listed = try Curl.one(port: port, TestRequest(method: "GET", path: "/_mock/fcm/requests", headers: [], body: nil))
            #expect(listed.body.contains("\"registrationToken\":\"\(Self.registrationToken)\""))
            #expect(!listed.body.contains(granted.value))
        }
    }

    /// Each bad assertion → (status, OAuth error, words of the description).
    @Test func rejectsBadAssertions() async throws {
        try await withMock { server, port in
            let now = MockClock.wallSeconds()
            let cases: [(String, String, Int, String, String)] = [
                ("bad signature", try Self.assertion(key: Fixtures.fcmOtherKey, port: port), 400, "invalid_grant", "Invalid JWT Signature"),
                ("wrong scope", try Self.assertion(port: port, scope: "https://www.googleapis.com/auth/cloud-platform"), 400, "invalid_scope", "scope"),
                ("wrong aud", try Self.assertion(port: port, audience: "https://oauth2.googleapis.com/token"), 400, "invalid_grant", "audience"),
                ("expired exp", try Self.assertion(port: port, issuedAt: now - 4000), 400, "invalid_grant", "short-lived"),
                ("exp beyond an hour", try Self.assertion(port: port, lifetime: 3601), 400, "invalid_grant", "short-lived"),
                ("future iat", try Self.assertion(port: port, issuedAt: now + 600), 400, "invalid_grant", "short-lived"),
                ("unknown account", try Self.assertion(port: port, issuer: "who@else.iam.gserviceaccount.com"), 400, "invalid_grant", "account not found"),
                ("garbage", "not.a.jwt", 400, "invalid_grant", "decode"),
            ]
            for (name, assertion, status, error, words) in cases {
                let response = try Curl.one(port: port, Self.tokenRequest(assertion: assertion))
                #expect(response.status == status, "\(name): \(response.body)")
                let json = response.json
                #expect(json?["error"] as? String == error, "\(name): \(response.body)")
                #expect((json?["error_description"] as? String)?.contains(words) == true, "\(name): \(response.body)")
                #expect(json?["access_token"] == nil, "\(name)")
            }
            let wrongGrant = try Curl.one(port: port, Self.tokenRequest(assertion: try Self.assertion(port: port), grantType: "client_credentials"))
            #expect(wrongGrant.status == 400)
            #expect(wrongGrant.json?["error"] as? String == "unsupported_grant_type")
            #expect(server.fcmRequests().allSatisfy { $0.endpoint == "token" && $0.status == 400 })
            #expect(server.fcmRequests().count == cases.count + 1)
        }
    }

    /// Each malformed send → (status, google.rpc status, words of the message).
    @Test func rejectsBadMessages() async throws {
        try await withMock { _, port in
            let token = try Self.accessToken(port: port).value
            let t = Self.registrationToken
            let cases: [(String, TestRequest, Int, String, String)] = [
                ("wrong project", Self.sendRequest(accessToken: token, project: "someone-else", body: Self.message()), 403, "PERMISSION_DENIED", "someone-else"),
                ("two targets", Self.sendRequest(accessToken: token, body: #"{"message":{"token":"\#(t)","topic":"news"}}"#), 400, "INVALID_ARGUMENT", "exactly one"),
                ("no target", Self.sendRequest(accessToken: token, body: #"{"message":{"data":{"k":"v"}}}"#), 400, "INVALID_ARGUMENT", "exactly one"),
                ("non-string data", Self.sendRequest(accessToken: token, body: #"{"message":{"token":"\#(t)","data":{"k":"v","n":1}}}"#), 400, "INVALID_ARGUMENT", #"message.data["n"].value"#),
                ("reserved data key", Self.sendRequest(accessToken: token, body: #"{"message":{"token":"\#(t)","data":{"from":"me"}}}"#), 400, "INVALID_ARGUMENT", "reserved"),
                ("unknown message field", Self.sendRequest(accessToken: token, body: #"{"message":{"token":"\#(t)","badfield":{}}}"#), 400, "INVALID_ARGUMENT", #"Unknown name "badfield" at 'message'"#),
                ("notification not an object", Self.sendRequest(accessToken: token, body: #"{"message":{"token":"\#(t)","notification":"hi"}}"#), 400, "INVALID_ARGUMENT", "message.notification"),
                ("payload over 4096 bytes", Self.sendRequest(accessToken: token, body: Self.message(payloadBytes: 4097)), 400, "INVALID_ARGUMENT", "too big"),
                ("no message wrapper", Self.sendRequest(accessToken: token, body: #"{"token":"\#(t)"}"#), 400, "INVALID_ARGUMENT", "Unknown name"),
                ("not JSON", Self.sendRequest(accessToken: token, body: "{"), 400, "INVALID_ARGUMENT", "Invalid JSON"),
                ("bad token charset", Self.sendRequest(accessToken: token, body: Self.message(token: "a b")), 400, "INVALID_ARGUMENT", "registration token is not a valid"),
                ("unknown access token", Self.sendRequest(accessToken: "ya29.forged", body: Self.message()), 401, "UNAUTHENTICATED", "invalid authentication credentials"),
                ("no authorization", TestRequest(method: "POST", path: "/v1/projects/\(Fixtures.fcmProjectID)/messages:send", headers: [("content-type", "application/json")], body: Array(Self.message().utf8)), 401, "UNAUTHENTICATED", "invalid authentication"),
                ("bad path", Self.sendRequest(accessToken: token, body: Self.message()).with(path: "/v1/projects/\(Fixtures.fcmProjectID)/messages:sendAll"), 404, "NOT_FOUND", "not found"),
            ]
            for (name, request, status, googleStatus, words) in cases {
                let response = try Curl.one(port: port, request)
                #expect(response.status == status, "\(name): \(response.body)")
                let json = response.json?["error"] as? [String: Any]
                #expect(json?["status"] as? String == googleStatus, "\(name): \(response.body)")
                #expect(json?["code"] as? Int == status, "\(name)")
                #expect((json?["message"] as? String)?.contains(words) == true, "\(name): \(response.body)")
            }
        }
    }

    /// Google's limit is the payload's: 4096 bytes without the target, however long the token.
    @Test func payloadAtTheLimitIsSent() async throws {
        try await withMock { _, port in
            let token = try Self.accessToken(port: port).value
            let body = Self.message(payloadBytes: 4096)
            #expect(body.utf8.count > 4096 + Self.registrationToken.utf8.count)
            #expect(try Curl.one(port: port, Self.sendRequest(accessToken: token, body: body)).status == 200)
        }
    }

    /// A message to `registrationToken` whose payload (the message without `token`, compact) is `payloadBytes` long.
    static func message(payloadBytes: Int) -> String {
        let frame = #"{"data":{"k":""}}"#.utf8.count
        return #"{"message":{"token":"\#(registrationToken)","data":{"k":"\#(String(repeating: "x", count: payloadBytes - frame))"}}}"#
    }

    @Test func expiredAccessTokensGet401() async throws {
        let clock = TestClock()
        try await withMock({ $0.clock = clock.closure }) { server, port in
            let token = try Self.accessToken(port: port, issuedAt: clock.now).value
            #expect(try Curl.one(port: port, Self.sendRequest(accessToken: token, body: Self.message())).status == 200)
            clock.advance(by: 3600)
            let late = try Curl.one(port: port, Self.sendRequest(accessToken: token, body: Self.message()))
            #expect(late.status == 401)
            #expect((late.json?["error"] as? [String: Any])?["status"] as? String == "UNAUTHENTICATED")
            // Expiring by hand, through the control API.
            let fresh = try Self.accessToken(port: port, issuedAt: clock.now).value
            #expect(try Curl.one(port: port, Self.sendRequest(accessToken: fresh, body: Self.message())).status == 200)
            let expire = try Curl.one(port: port, TestRequest(method: "POST", path: "/_mock/fcm/expire-access-tokens", headers: [], body: nil))
            #expect(expire.status == 200)
            #expect(try Curl.one(port: port, Self.sendRequest(accessToken: fresh, body: Self.message())).status == 401)
            // A shorter lifetime for new tokens, in process and over the control API.
            server.setFCMAccessTokenLifetime(seconds: 30)
            #expect(try Self.accessToken(port: port, issuedAt: clock.now).expiresIn == 30)
            let lifetime = try Curl.one(port: port, TestRequest(method: "POST", path: "/_mock/fcm/access-token-lifetime", headers: [],
                                                                 body: Array(#"{"seconds":45}"#.utf8)))
            #expect(lifetime.status == 200)
            let short = try Self.accessToken(port: port, issuedAt: clock.now)
            #expect(short.expiresIn == 45)
            clock.advance(by: 44)
            #expect(try Curl.one(port: port, Self.sendRequest(accessToken: short.value, body: Self.message())).status == 200)
            clock.advance(by: 1)
            #expect(try Curl.one(port: port, Self.sendRequest(accessToken: short.value, body: Self.message())).status == 401)
            let zero = try Curl.one(port: port, TestRequest(method: "POST", path: "/_mock/fcm/access-token-lifetime", headers: [],
                                                             body: Array(#"{"seconds":0}"#.utf8)))
            #expect(zero.status == 400)
            // reset() forgets issued tokens and rules.
            server.reset()
            #expect(server.fcmRequests().isEmpty)
            #expect(try Curl.one(port: port, Self.sendRequest(accessToken: short.value, body: Self.message())).status == 401)
        }
    }

    /// Every error of the issue's table, injected by a rule: status, body and Retry-After as FCM sends them.
    @Test func errorInjections() async throws {
        try await withMock { server, port in
            let token = try Self.accessToken(port: port).value
            let cases: [(MockFCMAnswer, Int, MockFCMErrorCode, String?)] = [
                (.error(.unregistered), 404, .unregistered, nil),
                (.invalidRegistrationToken, 400, .invalidArgument, nil),
                (.error(.invalidArgument), 400, .invalidArgument, nil),
                (.error(.senderIDMismatch), 403, .senderIDMismatch, nil),
                (.error(.quotaExceeded, retryAfter: "37"), 429, .quotaExceeded, "37"),
                (.error(.unavailable, retryAfter: "5"), 503, .unavailable, "5"),
                (.error(.internalError), 500, .internalError, nil),
                (.error(.unspecifiedError), 500, .unspecifiedError, nil),
                (.error(.thirdPartyAuthError), 401, .thirdPartyAuthError, nil),
                (.error(.permissionDenied), 403, .permissionDenied, nil),
                (.error(.unauthenticated), 401, .unauthenticated, nil),
                (.error(.notFound), 404, .notFound, nil),
            ]
            for (i, (answer, status, code, retryAfter)) in cases.enumerated() {
                let target = Self.registrationToken + "-\(i)"
                server.setFCMRule(forToken: target, MockFCMTokenRule(sequence: [answer]))
                let response = try Curl.one(port: port, Self.sendRequest(accessToken: token, body: Self.message(token: target)))
                #expect(response.status == status, "\(code.rawValue): \(response.body)")
                let error = try #require(response.json?["error"] as? [String: Any], "\(code.rawValue): \(response.body)")
                #expect(error["code"] as? Int == status)
                #expect(error["status"] as? String == code.googleStatus, "\(code.rawValue): \(response.body)")
                // FCM names its own codes in an FcmError detail; bare google.rpc statuses come without one.
                let details = error["details"] as? [[String: Any]]
                let bare = [MockFCMErrorCode.permissionDenied, .unauthenticated, .notFound].contains(code)
                #expect(details?.first?["errorCode"] as? String == (bare ? nil : code.rawValue), "\(code.rawValue): \(response.body)")
                #expect(response.headers["retry-after"] == retryAfter, "\(code.rawValue)")
                // The rule's sequence is used up: the next message to the token goes through.
                #expect(try Curl.one(port: port, Self.sendRequest(accessToken: token, body: Self.message(token: target))).status == 200)
            }
            // Rules over the control API.
            let rule = try Curl.one(port: port, TestRequest(method: "POST", path: "/_mock/fcm/rules", headers: [],
                body: Array(#"{"token":"\#(Self.registrationToken)","rule":{"then":{"kind":"error","code":"QUOTA_EXCEEDED","retryAfter":"9"}}}"#.utf8)))
            #expect(rule.status == 200, "\(rule.body)")
            let quota = try Curl.one(port: port, Self.sendRequest(accessToken: token, body: Self.message()))
            #expect(quota.status == 429)
            #expect(quota.headers["retry-after"] == "9")
        }
    }
}

extension TestRequest {
    func with(path: String) -> TestRequest {
        var copy = self
        copy.path = path
        return copy
    }
}
