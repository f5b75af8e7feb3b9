import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// The plain claim (``ClaimStatement/sql(considerate:)`` with `considerate` false): what a worker
/// sends while no lane caps sends per recipient and no entry has a tenant. It claims as the
/// considerate claim does when neither is set; when a lane it would walk needs them it takes
/// nothing, changes nothing, and says so (``ClaimBatch/needsConsiderate``).
@Suite("The plain claim")
struct PlainClaimTests {
    static func claim(_ c: PGConnection, limit: Int = 50, considerate: Bool, belowRank: Int? = nil) async throws -> ClaimBatch {
        try await c.claim(limit: limit, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]],
                          defaultEnvironment: .production, belowRank: belowRank, considerate: considerate)
    }

    /// Rows of each lane, in order: `lanes` as (lane, count), each row due an hour ago plus its index.
    static func insert(_ c: PGConnection, _ lanes: [(String, Int)], tenant: String? = nil, user: String? = nil) async throws {
        for (lane, count) in lanes {
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, tenant, user_ref, scheduled_at)
                SELECT lpad(to_hex(g), 64, '0'), '{"aps":{}}', $1, $2, $3, now() - interval '1 hour' + g * interval '1 second'
                  FROM generate_series(1, $4) g
                """, [lane, tenant, user, count])
        }
    }

    /// Every row's status, lane and attempts, and pushq.due's entries, as text (what a claim that
    /// takes nothing must leave as it was).
    static func snapshot(_ c: PGConnection) async throws -> String {
        let rows = try await c.query("""
            SELECT string_agg(id || ':' || status || ':' || attempts, ',' ORDER BY id) FROM pushq.notifications
            """).string(0, 0) ?? ""
        let due = try await c.query("SELECT string_agg(id || ':' || due_at || ':' || COALESCE(held, '-'), ',' ORDER BY id) FROM pushq.due")
            .string(0, 0) ?? ""
        let sends = try await c.query("SELECT count(*) FROM pushq.recipient_sends").decode(Int.self, 0, 0) ?? -1
        return rows + "|" + due + "|" + String(sends)
    }

    /// with ranks, a paused lane and a quiet lane inside its window, and nothing else set, the plain and the
    /// considerate claim take the same rows in the same order and move the same entries (two databases)
    @Test("with neither caps nor tenants, the plain claim takes what the considerate one takes, in the same order")
    func sameRows() async throws {
        var taken: [Bool: [String]] = [:]
        for considerate in [false, true] {
            try await TestDatabase.withConnection { c in
                try await c.query("INSERT INTO pushq.lanes (name, rank) VALUES ('urgent', 10), ('bulk', 200)")
                try await c.query("INSERT INTO pushq.lanes (name, paused) VALUES ('held', true)")
                try await c.query("""
                    INSERT INTO pushq.lanes (name, rank, quiet_start, quiet_end, time_zone)
                    VALUES ('night', 150, (now() AT TIME ZONE 'UTC')::time - interval '1 hour',
                            (now() AT TIME ZONE 'UTC')::time + interval '1 hour', 'UTC')
                    """)
                try await Self.insert(c, [("bulk", 30), ("default", 10), ("urgent", 5), ("held", 5), ("night", 5)])
                var order: [String] = []
                for _ in 0..<3 {
                    let batch = try await Self.claim(c, limit: 20, considerate: considerate)
                    #expect(!batch.needsConsiderate)
                    order += batch.rows.map { "\($0.lane)#\($0.id)" }
                }
                let quiet = try await c.query("SELECT count(*) FROM pushq.due WHERE held = 'quiet'").decode(Int.self, 0, 0)
                taken[considerate] = order + ["quiet held: \(quiet ?? -1)"]
            }
        }
        // (Ids are the same in both databases: each is new and inserts the same rows in the same order.)
        #expect(taken[false] == taken[true])
        #expect(taken[false]?.count == 46, "5 urgent, 10 default, 30 bulk, and 5 night entries held: \(taken[false] ?? [])")
        #expect(taken[false]?.prefix(5).allSatisfy { $0.hasPrefix("urgent#") } == true)
    }

    /// a lane with a cap per recipient, or a lane with an entry with a tenant: the plain claim takes nothing (the
    /// rows of other lanes neither, so that ranks hold), writes nothing, and says so; the considerate claim then
    /// takes them, under the cap
    @Test("a capped or a tenanted lane: the plain claim takes and writes nothing and asks for the considerate one", arguments: ["cap", "tenant"])
    func needsConsiderate(rule: String) async throws {
        try await TestDatabase.withConnection { c in
            try await Self.insert(c, [("default", 4)])
            if rule == "cap" {
                try await c.query("INSERT INTO pushq.lanes (name, rank, recipient_cap, recipient_window) VALUES ('promo', 200, 2, interval '1 hour')")
                try await Self.insert(c, [("promo", 5)], user: "u1")
            } else {
                try await c.query("INSERT INTO pushq.lanes (name, rank) VALUES ('promo', 200)")
                try await Self.insert(c, [("promo", 5)], tenant: "acme")
            }
            let before = try await Self.snapshot(c)
            let plain = try await Self.claim(c, considerate: false)
            #expect(plain.rows.isEmpty && plain.needsConsiderate)
            #expect(try await Self.snapshot(c) == before, "nothing written")
            let full = try await Self.claim(c, considerate: true)
            #expect(!full.needsConsiderate)
            let promo = full.rows.filter { $0.lane == "promo" }
            #expect(full.rows.prefix(4).allSatisfy { $0.lane == "default" })
            if rule == "cap" {
                #expect(promo.filter { $0.verdict == .send }.count == 2, "2 of u1's 5 within the cap")
                #expect(try await c.query("SELECT count(*) FROM pushq.recipient_sends").decode(Int.self, 0, 0) == 2)
            } else {
                #expect(promo.count == 5 && promo.allSatisfy { $0.tenant == "acme" })
            }
        }
    }

    /// what does not make the plain claim step aside: a capped lane that is paused, one ranked at or above the urgent
    /// claim's rank, and a tenant's row that is no longer in pushq.due (sent)
    @Test("a paused capped lane, a lane above belowRank, a tenant's sent row: the plain claim takes the other rows")
    func notNeeded() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, paused, recipient_cap, recipient_window) VALUES ('promo', true, 2, interval '1 hour')")
            try await c.query("INSERT INTO pushq.lanes (name, rank) VALUES ('bulk', 200), ('urgent', 10)")
            try await Self.insert(c, [("promo", 3)], user: "u1")
            try await Self.insert(c, [("bulk", 3)], tenant: "acme")
            try await Self.insert(c, [("urgent", 2)])
            try await Self.insert(c, [("default", 1)], tenant: "gone")
            try await c.query("UPDATE pushq.notifications SET status = 'sent', finished_at = now() WHERE tenant = 'gone'")
            // An urgent claim below bulk's rank (what a worker with a full window sends): bulk's tenant is beyond it.
            let urgent = try await Self.claim(c, considerate: false, belowRank: 100)
            #expect(!urgent.needsConsiderate && urgent.rows.map(\.lane) == ["urgent", "urgent"])
            let plain = try await Self.claim(c, considerate: false)
            #expect(plain.needsConsiderate && plain.rows.isEmpty, "bulk's tenant, within reach now")
            try await c.query("UPDATE pushq.notifications SET tenant = NULL WHERE lane = 'bulk'")
            let after = try await Self.claim(c, considerate: false)
            #expect(!after.needsConsiderate && after.rows.map(\.lane) == ["bulk", "bulk", "bulk"], "the paused capped lane is not walked")
        }
    }

    /// the plain claim's plan is about half the considerate one's: no probe of recipient_sends, no tenant walk; and with
    /// no tenant anywhere, its guard reads due_tenanted once (migration 115) and asks no lane, whatever their number
    @Test("the plain claim's plan: no cap step, no tenant walk, at most 60% of the nodes; one probe of tenants for 30 lanes")
    func smallerPlan() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.insert(c, (0..<30).map { ("lane\($0)", 3) })
            func nodes(_ considerate: Bool, analyze: Bool = false) async throws -> [[String: Any]] {
                let claim = ClaimPlanTests.claim(limit: 100, credentials: ["default"], budget: nil, considerate: considerate)
                guard analyze else {
                    let name = "plan_" + (considerate ? "considerate" : "plain")
                    try await c.query("PREPARE \(name) AS " + claim.sql)
                    return ClaimPlanTests.nodes(try await ClaimPlanTests.explainGeneric(c, statement: name, parameters: claim.parameters))
                }
                try await c.execute("BEGIN")
                let r = try await c.query("EXPLAIN (ANALYZE, FORMAT JSON) " + claim.sql, claim.parameters)
                try await c.execute("ROLLBACK")
                return ClaimPlanTests.nodes(try ClaimPlanTests.json(r))
            }
            let plain = try await nodes(false), considerate = try await nodes(true)
            let relations = { (n: [[String: Any]]) in n.compactMap { $0["Relation Name"] as? String } }
            // The guard's two probes (any tenant, the lane's) and the tenant walk's (ClaimPlanTests.isTenantWalk;
            // not the loose scan of the lanes, which may read either index of tenants by its lane).
            let tenantWalk = { (n: [[String: Any]]) in n.filter(ClaimPlanTests.isTenantWalk).count }
            #expect(!relations(plain).contains("recipient_sends") && relations(considerate).contains("recipient_sends"))
            #expect(tenantWalk(plain) == 2 && tenantWalk(considerate) > 2, "\(tenantWalk(plain)), \(tenantWalk(considerate))")
            #expect(Double(plain.count) <= 0.6 * Double(considerate.count), "\(plain.count) nodes against \(considerate.count)")
            // Run: the probe for any tenant once, the lanes' probes never (30 lanes, no tenant).
            let run = try await nodes(false, analyze: true).filter(ClaimPlanTests.isTenantWalk)
            let loops = run.map { (!"\($0["Index Cond"] ?? "")".contains("lane"), $0["Actual Loops"] as? Int ?? -1) }
            #expect(loops.count == 2 && loops.allSatisfy { $0.0 ? $0.1 == 1 : $0.1 == 0 }, "\(loops)")
        }
    }
}
