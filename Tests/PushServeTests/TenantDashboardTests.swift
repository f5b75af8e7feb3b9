import Foundation
import PushCore
@testable import PushServe
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// The dashboard shows, for each lane whose due rows have tenants, the tenants with the most due
/// rows (issue 48, item 5): at most ``TenantDue/shownPerLane`` a lane, counted through `due_tenant`.
@Suite("Dashboard: tenants")
struct TenantDashboardTests {
    static func insert(_ db: PGConnection, lane: String, tenant: String?, count: Int, ago: String = "1 minute") async throws {
        try await db.query("""
            INSERT INTO pushq.notifications (device_token, payload, lane, tenant, scheduled_at)
            SELECT lpad(to_hex(i), 64, '0'), '{"aps":{}}', $1, $2, now() - $4::interval FROM generate_series(1, $3::int) i
            """, [lane, tenant, count, ago])
    }

    /// lane campaign: 7 tenants (30, 20, 12, 10, 9, 8 rows, and 11 without a tenant) and 50 rows scheduled
    /// tomorrow; lane plain: untenanted rows only
    @Test("the tenants with the most due rows in each lane with tenants, most first, five a lane; lanes without tenants not listed")
    func topTenants() async throws {
        try await ServeHarness.with { serve, db in
            for (tenant, n) in [("acme", 30), ("bolt", 20), ("cog", 12), ("dyn", 10), ("eon", 9), ("fig", 8)] as [(String, Int)] {
                try await Self.insert(db, lane: "campaign", tenant: tenant, count: n)
            }
            try await Self.insert(db, lane: "campaign", tenant: nil, count: 11)
            try await Self.insert(db, lane: "campaign", tenant: "fig", count: 50, ago: "-1 day")
            try await Self.insert(db, lane: "plain", tenant: nil, count: 40)
            let top = try await db.topTenants()
            #expect(top.map { "\($0.lane)/\($0.tenant ?? "-")/\($0.dueRows)" } == [
                "campaign/acme/30", "campaign/bolt/20", "campaign/cog/12", "campaign/-/11", "campaign/dyn/10",
            ], "due rows only (fig's 50 of tomorrow do not count), five, most first")
            let page = try await serve.call("GET", "/dashboard", key: "read", headers: ["Accept": "text/html"])
            #expect(page.status == 200)
            #expect(page.body.contains(#"id="tenant-due-campaign-acme">30<"#) && page.body.contains(#"id="tenant-due-campaign-">11<"#), "\(page.body)")
            #expect(!page.body.contains("tenant-due-plain") && !page.body.contains("tenant-due-campaign-eon"))
        }
    }

    @Test("without tenants the dashboard has no tenants table")
    func noTenants() async throws {
        try await ServeHarness.with { serve, db in
            try await Self.insert(db, lane: "plain", tenant: nil, count: 40)
            #expect(try await db.topTenants().isEmpty)
            let page = try await serve.call("GET", "/dashboard", key: "read", headers: ["Accept": "text/html"])
            #expect(page.status == 200 && !page.body.contains(#"id="tenants""#))
        }
    }
}
