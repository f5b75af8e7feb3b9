import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// The claim's walk of a lane's tenants (issue 48, item 5) when there are more tenants than one
/// claim lists, when some have nothing due now, or rows this worker cannot take; and what the walk
/// costs a claim that never reaches the tenanted lane. Assertions are by structure (which rows a
/// claim holds, which index entries it read), never by time.
@Suite("The tenant walk: every tenant's turn, and its cost")
struct TenantWalkTests {
    /// A lane with quiet hours whose window opens in an hour in UTC: its rows (UTC) are outside it now.
    static func quietLane(_ c: PGConnection) async throws {
        try await c.query("""
            INSERT INTO pushq.lanes (name, quiet_start, quiet_end, time_zone)
            VALUES ('quiet', ((now() AT TIME ZONE 'UTC') + interval '1 hour')::time, ((now() AT TIME ZONE 'UTC') + interval '2 hours')::time, 'UTC')
            """)
    }

    /// The status of rows of `tenant` (NULL: none), counted: `queued:1,sending:2`.
    static func statuses(_ c: PGConnection, tenant: String?) async throws -> String {
        try await c.query("""
            SELECT COALESCE(string_agg(status || ':' || n, ',' ORDER BY status), '')
              FROM (SELECT status, count(*) AS n FROM pushq.notifications WHERE tenant IS NOT DISTINCT FROM $1 GROUP BY 1) x
            """, [tenant]).string(0, 0) ?? "?"
    }

