import Foundation
import PushServe
import PushStore
import PushTestSupport
import Testing
import PGClient

/// The dashboard in a real headless Chromium (Debian's `chromium`, over the DevTools protocol:
/// `scripts/browser-steps`), against `pushq serve` on 127.0.0.1 and a real PostgreSQL.
///
/// With `PUSHQ_DASHBOARD_SCREENSHOT=docs/dashboard-overview.png` set, the overview's screenshot
/// is also copied there (the one in docs/status.md, The dashboard).
@Suite("Dashboard in Chromium")
struct DashboardBrowserTests {
    /// An hour of traffic for the chart, a waiting campaign, a hold and a live worker.
    static func seed(_ db: PGConnection) async throws {
        try await db.query("""
            INSERT INTO pushq.notifications (device_token, payload, status, finished_at, last_reason, lane, created_at)
            SELECT lpad(to_hex(g), 64, '0'), '{}', CASE WHEN g % 23 = 0 THEN 'failed' ELSE 'sent' END,
                   now() - (g % 3600) * interval '1 second',
                   CASE WHEN g % 23 = 0 THEN (ARRAY['Unregistered', 'BadDeviceToken', 'TransportTimeout'])[g % 3 + 1] END,
                   CASE WHEN g % 4 = 0 THEN 'campaign' ELSE 'default' END, now() - (g % 3600) * interval '1 second' - interval '2 seconds'
              FROM generate_series(1, 6000 + (random() * 10)::int) g
            """)
        try await db.query("""
            INSERT INTO pushq.notifications (device_token, payload, lane, scheduled_at)
            SELECT lpad(to_hex(100000 + g), 64, '0'), '{}', 'campaign', now() - interval '40 seconds' FROM generate_series(1, 1200) g
            """)
        try await db.query("INSERT INTO pushq.lanes (name, rank, max_per_second) VALUES ('campaign', 200, 500)")
        try await db.query("""
            INSERT INTO pushq.credential_pauses (credential, environment, kind, reason, message, paused_until)
            VALUES ('default', 'development', 'outage', 'TransportConnectFailed', 'APNs cannot be reached', now() + interval '40 seconds')
            """)
        try await db.registerWorker(id: "worker-1", host: "push-1", pid: 4242, version: "0.9.0",
                                    credentials: [ServedCredential(name: "default", environment: "production", topic: "com.example.app")])
    }

    /// log in with a key, the overview's counts are the table's, search a token, open its notification,
    /// cancel it and see it cancelled in the table
    @Test("log in, the overview's counts are the table's, search a token, open its notification, cancel it and see it cancelled")
    func loginSearchCancel() async throws {
        try await ServeHarness.with { serve, db in
            try await Self.seed(db)
            let token = String(repeating: "c0ffee", count: 11).prefix(64).description
            try await db.query("INSERT INTO pushq.devices (device_token, user_ref) VALUES ($1, 'user-42')", [token])
            let id = try #require(try await DashboardRouteTests.insert(db, 1, token: token).first)
            let base = "http://127.0.0.1:\(serve.port)"
            let shot = NSTemporaryDirectory() + "dashboard-overview-\(UUID().uuidString).png"
            defer { unlink(shot) }
            let key = try #require(serve.keys["enqueue"])

            // Log in; the overview's counts; then rows inserted meanwhile show up without a reload.
            let overview = try await Browser.run([
                .navigate(base + "/dashboard"),
                .waitFor("location.pathname === '/login' && document.getElementById('key') !== null"),
                .eval("document.getElementById('key').value = \(Self.js(key)); document.querySelector('form').submit(); true"),
                .waitFor("location.pathname === '/dashboard' && document.getElementById('count-queued') !== null"),
                .eval("JSON.stringify(Object.fromEntries([...document.querySelectorAll('[id^=count-]')].map(e => [e.id.slice(6), Number(e.textContent)])))"),
                .screenshot(path: shot, width: 1280, height: 1000),
            ])
            let shown = try JSONSerialization.jsonObject(with: Data((overview[4] ?? "").utf8)) as? [String: Int]
            let table = try await Self.counts(db)
            #expect(shown == table, "the overview shows \(String(describing: shown)), the table has \(table)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: shot)).prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
            if let copy = ProcessInfo.processInfo.environment["PUSHQ_DASHBOARD_SCREENSHOT"] {
                try? FileManager.default.removeItem(atPath: copy)
                try FileManager.default.copyItem(atPath: shot, toPath: copy)
            }

            // Search the token, open the notification, cancel it through its confirmation.
            let steps = try await Browser.run([
                .navigate(base + "/login?next=%2Fdashboard"),
                .eval("document.getElementById('key').value = \(Self.js(key)); document.querySelector('form').submit(); true"),
                .waitFor("location.pathname === '/dashboard' && document.querySelector('input[name=q]') !== null"),
                .eval("document.querySelector('input[name=q]').value = \(Self.js(token)); document.querySelector('form.search').submit(); true"),
                .waitFor("location.pathname === '/dashboard/search' && document.querySelector('table.rows') !== null"),
                .eval("[...document.querySelectorAll('table.rows a')].map(a => a.textContent).join(',')"),
                .eval("document.body.textContent.includes(\(Self.js(token))) ? 'whole token shown' : 'shortened'"),
                .eval("document.querySelector('table.rows a').click(); true"),
                .waitFor("location.pathname === '/dashboard/notifications/\(id)' && document.getElementById('column-status') !== null"),
                .eval("document.getElementById('column-status').textContent"),
                .eval("document.querySelector('a.action').click(); true"),
                .waitFor("location.pathname === '/dashboard/confirm' && document.querySelector('button.danger') !== null"),
                .eval("document.querySelector('button.danger').click(); true"),
                .waitFor("location.pathname === '/dashboard/notifications/\(id)' && document.querySelector('.notice') !== null"),
                .eval("document.querySelector('.notice').textContent + '|' + document.getElementById('column-status').textContent"),
            ])
            #expect(steps[5] == "\(id)", "the token's one row")
            #expect(steps[6] == "shortened")
            #expect(steps[9] == "queued")
            #expect(steps[14] == "Notification \(id) cancelled.|cancelled")
            #expect(try await db.query("SELECT status FROM pushq.notifications WHERE id = $1", [id]).string(0, 0) == "cancelled")
            let audit = try await db.query("SELECT actor, via FROM pushq.audit_log WHERE action = 'notification.cancel' AND target = $1", ["notification \(id)"])
            #expect(audit.count == 1 && audit.string(0, 0) == "test-enqueue" && audit.string(0, 1) == "dashboard")
        }
    }

