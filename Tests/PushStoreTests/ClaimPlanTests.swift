import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing

/// How PostgreSQL plans the claim on a table of many rows: every step reads the rows it claims
/// through an index, whatever caps are set, and nothing is compiled by JIT.
@Suite("The claim's plan")
struct ClaimPlanTests {
    static let rows = 20_000

    /// Every node of an `EXPLAIN (FORMAT JSON)` plan.
    static func nodes(_ plan: Any) -> [[String: Any]] {
        if let list = plan as? [Any] { return list.flatMap(nodes) }
        guard let node = plan as? [String: Any] else { return [] }
        return [node] + node.values.flatMap(nodes)
    }

    /// The plan's nodes that read `pushq.notifications` whole.
    static func tableScans(_ plan: Any) -> [String] {
        nodes(plan).filter { $0["Node Type"] as? String == "Seq Scan" && $0["Relation Name"] as? String == "notifications" }
            .map { $0["Alias"] as? String ?? "?" }
    }

    /// `EXPLAIN (FORMAT JSON)` of the claim the worker sends for these arguments. The default
    /// size, 50, is a four-hundredth of ``rows``: reading the table whole is never the cheaper plan.
    func plan(_ c: PGConnection, limit: Int = 50, credentials: [String] = ["default", "b"], budget: RateBudget? = nil) async throws -> Any {
        let claim = ClaimStatement.bound(limit: limit, workerID: "w1", leaseSeconds: 60, credentials: credentials,
                                         fcmCredentials: [], defaultEnvironment: .production, held: [], only: nil,
                                         row: nil, excluding: [], rotation: 0, budget: budget, belowRank: nil)
        let r = try await c.query("EXPLAIN (FORMAT JSON) " + claim.sql, claim.parameters)
        return try JSONSerialization.jsonObject(with: Data((r.string(0, 0) ?? "").utf8))
    }

    @Test("on a large analysed table, mostly of final rows, the claim walks notifications_lane_due, never the whole table")
    func laneDue() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, rank, max_per_second) VALUES ('bulk', 200, 500)")
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, status, finished_at)
                SELECT lpad(to_hex(g), 64, '0'), '{}', CASE WHEN g % 3 = 0 THEN 'bulk' ELSE 'default' END,
                       CASE WHEN g % 10 = 0 THEN 'queued' ELSE 'sent' END, now()
                  FROM generate_series(1, 100000) g
                """)
            try await c.query("ANALYZE pushq.notifications")
            try await c.query("SET enable_seqscan = on")
            let plan = try await plan(c, limit: 500, credentials: ["default"])
            let indexes = Set(Self.nodes(plan).compactMap { $0["Index Name"] as? String })
            #expect(indexes.contains("notifications_lane_due"), "\(indexes)")
            #expect(Self.tableScans(plan) == [])
        }
    }

    @Test("with a capped lane and a capped credential, no step of the claim reads the whole table (the claim's size is a LIMIT the planner can read)")
    func cappedClaimsUseIndexes() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, credential, scheduled_at)
                SELECT lpad(to_hex(g), 64, '0'), '{}', CASE WHEN g % 2 = 0 THEN 'b' END, now() - interval '1 minute'
                  FROM generate_series(1, \(Self.rows)) g
                """)
            try await c.query("ANALYZE pushq.notifications")
            let cap = RateBudget(provider: .apns, credential: "b", perSecond: 1000)
            try await c.ensureBudgets([cap.key])
            try await c.query("UPDATE pushq.rate_budgets SET refilled_at = now() - interval '1 hour'")
            #expect(Self.tableScans(try await plan(c)) == [], "no cap")
            #expect(Self.tableScans(try await plan(c, credentials: ["b"], budget: cap)) == [], "a capped credential")
            try await c.query("UPDATE pushq.lanes SET max_per_second = 1000 WHERE name = 'default'")
            try await c.ensureBudgets(["lane:default"])
            try await c.query("UPDATE pushq.rate_budgets SET refilled_at = now() - interval '1 hour'")
            #expect(Self.tableScans(try await plan(c)) == [], "a capped lane")
            #expect(Self.tableScans(try await plan(c, credentials: ["b"], budget: cap)) == [], "a capped lane and a capped credential")
            // And the capped claim still takes its budget's rows of its credential alone.
            let batch = try await c.claim(limit: 500, workerID: "w1", leaseSeconds: 60, credentials: ["b"],
                                          defaultEnvironment: .production, budget: cap)
            #expect(batch.rows.count == 250 && batch.heldBackByCap, "a quarter second of 1 000/s")
            #expect(try await c.query("""
                SELECT count(*) FROM pushq.notifications WHERE status = 'sending' AND credential IS DISTINCT FROM 'b'
                """).decode(Int.self, 0, 0) == 0)
        }
    }

    @Test("the claim is prepared once per session, and PostgreSQL settles on its generic plan; a new session prepares it again; a filtered claim is not prepared")
    func preparedOnce() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload)
                SELECT lpad(to_hex(g), 64, '0'), '{}' FROM generate_series(1, 40) g
                """)
            func claim(_ limit: Int, held: [Endpoint] = []) async throws -> Int {
                try await c.claim(limit: limit, workerID: "w1", leaseSeconds: 60, credentials: ["default"],
                                  defaultEnvironment: .production, held: held).rows.count
            }
            func statements() async throws -> [[Int]] {
                let r = try await c.query("""
                    SELECT generic_plans, custom_plans FROM pg_prepared_statements
                     WHERE statement LIKE 'WITH RECURSIVE waiting%' ORDER BY name
                    """)
                return try (0..<r.count).map { [try r.decode(Int.self, $0, 0) ?? -1, try r.decode(Int.self, $0, 1) ?? -1] }
            }
            for _ in 0..<8 { #expect(try await claim(2) == 2) }
            let eight = try await statements()
            #expect(eight.count == 1 && eight.first.map { $0[0] + $0[1] } == 8, "one statement, run 8 times: \(eight)")
            #expect((eight.first?[0] ?? 0) >= 1, "a generic plan after the first custom ones: \(eight)")
            #expect(try await claim(3) == 3, "a claim of 3: another size bound (4), another text")
            #expect(try await statements().count == 2)
            let held = Endpoint(credential: "other", environment: .production)
            #expect(try await claim(2, held: [held]) == 2)
            #expect(try await statements().count == 2, "a claim with a filter runs unprepared")
            await c.dropSession()
            #expect(try await claim(2) == 2)
            #expect(try await statements() == [[0, 1]], "the new session prepared it again")
        }
    }

    @Test("every session runs with JIT compilation off, also after a reconnect")
    func jitOff() async throws {
        try await TestDatabase.withConnection { c in
            #expect(try await c.query("SHOW jit").string(0, 0) == "off")
            let first = try await c.serverBackendPID()
            await c.dropSession()
            #expect(try await c.query("SHOW jit").string(0, 0) == "off")
            #expect(try await c.serverBackendPID() != first, "a new session, with its settings made again")
        }
    }
}