    /// 12 tenants × 5 due rows and 5 without a tenant (round r of every tenant due before round r + 1 of
    /// any), claims of 2: a claim lists at most 5 × 2 tenant names, and the old walk listed t00–t09 every
    /// time (t10 and t11 got nothing). The walk now starts after the last tenant served (NULL between
    /// the last name and the first): 13 claims, 2 rows each.
    @Test("more tenants than a claim lists: each gets its turn, the walk starting after the last one served")
    func everyTenantsTurn() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, tenant, scheduled_at)
                SELECT lpad(to_hex(r * 100 + t), 64, '0'), '{"aps":{}}', 't' || lpad(t::text, 2, '0'),
                       now() - interval '1 hour' + r * interval '1 minute' + t * interval '1 second'
                  FROM generate_series(0, 11) t, generate_series(1, 5) r
                """)
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, scheduled_at)
                SELECT lpad(to_hex(r), 64, 'f'), '{"aps":{}}', now() - interval '1 hour' + r * interval '1 minute' + interval '30 seconds'
                  FROM generate_series(1, 5) r
                """)
            var taken: [Int64] = []
            for rotation in 0..<13 {
                taken += try await TenantClaimTests.claim(c, limit: 2, rotation: rotation).rows.map(\.id)
            }
            let expected = (["-:2"] + (0..<12).map { "t" + ($0 < 10 ? "0" : "") + "\($0):2" }).joined(separator: ",")
            let got = try await TenantClaimTests.tenants(c, taken)
            #expect(got == expected)
        }
    }

    /// A lane of a lower rank takes 2 of every claim of 4 (2 rows inserted before each), so the tenant
    /// lane behind it lists 4 tenants (its share) and takes 2: the next claim starts after the last
    /// tenant served, not after the last listed (which skipped C and D every time: A:4,B:4).
    @Test("a lane that gets less than its share: the next claim starts after the last tenant served, not listed")
    func partShare() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, rank) VALUES ('first', 50)")
            for (i, t) in ["A", "B", "C", "D"].enumerated() {
                try await TenantClaimTests.insert(c, tenant: t, count: 5, lane: "tn", ago: "\(60 - i) minutes")
            }
            var taken: [Int64] = []
            for rotation in 0..<4 {
                try await TenantClaimTests.insert(c, tenant: nil, count: 2, lane: "first", ago: "2 hours")
                taken += try await TenantClaimTests.claim(c, limit: 4, rotation: rotation).rows.map(\.id)
            }
            let got = try await TenantClaimTests.tenants(c, taken)
            #expect(got == "-:8,A:2,B:2,C:2,D:2")
        }
    }

    /// A quiet lane outside its window: 10 tenants whose rows are all scheduled tomorrow fill the names a
    /// claim of 2 lists (5 × 2); tenant z's 3 rows were due an hour ago, 10 rows without a tenant now. The
    /// old walk listed a0–a9, found none due, and had no fill walk: every claim took untenanted rows
    /// alone, z's rows stayed queued while any was left. Now the names listed are those due, and the
    /// lane's other due entries fill the walk.
    @Test("a quiet lane: tenants with nothing due now take no turn; a tenant beyond the names listed is still taken")
    func quietLaneFutureTenants() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.quietLane(c)
            for t in 0..<10 {
                try await TenantClaimTests.insert(c, tenant: "a\(t)", count: 2, lane: "quiet", ago: "-1 day")
            }
            try await TenantClaimTests.insert(c, tenant: "z", count: 3, lane: "quiet", ago: "1 hour")
            try await TenantClaimTests.insert(c, tenant: nil, count: 10, lane: "quiet")
            var taken = 0
            for rotation in 0..<3 {
                taken += try await TenantClaimTests.claim(c, limit: 2, rotation: rotation).rows.count
            }
            #expect(taken == 6)
            #expect(try await Self.statuses(c, tenant: "z") == "sending:3", "z's rows, due an hour ago")
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications WHERE tenant LIKE 'a_' AND status = 'queued'").string(0, 0) == "20",
                    "the rows scheduled tomorrow wait")
        }
    }

    /// A quiet lane: tenant A's 12 oldest rows are for credential 'other' (this worker has only
    /// 'default'), its 2 newer ones for 'default'. The old walk read A's first entries only (its part:
    /// 10 at a claim of 2), none of which this worker can take, and three claims took nothing.
    @Test("a quiet lane: a tenant whose first rows this worker cannot take still has its others taken")
    func quietLaneBlockedTenant() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.quietLane(c)
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, tenant, credential, scheduled_at)
                SELECT lpad(to_hex(i), 64, '0'), '{"aps":{}}', 'quiet', 'A', CASE WHEN i <= 12 THEN 'other' END,
                       now() - interval '1 hour' + i * interval '1 second'
                  FROM generate_series(1, 14) i
                """)
            var taken = 0
            for rotation in 0..<3 {
                taken += try await TenantClaimTests.claim(c, limit: 2, rotation: rotation).rows.count
            }
            #expect(taken == 2)
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications WHERE credential IS NULL AND status = 'sending'").string(0, 0) == "2")
        }
    }

    /// default (rank 100) has 600 due rows, lane tn (rank 200) 300 tenants × 2: a claim of 500 takes
    /// default's rows and never reaches tn. The old claim walked tn's tenants anyway (every lane of the
    /// claim's queue with a quota: 300 names and their entries through due_tenant) and compared every
    /// entry default walked with all of them. Now a lane's tenants are walked when the claim reaches it.
    @Test("a tenanted lane the claim never reaches costs it nothing: no entry of due_tenant is read")
    func unreachedLaneIsNotWalked() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, rank) VALUES ('tn', 200)")
            try await TenantClaimTests.insert(c, tenant: nil, count: 600, ago: "1 hour")
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, tenant, scheduled_at)
                SELECT lpad(to_hex(i), 64, '0'), '{"aps":{}}', 'tn', 'c' || (i % 300), now() - interval '2 hours'
                  FROM generate_series(1, 600) i
                """)
            try await c.query("ANALYZE pushq.due, pushq.notifications")
            let claim = ClaimPlanTests.claim(limit: 500, credentials: ["default"], budget: nil)
            try await c.execute(PGConnection.claimBegin(prepared: false))
            let r = try await c.query("EXPLAIN (ANALYZE, FORMAT JSON) " + claim.sql, claim.parameters)
            try await c.execute("ROLLBACK")
            let plan = try ClaimPlanTests.json(r)
            let nodes = ClaimPlanTests.nodes(plan)
            let tenantReads = nodes.filter { $0["Index Name"] as? String == "due_tenant" }
                .map { ($0["Actual Rows"] as? Int ?? 0) * ($0["Actual Loops"] as? Int ?? 1) }.reduce(0, +)
            #expect(tenantReads == 0, "entries of due_tenant read")
            let taken = nodes.filter { $0["Relation Name"] as? String == "notifications" && $0["Node Type"] as? String == "ModifyTable" }
                .compactMap { $0["Actual Rows"] as? Int }
            #expect(taken == [500], "default's 500 rows claimed")
        }
    }
}
