import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

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

    /// The plan's nodes that read `pushq.notifications` or `pushq.due` whole.
    static func tableScans(_ plan: Any) -> [String] {
        nodes(plan).filter { $0["Node Type"] as? String == "Seq Scan" && ["notifications", "due"].contains($0["Relation Name"] as? String ?? "") }
            .map { $0["Alias"] as? String ?? "?" }
    }

    /// The claim the worker sends for these arguments (worker `w1`, no filter).
    /// (`considerate`: the claim with every rule, or the plain one a worker sends while no lane
    /// needs them, ``ClaimStatement/sql(considerate:)``.)
    static func claim(limit: Int, credentials: [String], budget: RateBudget?, considerate: Bool = true)
        -> (sql: String, parameters: [(any PGParameter)?], custom: Bool) {
        ClaimStatement.bound(limit: limit, workerID: "w1", leaseSeconds: 60, credentials: [.apns: credentials],
                             defaultEnvironment: .production, only: nil,
                             row: nil, excluding: [], rotation: 0, budget: budget, belowRank: nil, considerate: considerate)
    }

    /// The plan an `EXPLAIN (FORMAT JSON)` answered.
    static func json(_ r: PGResult) throws -> Any {
        try JSONSerialization.jsonObject(with: Data((r.string(0, 0) ?? "").utf8))
    }

    /// `EXPLAIN (FORMAT JSON)` of the claim the worker sends for these arguments. The default
    /// size, 50, is a four-hundredth of ``rows``: reading the table whole is never the cheaper plan.
    func plan(_ c: PGConnection, limit: Int = 50, credentials: [String] = ["default", "b"], budget: RateBudget? = nil,
              considerate: Bool = true) async throws -> Any {
        let claim = Self.claim(limit: limit, credentials: credentials, budget: budget, considerate: considerate)
        return try Self.json(try await c.query("EXPLAIN (FORMAT JSON) " + claim.sql, claim.parameters))
    }

    /// `EXPLAIN (FORMAT JSON)` of the generic plan of the same claim: prepared as the worker
    /// prepares it (no parameter types: PostgreSQL infers them), then explained with the
    /// parameters as literals under `force_generic_plan`, which the worker's claims run with.
    func genericPlan(_ c: PGConnection, limit: Int = 50, credentials: [String] = ["default", "b"], budget: RateBudget? = nil,
                     considerate: Bool = true) async throws -> Any {
        let claim = Self.claim(limit: limit, credentials: credentials, budget: budget, considerate: considerate)
        let name = "generic_claim_" + UUID().uuidString.prefix(8).lowercased()
        try await c.query("PREPARE \(name) AS " + claim.sql)
        return try await Self.explainGeneric(c, statement: name, parameters: claim.parameters)
    }

    /// `EXPLAIN (FORMAT JSON)` of prepared statement `name` run with `parameters` under
    /// `force_generic_plan`: its cached generic plan, or the one made now if it has none.
    static func explainGeneric(_ c: PGConnection, statement name: String, parameters: [(any PGParameter)?]) async throws -> Any {
        try await c.query("SET plan_cache_mode = force_generic_plan")
        let r = try await c.query("EXPLAIN (FORMAT JSON) " + execute(name, parameters))
        try await c.query("RESET plan_cache_mode")
        return try json(r)
    }

    /// `EXECUTE name(…)` with `parameters` as literals (EXPLAIN takes no bound parameters).
    static func execute(_ name: String, _ parameters: [(any PGParameter)?]) throws -> String {
        let literals = try PGConnection.texts(parameters).map { text in
            text.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" } ?? "NULL"
        }
        return "EXECUTE \(name)(\(literals.joined(separator: ", ")))"
    }

    @Test("on a large analysed table, mostly of final rows, the claim walks pushq.due's due_order, never a whole table", arguments: [false, true])
    func laneDue(considerate: Bool) async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, rank, max_per_second) VALUES ('bulk', 200, 500)")
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, status, finished_at)
                SELECT lpad(to_hex(g), 64, '0'), '{}', CASE WHEN g % 3 = 0 THEN 'bulk' ELSE 'default' END,
                       CASE WHEN g % 10 = 0 THEN 'queued' ELSE 'sent' END, now()
                  FROM generate_series(1, 100000) g
                """)
            try await c.query("ANALYZE pushq.notifications, pushq.due")
            try await c.query("SET enable_seqscan = on")
            let plan = try await plan(c, limit: 500, credentials: ["default"], considerate: considerate)
            let walks = Self.laneWalks(plan)
            #expect(!walks.isEmpty && walks.allSatisfy { $0 == "due_order" }, "\(walks)")
            #expect(Self.tableScans(plan) == [])
            let generic = try await genericPlan(c, limit: 500, credentials: ["default"], considerate: considerate)
            #expect(Self.laneWalks(generic).allSatisfy { $0 == "due_order" } && !Self.laneWalks(generic).isEmpty)
            #expect(Self.tableScans(generic) == [], "the generic plan, which the worker's claims run on")
        }
    }

    /// The index each lane's walk of `due` reads (the scans whose condition names `q.lane`).
    /// (Not the tenant walk's probes of due_tenant, which name `tenant` and read nothing in a lane
    /// without tenants: PostgreSQL 18 prints their outer reference as `q.lane` where 15 prints `$n`.
    /// TenantWalkTests and ConsiderateClaimPlanTests check those.)
    static func laneWalks(_ plan: Any) -> [String] {
        nodes(plan).filter { !isTenantWalk($0) && "\($0["Index Cond"] ?? "") \($0["Filter"] ?? "")".contains("q.lane") }
            .compactMap { $0["Index Name"] as? String }
    }

    /// A node of the tenant walk (ClaimStatement.tenantWalkSQL): an index condition on `tenant`, or
    /// a probe of due_tenanted (migration 115), whose `tenant IS NOT NULL` is its index's predicate.
    static func isTenantWalk(_ node: [String: Any]) -> Bool {
        "\(node["Index Cond"] ?? "")".contains("tenant") || node["Index Name"] as? String == "due_tenanted"
    }

    /// a claim first run on an empty table reads only the rows it takes once 10 000 rows came (no ANALYZE
    /// since): each claim is planned for the table as it is, not run on a plan made for the empty one
    @Test("a claim first run on an empty table reads only the rows it takes once 10 000 rows came, without ANALYZE")
    func planMadeOnEmptyTable() async throws {
        try await TestDatabase.withConnection { c in
            // A new install, or a table that retention emptied: vacuumed, so PostgreSQL knows it holds nothing.
            try await c.query("VACUUM ANALYZE pushq.notifications, pushq.due")
            let empty = try await c.claim(limit: 500, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production)
            #expect(empty.rows.isEmpty)
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload) SELECT lpad(to_hex(g), 64, '0'), '{}' FROM generate_series(1, 10000) g
                """)
            let claimed = try await c.claim(limit: 500, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production)
            #expect(claimed.rows.count == 500)
            // The next claim as that connection runs it: its prepared text, in a transaction opened as
            // the claim opens it, with the rows each step read.
            let name = try #require(try await c.query("""
                SELECT name FROM pg_prepared_statements WHERE statement LIKE '%WITH RECURSIVE waiting%' AND NOT from_sql
                """).string(0, 0))
            let claim = Self.claim(limit: 500, credentials: ["default"], budget: nil)
            try await c.execute(PGConnection.claimBegin(prepared: true))
            let r = try await c.query("EXPLAIN (ANALYZE, FORMAT JSON) " + Self.execute(name, claim.parameters))
            try await c.execute("ROLLBACK")
            let plan = try Self.json(r)
            // The plan made on the empty table joined the 500 rows to the whole table, a comparison
            // per pair: 10 000 rows read and 5 million compared, twice per claim.
            let reads = Self.nodes(plan).filter { $0["Relation Name"] as? String == "notifications" }
                .map { ($0["Actual Rows"] as? Int ?? 0) * ($0["Actual Loops"] as? Int ?? 1) }
            #expect(!reads.isEmpty && reads.allSatisfy { $0 <= 1000 }, "rows read by each step: \(reads)")
            let compared = Self.nodes(plan).compactMap { $0["Rows Removed by Join Filter"] as? Int }.reduce(0, +)
            #expect(compared <= 5000, "\(compared) pairs compared and dropped")
            #expect(Self.tableScans(plan) == [])
        }
    }

    /// on a new pushq.due that was never analysed, a claim of 500 from a backlog of 20 000 walks due_order
    /// and reads 500 entries, not the backlog
    @Test("on a never-analysed pushq.due, a claim of 500 from 20 000 walks due_order and reads 500 entries, not the backlog", arguments: [false, true])
    func noStatistics(considerate: Bool) async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, rank) VALUES ('campaign', 200)")
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane)
                SELECT lpad(to_hex(g), 64, '0'), '{}', 'campaign' FROM generate_series(1, 20000) g
                """)
            let claim = Self.claim(limit: 500, credentials: ["default"], budget: nil, considerate: considerate)
            try await c.execute("BEGIN")
            let r = try await c.query("EXPLAIN (ANALYZE, FORMAT JSON) " + claim.sql, claim.parameters)
            try await c.execute("ROLLBACK")
            let plan = try Self.json(r)
            #expect(Self.laneWalks(plan) == ["due_order"])
            let walked = Self.nodes(plan).filter { $0["Index Name"] as? String == "due_order" && "\($0["Index Cond"] ?? "")".contains("q.lane") }
                .compactMap { $0["Actual Rows"] as? Int }
            #expect(walked == [500], "entries read by the lane's walk: \(walked)")
            #expect(Self.tableScans(plan) == [])
        }
    }

    @Test("a row of a lane due after a campaign's rows is found through due_order, also when ANALYZE saw the campaign alone", arguments: [false, true])
    func campaignStatistics(considerate: Bool) async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, rank) VALUES ('campaign', 200)")
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, scheduled_at)
                SELECT lpad(to_hex(g), 64, '0'), '{}', 'campaign', now() - interval '1 hour'
                  FROM generate_series(1, 100000) g
                """)
            // Statistics of the campaign alone: every entry of pushq.due is estimated to be in
            // any lane. (The `default` row comes after ANALYZE, as a password reset comes after
            // autovacuum sampled a campaign.) pushq.due has no index in due order across lanes,
            // so each lane is still a range of due_order, never a walk past the campaign.
            try await c.query("ANALYZE pushq.notifications, pushq.due")
            let reset = try await c.query("INSERT INTO pushq.notifications (device_token, payload) VALUES (repeat('ab', 32), '{}') RETURNING id")
                .decode(Int64.self, 0, 0)
            #expect(try await c.query("SELECT n_distinct FROM pg_stats WHERE tablename = 'due' AND attname = 'lane'")
                        .decode(Double.self, 0, 0) == 1, "premise: ANALYZE saw one lane")
            let walks = Self.laneWalks(try await plan(c, limit: 500, credentials: ["default"], considerate: considerate))
            #expect(!walks.isEmpty && walks.allSatisfy { $0 == "due_order" }, "\(walks)")
            let generic = Self.laneWalks(try await genericPlan(c, limit: 500, credentials: ["default"], considerate: considerate))
            #expect(!generic.isEmpty && generic.allSatisfy { $0 == "due_order" }, "generic plan: \(generic)")
            let batch = try await c.claim(limit: 500, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production, considerate: considerate)
            #expect(batch.rows.first?.id == reset && batch.rows.count == 500, "the lower rank first, then the campaign")
        }
    }

    /// with a capped lane and a capped credential, no step of the claim reads the whole table (the claim's
    /// size is a LIMIT the planner can read)
    @Test("with a capped lane and a capped credential, no step of the claim reads the whole table", arguments: [false, true])
    func cappedClaimsUseIndexes(considerate: Bool) async throws {
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
            #expect(Self.tableScans(try await plan(c, considerate: considerate)) == [], "no cap")
            #expect(Self.tableScans(try await plan(c, credentials: ["b"], budget: cap, considerate: considerate)) == [], "a capped credential")
            try await c.query("UPDATE pushq.lanes SET max_per_second = 1000 WHERE name = 'default'")
            try await c.ensureBudgets(["lane:default"])
            try await c.query("UPDATE pushq.rate_budgets SET refilled_at = now() - interval '1 hour'")
            #expect(Self.tableScans(try await plan(c, considerate: considerate)) == [], "a capped lane")
            #expect(Self.tableScans(try await plan(c, credentials: ["b"], budget: cap, considerate: considerate)) == [], "a capped lane and a capped credential")
            #expect(Self.tableScans(try await genericPlan(c, considerate: considerate)) == [], "a capped lane, generic plan")
            #expect(Self.tableScans(try await genericPlan(c, credentials: ["b"], budget: cap, considerate: considerate)) == [], "both capped, generic plan")
            // And the capped claim still takes its budget's rows of its credential alone.
            let batch = try await c.claim(limit: 500, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["b"]],
                                          defaultEnvironment: .production, budget: cap, considerate: considerate)
            #expect(batch.rows.count == 250 && batch.heldBackByCap, "a quarter second of 1 000/s")
            #expect(try await c.query("""
                SELECT count(*) FROM pushq.notifications WHERE status = 'sending' AND credential IS DISTINCT FROM 'b'
                """).decode(Int.self, 0, 0) == 0)
        }
    }

    /// the invalid-token probe reads the index of invalidated tokens (schema 32), not the registry's primary
    /// key; a row to an invalidated token still fails
    @Test("the invalid-token probe reads the index of invalidated tokens; a row to an invalidated token still fails")
    func invalidTokenProbe() async throws {
        try await TestDatabase.withConnection { c in
            // A registry of many valid devices, 1 in 1 000 invalidated, and rows to some of them.
            try await c.query("""
                INSERT INTO pushq.devices (device_token, environment, registered_at, invalidated_at, invalid_reason)
                SELECT md5(g::text) || md5((g + 7)::text), 'production', now() - interval '1 day',
                       CASE WHEN g % 1000 = 0 THEN now() END, CASE WHEN g % 1000 = 0 THEN 'Unregistered' END
                  FROM generate_series(1, 100000) g
                """)
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload)
                SELECT md5(g::text) || md5((g + 7)::text), '{}' FROM generate_series(1, 5000) g
                """)
            try await c.query("ANALYZE pushq.devices")
            try await c.query("ANALYZE pushq.notifications")
            for (name, p) in [("custom", try await plan(c, limit: 500, credentials: ["default"])),
                              ("generic", try await genericPlan(c, limit: 500, credentials: ["default"]))] {
                let used = Set(Self.nodes(p).compactMap { $0["Index Name"] as? String })
                #expect(used.contains("devices_invalidated"), "\(name) plan: \(used)")
                #expect(!used.contains("devices_pkey") && !used.contains("devices_token_environment_key"), "\(name) plan: \(used)")
            }
            let batch = try await c.claim(limit: 5000, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production)
            let sending = batch.rows.filter { $0.verdict == .send }.count
            #expect(batch.rows.count == 5000 && sending == 4995, "the five rows to invalidated tokens (1 000, 2 000 … 5 000) are not sent")
            #expect(try await c.query("""
                SELECT count(*) FROM pushq.notifications WHERE status = 'failed' AND last_reason = 'TokenInvalidated'
                """).decode(Int.self, 0, 0) == 5)
        }
    }

    /// on a table of 10 000 rows or more the claim is prepared once per session and runs on its generic plan
    /// from the first run, also while an endpoint is held; a new session prepares it again; a probe is not
    /// prepared; once the statistics say under 10 000 rows each claim is planned anew
    @Test("on 10 000 rows or more the claim is prepared once per session and runs its generic plan; below, planned anew")
    func preparedOnce() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload)
                SELECT lpad(to_hex(g), 64, '0'), '{}' FROM generate_series(1, 40) g
                """)
            // Rows kept for retention: the statistics count 12 040 rows.
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, status, attempts, finished_at)
                SELECT lpad(to_hex(g), 64, '0'), '{}', 'sent', 1, now() FROM generate_series(41, 12040) g
                """)
            try await c.query("ANALYZE pushq.notifications")
            func claim(_ limit: Int, only: Endpoint? = nil) async throws -> Int {
                try await c.claim(limit: limit, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]],
                                  defaultEnvironment: .production, only: only).rows.count
            }
            func statements() async throws -> [[Int]] {
                let r = try await c.query("""
                    SELECT generic_plans, custom_plans FROM pg_prepared_statements
                     WHERE statement LIKE 'WITH RECURSIVE waiting%' ORDER BY name
                    """)
                return try (0..<r.count).map { [try r.decode(Int.self, $0, 0) ?? -1, try r.decode(Int.self, $0, 1) ?? -1] }
            }
            for _ in 0..<8 { #expect(try await claim(2) == 2) }
            #expect(try await statements() == [[8, 0]], "one statement, run 8 times, each on its generic plan")
            #expect(try await c.query("SHOW plan_cache_mode").string(0, 0) == "auto", "set for the claim's transaction alone")
            #expect(try await claim(3) == 3, "a claim of 3: another size bound (4), another text")
            #expect(try await statements().count == 2)
            try await Holds.add(c, [Endpoint(credential: "other", environment: .production)])
            #expect(try await claim(2) == 2)
            #expect(try await statements() == [[9, 0], [1, 0]], "a hold is read by the statement: the same text, prepared")
            #expect(try await claim(2, only: Endpoint(credential: "default", environment: .production)) == 2)
            #expect(try await statements().count == 2, "a probe runs unprepared")
            await c.dropSession()
            #expect(try await claim(2) == 2)
            #expect(try await statements() == [[1, 0]], "the new session prepared it again")
            // Retention empties the table: by its statistics under 10 000 rows, each claim is planned
            // for the table as it is then, the same prepared text.
            try await c.query("DELETE FROM pushq.notifications WHERE status = 'sent'")
            try await c.query("VACUUM ANALYZE pushq.notifications")
            for _ in 0..<3 { #expect(try await claim(2) == 2) }
            #expect(try await statements() == [[1, 3]], "three custom plans")
            #expect(try await c.query("SHOW plan_cache_mode").string(0, 0) == "auto")
            #expect(try await c.query("SHOW enable_seqscan").string(0, 0) == "on", "scans off for the claim's transaction alone")
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
