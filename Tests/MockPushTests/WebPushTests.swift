import Foundation
import MockPush
import Testing

/// The mock's Web Push service over TLS + HTTP/2 (`/usr/bin/curl`): subscriptions, the push
/// service's checks and answers, the decrypted messages it records.
@Suite struct WebPushTests {
    @Test func subscriptionsLookLikePushSubscriptionToJSON() async throws {
        try await withMock { server, port in
            let a = try server.makeWebPushSubscription()
            let b = try server.makeWebPushSubscription()
            #expect(a.endpoint.hasPrefix("https://127.0.0.1:\(port)/wp/"))
            #expect(a.endpoint != b.endpoint)
            let point = base64urlDecode(a.keys.p256dh)
            #expect(point.count == 65 && point.first == 0x04)
            #expect(base64urlDecode(a.keys.auth).count == 16)
            #expect(a.keys.p256dh != b.keys.p256dh && a.keys.auth != b.keys.auth)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(a.toJSON().utf8)) as? [String: Any])
            #expect(json["endpoint"] as? String == a.endpoint)
            #expect(json["expirationTime"] is NSNull)
            #expect((json["keys"] as? [String: String]) == ["p256dh": a.keys.p256dh, "auth": a.keys.auth])
            // The same over the control API, for a process that runs pushq-mock.
            let made = try Curl.one(port: port, TestRequest(method: "POST", path: "/_mock/webpush/subscriptions", headers: [], body: Array("{}".utf8)))
            #expect(made.status == 201, "\(made.body)")
            let endpoint = try #require(made.json?["endpoint"] as? String)
            #expect(endpoint.hasPrefix("https://127.0.0.1:\(port)/wp/"))
            #expect(server.webPushSubscriptions().map(\.endpoint) == [a.endpoint, b.endpoint, endpoint])
        }
    }

    @Test func acceptsAValidMessageWith201LocationAndRecordsItsPlaintext() async throws {
        try await withMock { server, port in
            let target = try server.webPushTarget(port: port)
            let message = #"{"web_push":8030,"notification":{"title":"Hello","navigate":"https://example.com/"}}"#
            var request = try target.request(message)
            request.headers += [("urgency", "high"), ("topic", "news-1_A")]
            let response = try Curl.one(port: port, request)
            #expect(response.status == 201, "\(response.body)")
            let location = try #require(response.headers["location"])
            #expect(location.hasPrefix("https://127.0.0.1:\(port)/m/"))
            #expect(response.headers["ttl"] == "60")
            let record = try #require(server.webPushRequests().first)
            #expect(record.plaintextString == message)
            #expect(record.endpoint == target.subscription.endpoint)
            #expect(record.status == 201 && record.answerKind == "normal" && record.location == location)
            #expect(record.vapidSubject == "mailto:push@example.com")
            #expect(record.vapidAudience == "https://127.0.0.1:\(port)")
            #expect(record.vapidPublicKey == target.vapidKey.pointBase64URL)
            #expect(record.ttl == "60" && record.urgency == "high" && record.topic == "news-1_A")
            #expect(record.header("authorization") == "vapid t=<redacted>, k=\(target.vapidKey.pointBase64URL)")
            #expect(server.stats().webPushRequests == 1 && server.stats().requests == 0)
            #expect(server.stats().webPushByStatus == [201: 1])
            // The JWT never reaches the records.
            let listed = try Curl.one(port: port, TestRequest(method: "GET", path: "/_mock/webpush/requests", headers: [], body: nil))
            let jwt = try #require(request.headers.first { $0.0 == "authorization" }?.1.split(separator: ",").first)
            #expect(listed.body.contains(target.subscription.endpoint) && !listed.body.contains(jwt.dropFirst("vapid t=".count)))
        }
    }

    /// A message with no payload (RFC 8030 §5) needs no Content-Encoding and is accepted.
    @Test func acceptsAMessageWithoutPayload() async throws {
        try await withMock { server, port in
            let target = try server.webPushTarget(port: port)
            var request = try target.request()
            request.body = nil
            request.set("content-encoding", nil)
            let response = try Curl.one(port: port, request)
            #expect(response.status == 201, "\(response.body)")
            #expect(server.webPushRequests().first?.decrypted == false)
        }
    }

