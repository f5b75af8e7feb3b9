import Foundation
import PushCore
import PushServe
import PushStore
import PushTestSupport
import Testing

/// Keys, scopes, the login form, sessions, CSRF and the failed-login throttle.
@Suite("API: keys, scopes and sessions")
struct AuthTests {
    static let enqueueBody = #"{"device_token":"\#(String(repeating: "a", count: 64))","payload":{}}"#
    static let deviceBody = #"{"device_token":"\#(String(repeating: "b", count: 64))","user_ref":"u"}"#

    /// every scope against every kind of request: read reads only, enqueue reads and enqueues, devices
    /// registers only, admin does all; no key, a wrong key and a revoked key are 401
    @Test("every scope against every kind of request; no key, a wrong key and a revoked key are 401")
    func scopes() async throws {
        try await ServeHarness.with { serve, db in
            // A device for user u, so that its fan-out makes a row (a user with none is 404).
            try await db.query("INSERT INTO pushq.devices (device_token, user_ref, topic) VALUES ($1, 'u', 'com.example.app')",
                               [String(repeating: "d", count: 64)])
            // (method, path, body) → the scopes allowed.
            let requests: [(String, String, String?, Set<String>)] = [
                ("GET", "/api/v1/status", nil, ["read", "enqueue", "admin"]),
                ("POST", "/api/v1/notifications", Self.enqueueBody, ["enqueue", "admin"]),
                ("POST", "/api/v1/users/u/notifications", #"{"payload":{}}"#, ["enqueue", "admin"]),
                ("PUT", "/api/v1/devices", Self.deviceBody, ["devices", "admin"]),
                ("GET", "/api/v1/users/u/devices", nil, ["read", "enqueue", "devices", "admin"]),
                ("GET", "/api/v1/openapi.json", nil, ["read", "enqueue", "devices", "admin"]),
            ]
            for (method, path, body, allowed) in requests {
                for scope in ["read", "enqueue", "devices", "admin"] {
                    let answer = try await serve.call(method, path, key: scope, json: body)
                    if allowed.contains(scope) {
                        #expect((200...299).contains(answer.status), "\(scope) \(method) \(path): \(answer.status) \(answer.body)")
                    } else {
                        #expect(answer.status == 403, "\(scope) \(method) \(path): \(answer.status)")
                        #expect(try answer.error("code") == "forbidden")
                    }
                }
                for key in [nil, "revoked", "pq_not-a-key"] {
                    let answer = try await serve.call(method, path, key: key, json: body)
                    #expect(answer.status == 401, "\(key ?? "no key") \(method) \(path)")
                    #expect(answer.headers["www-authenticate"] == "Bearer")
                }
            }
            #expect(try await serve.call("GET", "/healthz", key: nil).body == "ok\n", "/healthz needs no key")
        }
    }

    @Test("the last use of a key is noted; a revoked key is refused at its next request")
    func lastUsedAndRevoke() async throws {
        try await ServeHarness.with { serve, db in
            #expect(try await db.query("SELECT last_used_at IS NULL FROM pushq.api_keys WHERE name = 'test-read'").string(0, 0) == "t")
            #expect(try await serve.call("GET", "/api/v1/status", key: "read").status == 200)
            #expect(try await db.query("SELECT last_used_at IS NOT NULL FROM pushq.api_keys WHERE name = 'test-read'").string(0, 0) == "t")
            _ = try await db.revokeAPIKey(name: "test-read")
            #expect(try await serve.call("GET", "/api/v1/status", key: "read").status == 401)
            let stored = try await db.query("SELECT key_hash FROM pushq.api_keys WHERE name = 'test-admin'").string(0, 0)
            #expect(stored == APIKeySecret.hash(serve.keys["admin"]!) && stored != serve.keys["admin"], "the table keeps the SHA-256, not the key")
        }
    }

    /// login form: a wrong key 401 with the form again; the right key 303 to next with a Secure, HttpOnly,
    /// SameSite=Strict cookie that then reads; a form action without the CSRF token 403, with it 200; another
    /// Origin 403; logout ends the session
    @Test("login form: wrong key 401, right key 303 with a strict cookie; actions need the CSRF token; other Origin 403; logout")
    func session() async throws {
        try await ServeHarness.with { serve, db in
            let form = try await HTTPAnswer.request(port: serve.port, "GET", "/login?next=/api/v1/status")
            #expect(form.status == 200 && form.body.contains("<form method=\"post\" action=\"/login\">"))
            #expect(form.body.contains(#"name="next" value="/api/v1/status""#))
            let wrong = try await login(serve, key: "pq_wrong", next: "/x")
            #expect(wrong.status == 401 && wrong.headers["set-cookie"] == nil && wrong.body.contains("not valid"))
            let answer = try await login(serve, key: serve.keys["enqueue"]!, next: "/api/v1/status")
            #expect(answer.status == 303 && answer.headers["location"] == "/api/v1/status")
            let setCookie = try #require(answer.headers["set-cookie"])
            for attribute in ["HttpOnly", "Secure", "SameSite=Strict", "Path=/"] { #expect(setCookie.contains(attribute), "\(setCookie)") }
            let token = String(setCookie.split(separator: ";")[0].dropFirst("pushq-session=".count))
            #expect(try await db.query("SELECT count(*) FROM pushq.api_sessions WHERE token_hash = $1", [APIKeySecret.hash(token)]).string(0, 0) == "1")
            let cookie = ["Cookie": "pushq-session=\(token)"]
            #expect(try await serve.call("GET", "/api/v1/status", key: nil, headers: cookie).status == 200)

            let made = try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: #"{"device_token":"\#(String(repeating: "c", count: 64))","payload":{}}"#)
            let id = try #require(try made.json["id"] as? Int)
            let bare = try await serve.call("POST", "/api/v1/notifications/\(id)/cancel", key: nil, headers: cookie)
            #expect(try bare.status == 403 && (bare.error("code")) == "csrf")
            let csrf = SessionCookie.csrfToken(forSession: token)
            var withToken = cookie
            withToken["X-CSRF-Token"] = csrf
            withToken["Origin"] = "http://evil.example"
            #expect(try await serve.call("POST", "/api/v1/notifications/\(id)/cancel", key: nil, headers: withToken).status == 403)
            withToken["Origin"] = "http://127.0.0.1:\(serve.port)"
            let viaForm = try await HTTPAnswer.request(port: serve.port, "POST", "/api/v1/notifications/\(id)/cancel",
                                                       headers: cookie.merging(["Content-Type": "application/x-www-form-urlencoded"]) { a, _ in a },
                                                       body: Array("csrf_token=\(csrf)".utf8))
            #expect(viaForm.status == 200, "the form field carries it: \(viaForm.body)")
            let audit = try await db.query("SELECT actor, via FROM pushq.audit_log WHERE action = 'notification.cancel'")
            #expect(audit.string(0, 0) == "test-enqueue" && audit.string(0, 1) == "dashboard")

            let out = try await HTTPAnswer.request(port: serve.port, "POST", "/logout", headers: cookie.merging(["X-CSRF-Token": csrf]) { a, _ in a })
            #expect(out.status == 303 && out.headers["set-cookie"]?.contains("Max-Age=0") == true)
            #expect(try await serve.call("GET", "/api/v1/status", key: nil, headers: cookie).status == 401)
            let page = try await serve.call("GET", "/somewhere", key: nil, headers: cookie.merging(["Accept": "text/html"]) { a, _ in a })
            #expect(page.status == 303 && page.headers["location"] == "/login?next=%2Fsomewhere", "a browser is sent to the form")
            #expect(try await login(serve, key: serve.keys["read"]!, next: "//evil.example/").headers["location"] == "/", "never a redirect elsewhere")
        }
    }

    @Test("24 wrong keys, bearer and form, with and without X-Forwarded-For, lock out no valid key: enqueue 201, form login 303")
    func wrongKeysNeverLockOutAValidKey() async throws {
        // Behind a proxy said to terminate TLS, so that X-Forwarded-For is there to be (mis)used:
        // 12 wrong keys name 10.0.0.9 as the client, 12 come from the peer alone (one NAT, one node's
        // SNAT), each more than the 10 a minute the old per-address throttle allowed.
        try await ServeHarness.with({ $0.proxyTerminatesTLS = true }) { serve, _ in
            let forged = ["X-Forwarded-For": "10.0.0.9"]
            for i in 0..<24 {
                let headers = i % 4 < 2 ? forged : [:]
                let answer = i % 2 == 0 ? try await login(serve, key: "pq_wrong\(i)", next: "/", headers: headers)
                                        : try await serve.call("GET", "/api/v1/status", key: "pq_wrong\(i)", headers: headers)
                #expect(answer.status == 401, "wrong key \(i): \(answer.status)")
            }
            for headers in [forged, [:]] {
                let enqueue = try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: Self.enqueueBody, headers: headers)
                #expect(enqueue.status == 201, "a valid key after wrong ones: \(enqueue.status) \(enqueue.body)")
                let form = try await login(serve, key: serve.keys["admin"]!, next: "/", headers: headers)
                #expect(form.status == 303 && form.headers["set-cookie"]?.hasPrefix("pushq-session=") == true, "the form: \(form.status)")
            }
        }
    }

    @Test("a forged X-Forwarded-For from an untrusted peer is not the client: serve logs the TCP peer")
    func forgedForwardedForIsNotTheClient() async throws {
        let log = CapturedLog()
        try await ServeHarness.with(logger: log.logger(), { $0.proxyTerminatesTLS = true }) { serve, _ in
            let wrong = try await serve.call("GET", "/api/v1/status", key: "pq_wrong", headers: ["X-Forwarded-For": "203.0.113.9"])
            #expect(wrong.status == 401)
            let refused = log.lines("refused an API key")
            #expect(refused.count == 1 && refused.first?.metadata["serve.client"] == "127.0.0.1",
                    "the client is the peer, 127.0.0.1: \(refused.map(\.metadata))")
        }
    }

