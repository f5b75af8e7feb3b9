import Foundation
import PushCore
import PushServe
import PushStore
import PushTestSupport
import Testing
import PGClient

/// `pushq.audit_log.client`: the address serve took an audited request from, as its logs and
/// throttle see it (issue 45, item 2).
@Suite("The audit log's client address")
struct AuditClientTests {
    /// The client of the audit row of `target`.
    static func client(_ db: PGConnection, target: String) async throws -> String? {
        try await db.query("SELECT client FROM pushq.audit_log WHERE target = $1", [target]).string(0, 0)
    }

    /// an API cancel and a dashboard session's action, through a trusted proxy: the audit rows carry the first
    /// untrusted hop of X-Forwarded-For
    @Test("through a trusted proxy the API's and the dashboard's audit rows carry the forwarded client address")
    func throughTrustedProxy() async throws {
        // The test's peer, 127.0.0.1, is the trusted proxy.
        try await ServeHarness.with({ $0.trustedProxies = try! TrustedProxies(parsing: "127.0.0.1") }) { serve, db in
            let id = try #require(try await DashboardRouteTests.insert(db, 1).first)
            let cancel = try await serve.call("POST", "/api/v1/notifications/\(id)/cancel", key: "enqueue",
                                              headers: ["X-Forwarded-For": "198.51.100.7, 203.0.113.9"])
            #expect(cancel.status == 200, "\(cancel.body)")
            #expect(try await Self.client(db, target: "notification \(id)") == "203.0.113.9")

            // A session's action: the login, the confirmation page (its CSRF token), the action.
            let cookie = try await DashboardRouteTests.login(serve, "admin")
            let confirm = try await HTTPAnswer.request(port: serve.port, "GET", "/dashboard/confirm?action=pause-lane&lane=promo",
                                                       headers: ["Cookie": cookie])
            let csrf = try #require(DashboardRouteTests.csrf(confirm.body))
            let paused = try await HTTPAnswer.request(port: serve.port, "POST", "/dashboard/actions",
                                                      headers: ["Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded",
                                                                "X-Forwarded-For": "203.0.113.10"],
                                                      body: Array("action=pause-lane&lane=promo&csrf_token=\(csrf)".utf8))
            #expect(paused.status == 303)
            let row = try await db.query("SELECT via, client FROM pushq.audit_log WHERE target = 'lane promo'")
            #expect(row.count == 1 && row.string(0, 0) == "dashboard" && row.string(0, 1) == "203.0.113.10")
        }
    }

    @Test("without trusted proxies the audit row's client is the TCP peer, whatever X-Forwarded-For says")
    func peerWithoutTrustedProxies() async throws {
        try await ServeHarness.with { serve, db in
            let id = try #require(try await DashboardRouteTests.insert(db, 1).first)
            let cancel = try await serve.call("POST", "/api/v1/notifications/\(id)/cancel", key: "enqueue",
                                              headers: ["X-Forwarded-For": "203.0.113.9"])
            #expect(cancel.status == 200, "\(cancel.body)")
            #expect(try await Self.client(db, target: "notification \(id)") == "127.0.0.1")
        }
    }
}
