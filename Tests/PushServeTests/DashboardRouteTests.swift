import Foundation
import PushServe
import PushStore
import PushTestSupport
import Testing
import PGClient

/// The dashboard served by `pushq serve` over HTTP on 127.0.0.1: pages, scopes, the session's
/// CSRF token on every action, the audit log, escaping of what the database holds.
@Suite("Dashboard routes")
struct DashboardRouteTests {
    static let token = String(repeating: "7a", count: 32)

    /// Inserts `n` rows of `status` for `token` and returns their ids.
    @discardableResult
    static func insert(_ db: PGConnection, _ n: Int, status: String = "queued", token: String = token, lane: String = "default",
                       metadata: String? = nil, payload: String = #"{"aps":{"alert":"hi"}}"#) async throws -> [Int64] {
        let r = try await db.query("""
            INSERT INTO pushq.notifications (device_token, payload, status, lane, metadata, finished_at)
            SELECT $1, $6::json, $2, $3, $4::jsonb, CASE WHEN $2 IN ('sent', 'failed') THEN now() END FROM generate_series(1, $5)
            RETURNING id
            """, [token, status, lane, metadata, n, payload])
        return try (0..<r.count).map { try r.decode(Int64.self, $0, 0) ?? 0 }
    }

    /// An action's form posted with the bearer key of `scope` (no session: no CSRF token needed).
    static func form(_ serve: ServeHarness, _ scope: String, _ body: String) async throws -> HTTPAnswer {
        try await HTTPAnswer.request(port: serve.port, "POST", "/dashboard/actions",
                                     headers: ["Authorization": "Bearer " + (serve.keys[scope] ?? ""), "Content-Type": "application/x-www-form-urlencoded"],
                                     body: Array(body.utf8))
    }

    /// The value of `name="csrf_token"` in a page.
    static func csrf(_ html: String) -> String? {
        html.components(separatedBy: "name=\"\(SessionCookie.csrfFieldName)\" value=\"").dropFirst().first?.components(separatedBy: "\"").first
    }

    /// Logs in with the key of `scope` through the form; the session cookie's `name=value`.
    static func login(_ serve: ServeHarness, _ scope: String) async throws -> String {
        let answer = try await HTTPAnswer.request(port: serve.port, "POST", "/login",
                                                  headers: ["Content-Type": "application/x-www-form-urlencoded"],
                                                  body: Array("key=\(serve.keys[scope] ?? "")&next=%2Fdashboard".utf8))
        #expect(answer.status == 303 && answer.headers["location"] == "/dashboard")
        let cookie = try #require(answer.headers["set-cookie"]?.components(separatedBy: ";").first)
        #expect(cookie.hasPrefix(SessionCookie.name + "="))
        return cookie
    }

    /// without a key a page goes to the login form; with a read key the overview shows the table's counts
    /// under a strict Content-Security-Policy, and no action
    @Test("without a key a page goes to the login form; a read key sees the overview's counts under a strict CSP, and no action")
    func overviewForReader() async throws {
        try await ServeHarness.with { serve, db in
            try await Self.insert(db, 4)
            try await Self.insert(db, 3, status: "sent")
            // As the worker that sent them tallied them (pushq.outcomes): the chart's sends.
            try await db.query("""
                INSERT INTO pushq.outcomes (status, minute, lane, worker, reason, rows)
                VALUES ('sent', date_trunc('minute', now()), 'default', 'w', '', 3)
                """)
            let anonymous = try await HTTPAnswer.request(port: serve.port, "GET", "/dashboard", headers: ["Accept": "text/html"])
            #expect(anonymous.status == 303 && anonymous.headers["location"]?.hasPrefix("/login") == true)
            let page = try await serve.call("GET", "/dashboard", key: "read", headers: ["Accept": "text/html"])
            #expect(page.status == 200 && page.headers["content-type"] == "text/html; charset=utf-8")
            #expect(page.headers["content-security-policy"]?.contains("default-src 'none'; script-src 'self'") == true)
            #expect(page.body.contains("id=\"count-queued\">4<") && page.body.contains("id=\"count-sent\">3<"))
            #expect(page.body.contains("id=\"hour-sent\">3<"))
            #expect(!page.body.contains("/dashboard/confirm"), "a read key is offered no action")
            let script = try await serve.call("GET", "/dashboard/assets/dashboard.js", key: "read")
            #expect(script.status == 200 && script.body.contains("data-refresh") == false && script.body.contains("dataset.refresh"))
            let root = try await serve.call("GET", "/", key: "read")
            #expect(root.status == 303 && root.headers["location"] == "/dashboard")
        }
    }

