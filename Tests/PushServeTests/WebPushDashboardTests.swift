import Foundation
import PushCore
@testable import PushServe
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// The dashboard and `GET /api/v1/status` show Web Push rows and holds as their own (issue 47): rows
/// per provider and status, and each held origin in a table of its own, which an admin lifts as
/// any hold. Rows and holds are made in SQL as a producer and a worker would leave them.
@Suite("Dashboard: Web Push")
struct WebPushDashboardTests {
    static let keys = #"{"p256dh":"BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4","auth":"BTBZMqHH6r4Tts7J_aSIgg"}"#
    static let origin = "https://push.example:8443"

    static func makeRowsAndHolds(_ db: PGConnection) async throws {
        try await db.query("""
            INSERT INTO pushq.notifications (provider, device_token, webpush_keys, payload, status, finished_at)
            SELECT 'webpush', $2 || '/s/' || g, $1::jsonb, '{"title":"hi"}', s, CASE WHEN s IN ('sent', 'failed') THEN now() END
              FROM unnest(ARRAY['queued', 'queued', 'retrying', 'sent', 'sent', 'sent', 'failed']) WITH ORDINALITY AS t(s, g)
            """, [Self.keys, Self.origin])
        try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES (repeat('ab', 32), '{\"aps\":{}}')")
        try await db.query("""
            INSERT INTO pushq.credential_pauses (credential, environment, kind, reason, message, paused_until)
            VALUES ('default', $1, 'outage', 'HTTP503', 'the push service answered 503', now() + interval '40 seconds'),
                   ('default', 'production', 'credential', 'InvalidProviderToken', 'check the key', now() + interval '40 seconds')
            """, [Self.origin])
    }

    /// The overview: a table of rows per provider and status (a cell id per provider and status);
    /// the held origin in the Web Push holds table (origin, kind, reason, message, next probe, lift),
    /// not in the table of the other holds; the lift link lifts that origin's hold alone.
    @Test("overview: rows per provider and status; each held origin in its own Web Push holds table, lifted by its link")
    func overview() async throws {
        try await ServeHarness.with { serve, db in
            try await Self.makeRowsAndHolds(db)
            let page = try await serve.call("GET", "/dashboard", key: "admin", headers: ["Accept": "text/html"])
            #expect(page.status == 200)
            let html = page.body
            for (status, n) in [("queued", 2), ("sending", 0), ("retrying", 1), ("sent", 3), ("failed", 1), ("expired", 0), ("cancelled", 0)] {
                #expect(html.contains("id=\"provider-webpush-\(status)\">\(n)<"), "\(status)")
            }
            #expect(html.contains("id=\"provider-apns-queued\">1<") && !html.contains("id=\"provider-fcm-"))
            let web = try #require(html.components(separatedBy: "id=\"webpush-holds\"").dropFirst().first?.components(separatedBy: "</table>").first,
                                   "no Web Push holds table: \(html)")
            #expect(web.contains(">https://push.example:8443<") && web.contains(">HTTP503<") && web.contains("the push service answered 503"))
            #expect(web.contains("action=lift-hold&amp;credential=default&amp;environment=https%3A%2F%2Fpush.example%3A8443"), "\(web)")
            let others = try #require(html.components(separatedBy: "id=\"holds\"").dropFirst().first?.components(separatedBy: "</table>").first)
            #expect(others.contains("InvalidProviderToken") && !others.contains("push.example"), "\(others)")
            let lifted = try await DashboardRouteTests.form(serve, "admin", "action=lift-hold&credential=default&environment=https%3A%2F%2Fpush.example%3A8443")
            #expect(lifted.status == 303)
            #expect(try await db.holds().map(\.endpoint.channel) == ["production"])
            let after = try await serve.call("GET", "/dashboard", key: "read", headers: ["Accept": "text/html"])
            #expect(after.status == 200 && !after.body.contains(">https://push.example:8443<"), "the lifted origin is gone: \(after.body)")
        }
    }

    /// A row's page shows every column; `webpush_keys` with its `p256dh` alone, never the auth secret.
    @Test("a Web Push row's dashboard page shows webpush_keys with p256dh alone, never the auth secret")
    func recordWithoutAuthSecret() async throws {
        try await ServeHarness.with { serve, db in
            try await Self.makeRowsAndHolds(db)
            let id = try await db.query("SELECT min(id) FROM pushq.notifications WHERE provider = 'webpush'").string(0, 0) ?? ""
            let page = try await serve.call("GET", "/dashboard/notifications/\(id)", key: "read", headers: ["Accept": "text/html"])
            #expect(page.status == 200 && page.body.contains("webpush_keys") && page.body.contains("BCVxsr7N_eNgVRqvHtD0zTZsEc6"), "\(page.body)")
            #expect(!page.body.contains("BTBZMqHH6r4Tts7J_aSIgg") && !page.body.contains("auth&quot;"), "\(page.body)")
        }
    }

    /// What a Web Push hold shows comes from the database (the credential, the reason, the
    /// message): escaped as every page's text is.
    @Test("the Web Push holds table and the rows by provider escape what the database holds")
    func escapes() throws {
        let h = DashboardPageTests.hostile
        let origin = try WebPushOrigin.parse("https://push.example:8443").get()
        var status = DashboardPageTests.status(hostile: h)
        status.holds.append(HoldReport(held: HeldEndpoint(endpoint: .webPush(h, origin: origin), kind: .outage, reason: h), message: h,
                                       nextProbe: Date()))
        status.providers = [ProviderRows(provider: .webpush, counts: ["queued": 1])]
        let html = DashboardPageTests.page.overview(status, series: MinuteSeries(minutes: []))
        DashboardPageTests.expectInert(html)
        #expect(html.rendered.contains("id=\"webpush-holds\"") && html.rendered.contains(">https://push.example:8443<"))
        #expect(html.rendered.contains("id=\"provider-webpush-queued\">1<"))
    }

    /// `GET /api/v1/status` is `pushq status --json`: `providers` and each hold's `provider` and `origin`.
    @Test("GET /api/v1/status: providers.webpush counts every status; a Web Push hold names its origin")
    func statusJSON() async throws {
        try await ServeHarness.with { serve, db in
            try await Self.makeRowsAndHolds(db)
            let answer = try await serve.call("GET", "/api/v1/status", key: "read")
            #expect(answer.status == 200, "\(answer.body)")
            let providers = try #require(try answer.json["providers"] as? [String: [String: Int]], "\(answer.body)")
            #expect(providers["webpush"] == ["queued": 2, "sending": 0, "retrying": 1, "sent": 3, "failed": 1, "expired": 0, "cancelled": 0])
            let holds = try #require(try answer.json["holds"] as? [[String: Any]])
            #expect(holds.contains { $0["provider"] as? String == "webpush" && $0["origin"] as? String == Self.origin && $0["kind"] as? String == "outage" })
        }
    }
}