    /// the overview refreshes itself: a change made after the page loaded (a lane's rows cancelled through
    /// the dashboard's action, by fetch) shows in its counts without a reload
    @Test("the overview refreshes itself: a change made after the page loaded shows in its counts without a reload")
    func refreshes() async throws {
        try await ServeHarness.with { serve, db in
            try await DashboardRouteTests.insert(db, 3, lane: "promo")
            try await DashboardRouteTests.insert(db, 2)
            let key = try #require(serve.keys["admin"])
            let results = try await Browser.run([
                .navigate("http://127.0.0.1:\(serve.port)/login?next=%2Fdashboard"),
                .eval("document.getElementById('key').value = \(Self.js(key)); document.querySelector('form').submit(); true"),
                .waitFor("location.pathname === '/dashboard' && document.getElementById('count-queued') !== null"),
                .eval("window.pushqMarker = 'same page'; document.getElementById('count-queued').textContent + ',' + document.getElementById('count-cancelled').textContent"),
                .eval("""
                    fetch('/dashboard/actions', { method: 'POST', credentials: 'same-origin', redirect: 'manual',
                      body: new URLSearchParams({ action: 'cancel-lane', lane: 'promo',
                                                  csrf_token: document.querySelector('input[name=csrf_token]').value }) })
                      .then(r => String(r.type))
                    """),
                .waitFor("document.getElementById('count-cancelled').textContent === '3'", timeoutSeconds: 30),
                .eval("window.pushqMarker + ',' + document.getElementById('count-queued').textContent"),
            ])
            #expect(results[3] == "5,0")
            #expect(results[4] == "opaqueredirect", "the action answered with its 303")
            #expect(results[6] == "same page,2", "counted again without a reload: \(results)")
            #expect(try await Self.counts(db)["cancelled"] == 3)
        }
    }

    static func counts(_ db: PGConnection) async throws -> [String: Int] {
        var out = Dictionary(uniqueKeysWithValues: QueueStatus.statuses.map { ($0, 0) })
        let r = try await db.query("SELECT status, count(*) FROM pushq.notifications GROUP BY status")
        for i in 0..<r.count { out[r.string(i, 0) ?? ""] = try r.decode(Int.self, i, 1) }
        return out
    }

    /// `text` as a JavaScript string literal.
    static func js(_ text: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: [text]), as: UTF8.self).dropFirst().dropLast().description
    }
}