    /// Every refusal: what is changed in an otherwise valid request → status and reason.
    @Test func refusesEachBadRequestWithItsStatusAndReason() async throws {
        try await withMock { server, port in
            let target = try server.webPushTarget(port: port)
            let origin = "https://127.0.0.1:\(port)"
            let key = target.vapidKey
            let other = try TestP256Key.generate()
            typealias Change = (inout TestRequest) throws -> Void
            func vapid(_ make: @escaping () throws -> String) -> Change { { $0.set("authorization", try make()) } }
            let cases: [(String, Change, Int, String)] = [
                ("no TTL", { $0.set("ttl", nil) }, 400, "MissingTTL"),
                ("TTL not digits", { $0.set("ttl", "1h") }, 400, "BadTTL"),
                ("aesgcm", { $0.set("content-encoding", "aesgcm") }, 400, "BadContentEncoding"),
                ("no Content-Encoding", { $0.set("content-encoding", nil) }, 400, "BadContentEncoding"),
                ("Urgency urgent", { $0.set("urgency", "urgent") }, 400, "BadUrgency"),
                ("Topic of 33", { $0.set("topic", String(repeating: "a", count: 33)) }, 400, "BadWebPushTopic"),
                ("Topic with =", { $0.set("topic", "abc=") }, 400, "BadWebPushTopic"),
                ("body of 4097", { $0.body = [UInt8](repeating: 1, count: 4097) }, 413, "PayloadTooLarge"),
                ("tampered body", { $0.body![$0.body!.count - 1] ^= 1 }, 400, "DecryptionFailed"),
                ("delimiter 0x01", { r in
                    r.body = try WebPushTestSender.encrypt(Array("x".utf8), p256dh: target.subscription.keys.p256dh,
                                                           auth: target.subscription.keys.auth, delimiter: 0x01)
                }, 400, "DecryptionFailed"),
                ("for another subscription", { r in
                    let other = try server.makeWebPushSubscription()
                    r.body = try WebPushTestSender.encrypt(Array("x".utf8), p256dh: other.keys.p256dh, auth: other.keys.auth)
                }, 400, "DecryptionFailed"),
                ("no Authorization", { $0.set("authorization", nil) }, 403, "BadJwtToken"),
                ("Bearer scheme", { $0.set("authorization", "Bearer abc") }, 403, "BadJwtToken"),
                ("aud with a slash", vapid { try WebPushTestSender.vapid(key: key, audience: origin + "/") }, 403, "BadJwtToken"),
                ("aud another origin", vapid { try WebPushTestSender.vapid(key: key, audience: "https://fcm.googleapis.com") }, 403, "BadJwtToken"),
                ("exp past", vapid { try WebPushTestSender.vapid(key: key, audience: origin, expiresIn: -10) }, 403, "BadJwtToken"),
                ("exp beyond 24 h", vapid { try WebPushTestSender.vapid(key: key, audience: origin, expiresIn: 86_400 + 120) }, 403, "BadJwtToken"),
                ("no sub", vapid { try WebPushTestSender.vapid(key: key, audience: origin, subject: nil) }, 403, "BadJwtToken"),
                ("sub localhost", vapid { try WebPushTestSender.vapid(key: key, audience: origin, subject: "mailto:admin@localhost") }, 403, "BadJwtToken"),
                ("sub http", vapid { try WebPushTestSender.vapid(key: key, audience: origin, subject: "http://example.com") }, 403, "BadJwtToken"),
                ("sub .local", vapid { try WebPushTestSender.vapid(key: key, audience: origin, subject: "https://printer.local") }, 403, "BadJwtToken"),
                ("signed by another key", vapid { try WebPushTestSender.vapid(key: other, audience: origin, k: key.pointBase64URL) }, 403, "BadJwtToken"),
                ("alg ES384", vapid { try WebPushTestSender.vapid(key: key, audience: origin, alg: "ES384") }, 403, "BadJwtToken"),
                ("GET", { $0.method = "GET"; $0.body = nil }, 405, "MethodNotAllowed"),
                ("addressed to localhost", { $0.headers.append(("host", "localhost:\(port)")) }, 404, "NotFound"),
                ("unknown subscription", { $0.path = "/wp/nosuchsubscription" }, 404, "NotFound"),
            ]
            for (name, change, status, reason) in cases {
                var request = try target.request()
                try change(&request)
                let response = try Curl.one(port: port, request)
                #expect(response.status == status, "\(name): \(response.body)")
                #expect(response.reason == reason, "\(name): \(response.body)")
                #expect((response.json?["message"] as? String)?.isEmpty == false, "\(name): \(response.body)")
                let record = server.webPushRequests().last
                #expect(record?.status == status && record?.answerKind == "invalid" && record?.reason == reason, "\(name)")
            }
            #expect(server.stats().webPushRequests == cases.count)
            #expect(server.webPushRequests().allSatisfy { $0.plaintext == nil })
        }
    }