    @Test("through a trusted proxy the client is the first untrusted hop from the right of X-Forwarded-For")
    func trustedProxyForwardedFor() async throws {
        let log = CapturedLog()
        // The test's peer, 127.0.0.1, is the trusted proxy; 10.0.0.0/8 a second hop of it.
        try await ServeHarness.with(logger: log.logger(), { $0.trustedProxies = try! TrustedProxies(parsing: "127.0.0.1, 10.0.0.0/8") }) { serve, _ in
            let wrong = try await serve.call("GET", "/api/v1/status", key: "pq_wrong", headers: ["X-Forwarded-For": "198.51.100.7, 203.0.113.9, 10.2.3.4"])
            #expect(wrong.status == 401)
            let login = try await login(serve, key: "pq_wrong", next: "/", headers: ["X-Forwarded-For": "203.0.113.10"])
            #expect(login.status == 401)
            #expect(log.lines("refused an API key").map { $0.metadata["serve.client"] } == ["203.0.113.9"], "\(log.all.map(\.metadata))")
            #expect(log.lines("refused a dashboard login").map { $0.metadata["serve.client"] } == ["203.0.113.10"])
        }
    }

    @Test("beyond the budget of wrong keys a wrong key is 429 with Retry-After, counted not logged; valid keys still pass")
    func failedKeyBudget() async throws {
        let log = CapturedLog()
        // A budget of 3 that refills once in 1 000 s: no refill can happen during the test.
        try await ServeHarness.with(logger: log.logger(), { $0.failedKeyBudget = FailedKeyBudget(burst: 3, perSecond: 0.001) }) { serve, _ in
            for i in 0..<3 { #expect(try await serve.call("GET", "/api/v1/status", key: "pq_wrong\(i)").status == 401) }
            let bearer = try await serve.call("GET", "/api/v1/status", key: "pq_wrong")
            #expect(try bearer.status == 429 && bearer.error("code") == "too_many_failed_logins", "\(bearer.status) \(bearer.body)")
            #expect(Int(bearer.headers["retry-after"] ?? "") ?? 0 >= 1)
            let form = try await login(serve, key: "pq_wrong", next: "/")
            #expect(form.status == 429 && form.headers["set-cookie"] == nil && Int(form.headers["retry-after"] ?? "") ?? 0 >= 1)
            #expect(try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: Self.enqueueBody).status == 201)
            let valid = try await login(serve, key: serve.keys["read"]!, next: "/")
            #expect(valid.status == 303 && valid.headers["set-cookie"]?.hasPrefix("pushq-session=") == true)
            #expect(log.lines("refused an API key").count == 3 && log.lines("refused a dashboard login").isEmpty, "the 429s are not logged")
        }
    }

    func login(_ serve: ServeHarness, key: String, next: String, headers: [String: String] = [:]) async throws -> HTTPAnswer {
        let body = "key=\(key.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&next=\(next.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
        return try await HTTPAnswer.request(port: serve.port, "POST", "/login",
                                            headers: headers.merging(["Content-Type": "application/x-www-form-urlencoded"]) { a, _ in a },
                                            body: Array(body.utf8))
    }
}