    @Test("a read key may not cancel: the confirmation page and the action answer 403, and the row still waits")
    func readKeyCannotAct() async throws {
        try await ServeHarness.with { serve, db in
            let id = try #require(try await Self.insert(db, 1).first)
            let confirm = try await serve.call("GET", "/dashboard/confirm?action=cancel&id=\(id)", key: "read")
            #expect(confirm.status == 403 && confirm.body.contains("needs enqueue or admin"))
            let post = try await Self.form(serve, "read", "action=cancel&id=\(id)")
            #expect(post.status == 403)
            let lane = try await Self.form(serve, "enqueue", "action=pause-lane&lane=default")
            #expect(lane.status == 403, "pausing a lane needs admin")
            #expect(try await db.query("SELECT status FROM pushq.notifications WHERE id = $1", [id]).string(0, 0) == "queued")
            #expect(try await db.query("SELECT count(*) FROM pushq.lanes WHERE paused").decode(Int.self, 0, 0) == 0)
        }
    }

    /// a session's action needs its CSRF token: without it 403 and nothing changes; with the page's token the
    /// row is cancelled, audited with the key's name, and the row's page says so
    @Test("a session's action needs its CSRF token: without it 403 and nothing changes; with it the row is cancelled and audited")
    func sessionCancelNeedsCSRF() async throws {
        try await ServeHarness.with { serve, db in
            let id = try #require(try await Self.insert(db, 1).first)
            let cookie = try await Self.login(serve, "enqueue")
            let confirm = try await HTTPAnswer.request(port: serve.port, "GET", "/dashboard/confirm?action=cancel&id=\(id)", headers: ["Cookie": cookie])
            #expect(confirm.status == 200 && confirm.body.contains("This will cancel notification \(id)"))
            let csrf = try #require(Self.csrf(confirm.body))
            let form = ["Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"]
            let forged = try await HTTPAnswer.request(port: serve.port, "POST", "/dashboard/actions", headers: form, body: Array("action=cancel&id=\(id)".utf8))
            #expect(forged.status == 403)
            let wrong = try await HTTPAnswer.request(port: serve.port, "POST", "/dashboard/actions", headers: form,
                                                     body: Array("action=cancel&id=\(id)&csrf_token=\(String(repeating: "0", count: csrf.count))".utf8))
            #expect(wrong.status == 403)
            #expect(try await db.query("SELECT status FROM pushq.notifications WHERE id = $1", [id]).string(0, 0) == "queued")
            let done = try await HTTPAnswer.request(port: serve.port, "POST", "/dashboard/actions", headers: form,
                                                    body: Array("action=cancel&id=\(id)&csrf_token=\(csrf)".utf8))
            #expect(done.status == 303)
            #expect(try await db.query("SELECT status FROM pushq.notifications WHERE id = $1", [id]).string(0, 0) == "cancelled")
            let audit = try await db.query("SELECT actor, action, target, rows, via FROM pushq.audit_log ORDER BY id DESC LIMIT 1")
            #expect((0..<5).map { audit.string(0, $0) ?? "" } == ["test-enqueue", "notification.cancel", "notification \(id)", "1", "dashboard"])
            let back = try await HTTPAnswer.request(port: serve.port, "GET", try #require(done.headers["location"]), headers: ["Cookie": cookie])
            #expect(back.body.contains("Notification \(id) cancelled.") && back.body.contains("id=\"column-status\">cancelled<"))
            let again = try await HTTPAnswer.request(port: serve.port, "POST", "/dashboard/actions", headers: form,
                                                     body: Array("action=cancel&id=\(id)&csrf_token=\(csrf)".utf8))
            let page = try await HTTPAnswer.request(port: serve.port, "GET", try #require(again.headers["location"]), headers: ["Cookie": cookie])
            #expect(page.body.contains("was not cancelled: it is cancelled now"))
        }
    }

    @Test("an admin pauses and resumes a lane, cancels its waiting rows and lifts a hold; each is audited")
    func adminActions() async throws {
        try await ServeHarness.with { serve, db in
            try await Self.insert(db, 5, lane: "promo")
            try await Self.insert(db, 2, lane: "default")
            try await db.query("""
                INSERT INTO pushq.credential_pauses (credential, environment, reason, message, paused_until)
                VALUES ('default', 'production', 'InvalidProviderToken', 'check the key', now() + interval '10 minutes')
                """)
            let overview = try await serve.call("GET", "/dashboard", key: "admin")
            #expect(overview.body.contains("/dashboard/confirm?action=pause-lane&amp;lane=promo"))
            #expect(overview.body.contains("/dashboard/confirm?action=lift-hold&amp;credential=default&amp;environment=production"))
            func post(_ body: String) async throws -> HTTPAnswer {
                try await Self.form(serve, "admin", body)
            }
            // promo has no row of pushq.lanes: it follows default's rank and cap, and keeps them
            // through a pause and a resume (the pause's row copies them, the resume deletes it).
            try await db.query("UPDATE pushq.lanes SET rank = 7, max_per_second = 20 WHERE name = 'default'")
            #expect(try await post("action=pause-lane&lane=promo").status == 303)
            let paused = try await db.query("SELECT paused, rank, max_per_second FROM pushq.lanes WHERE name = 'promo'")
            #expect(try paused.decode(Bool.self, 0, 0) == true && paused.string(0, 1) == "7" && paused.string(0, 2) == "20")
            #expect(try await post("action=resume-lane&lane=promo").status == 303)
            #expect(try await db.query("SELECT 1 FROM pushq.lanes WHERE name = 'promo'").count == 0)
            let cancelled = try await post("action=cancel-lane&lane=promo")
            #expect(cancelled.headers["location"]?.contains("done=5") == true)
            #expect(try await db.query("SELECT count(*) FROM pushq.notifications WHERE status = 'queued'").decode(Int.self, 0, 0) == 2)
            #expect(try await post("action=lift-hold&credential=default&environment=production").status == 303)
            #expect(try await db.holds().isEmpty)
            let log = try await db.query("SELECT action || ' ' || target || ' ' || rows FROM pushq.audit_log WHERE actor = 'test-admin' ORDER BY id")
            #expect((0..<log.count).map { log.string($0, 0) ?? "" }
                    == ["lane.pause lane promo 1", "lane.resume lane promo 1", "lane.cancel lane promo 5", "hold.lift hold default production 1"])
        }
    }

    /// search: an id opens its page, a token lists its rows, a user their devices, key=value the rows with
    /// that metadata; what the rows hold is escaped
    @Test("search: an id opens its page, a token lists its rows, a user their devices, key=value the rows with that metadata")
    func search() async throws {
        try await ServeHarness.with { serve, db in
            let hostile = "<script>alert(1)</script>"
            let id = try #require(try await Self.insert(db, 1, metadata: #"{"campaign":"<script>alert(1)</script>"}"#,
                                                        payload: #"{"aps":{"alert":"</pre><script>alert(1)</script>"}}"#).first)
            try await db.query("INSERT INTO pushq.devices (device_token, user_ref) VALUES ($1, $2)", [Self.token, hostile])
            let byID = try await serve.call("GET", "/dashboard/search?q=\(id)", key: "read")
            #expect(byID.status == 303 && byID.headers["location"] == "/dashboard/notifications/\(id)")
            let page = try await serve.call("GET", "/dashboard/notifications/\(id)", key: "read")
            #expect(page.status == 200 && !page.body.contains(hostile) && page.body.contains("&lt;/pre&gt;&lt;script&gt;"))
            let text = page.body.replacingOccurrences(of: #"href="[^"]*""#, with: "", options: .regularExpression)
            #expect(!text.contains(Self.token) && text.contains("7a7a7a7a…7a7a7a"), "the token is shortened on the page (whole only in the link that searches it)")
            let byToken = try await serve.call("GET", "/dashboard/search?q=\(Self.token)", key: "read")
            #expect(byToken.body.contains("href=\"/dashboard/notifications/\(id)\"") && !byToken.body.contains(hostile))
            let byUser = try await serve.call("GET", "/dashboard/users?ref=%3Cscript%3Ealert(1)%3C%2Fscript%3E", key: "read")
            #expect(byUser.body.contains("href=\"/dashboard/notifications/\(id)\"") && byUser.body.contains("User &lt;script&gt;"))
            let byMeta = try await serve.call("GET", "/dashboard/search?q=campaign%3D%3Cscript%3Ealert(1)%3C%2Fscript%3E", key: "read")
            #expect(byMeta.body.contains("href=\"/dashboard/notifications/\(id)\"") && !byMeta.body.contains(hostile))
            let missing = try await serve.call("GET", "/dashboard/notifications/\(id + 99)", key: "read")
            #expect(missing.status == 404)
        }
    }
}