    @Test func subjectRulesFollowApple() {
        #expect(MockWebPushRules.subjectProblem("mailto:push@example.com") == nil)
        #expect(MockWebPushRules.subjectProblem("https://example.com/contact") == nil)
        for bad in [nil, "", "mailto: <push@example.com>", "mailto:push", "mailto:admin@localhost", "https://localhost:8443",
                    "https://box.local", "example.com", "mailto:a@b"] {
            #expect(MockWebPushRules.subjectProblem(bad) != nil, "\(bad ?? "nil")")
        }
    }

    /// A subscription made with an applicationServerKey takes only messages whose VAPID `k` is that key.
    @Test func restrictedSubscriptionRefusesOtherVAPIDKeys() async throws {
        try await withMock { server, port in
            let allowed = try TestP256Key.generate()
            var target = try server.webPushTarget(port: port, MockWebPushSubscriptionOptions(applicationServerKey: allowed.pointBase64URL))
            let refused = try Curl.one(port: port, try target.request())
            #expect(refused.status == 403 && refused.reason == "BadJwtToken", "\(refused.body)")
            target.vapidKey = allowed
            let accepted = try Curl.one(port: port, try target.request())
            #expect(accepted.status == 201, "\(accepted.body)")
        }
    }

    @Test func unsubscribedEndpointAnswers410AndUnknownOnes404() async throws {
        try await withMock { server, port in
            let target = try server.webPushTarget(port: port)
            let kept = try server.webPushTarget(port: port)
            #expect(server.unsubscribeWebPush(endpoint: target.subscription.endpoint))
            let gone = try Curl.one(port: port, try target.request())
            #expect(gone.status == 410 && gone.reason == "Gone", "\(gone.body)")
            #expect(try Curl.one(port: port, try kept.request()).status == 201)
            // Over the control API.
            let body = Array(#"{"endpoint":"\#(kept.subscription.endpoint)"}"#.utf8)
            #expect(try Curl.one(port: port, TestRequest(method: "POST", path: "/_mock/webpush/unsubscribe", headers: [], body: body)).status == 200)
            #expect(try Curl.one(port: port, try kept.request()).status == 410)
            let unknown = Array(#"{"endpoint":"https://127.0.0.1:\#(port)/wp/none"}"#.utf8)
            #expect(try Curl.one(port: port, TestRequest(method: "POST", path: "/_mock/webpush/unsubscribe", headers: [], body: unknown)).status == 404)
            #expect(server.stats().webPushByStatus == [410: 2, 201: 1])
        }
    }

    /// An endpoint on another origin (a host the test maps to the mock): requests addressed to it
    /// are served, VAPID's aud must be that origin.
    @Test func subscriptionOnAnotherOriginWantsThatOrigin() async throws {
        try await withMock { server, port in
            let target = try server.webPushTarget(port: port, MockWebPushSubscriptionOptions(origin: "https://localhost:\(port)"))
            #expect(target.subscription.endpoint.hasPrefix("https://localhost:\(port)/wp/"))
            var request = try target.request()
            let misaddressed = try Curl.one(port: port, request)
            #expect(misaddressed.status == 404, "\(misaddressed.body)")
            request.headers.append(("host", "localhost:\(port)"))
            let served = try Curl.one(port: port, request)
            #expect(served.status == 201, "\(served.body)")
            #expect(served.headers["location"]?.hasPrefix("https://localhost:\(port)/m/") == true)
        }
    }
}
