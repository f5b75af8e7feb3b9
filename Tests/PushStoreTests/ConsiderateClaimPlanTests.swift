import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// The claim on a million rows with everything issue 48 adds set at once (1 000 tenants, quiet hours
/// on 100 lanes with rows in several zones, a lane capped per recipient for 100 000 recipients with
/// their reservations, an uncapped bulk lane): the generic plan the worker's prepared claim runs on
/// reads every table through an index, never one whole, and no more of it than the claim walks.
@Suite("The considerate claim's plan on a million rows")
struct ConsiderateClaimPlanTests {
    /// The claim the worker sends: a batch of 500 (`PUSHQ_CLAIM_BATCH`'s default), worker `w1`.
    static let claim = ClaimStatement.bound(limit: 500, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]],
                                            defaultEnvironment: .production, only: nil, row: nil, excluding: [], rotation: 0,
                                            budget: nil, belowRank: nil)

    /// The tables no step of the claim may read whole.
    static let large: Set<String> = ["notifications", "due", "recipient_sends"]

    /// `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` of the claim as a worker runs it: prepared (no
    /// parameter types), executed in a transaction opened as the worker opens a prepared claim's
    /// (`claimBegin(prepared: true)`: the claim lock and, from 10 000 rows, `force_generic_plan`),
    /// then rolled back. Returns the plan's nodes and the plan cache mode the transaction ran with.
    static func explain(_ c: PGConnection, name: String) async throws -> (nodes: [[String: Any]], mode: String?) {
        try await c.execute(PGConnection.claimBegin(prepared: true))
        let mode = try await c.query("SHOW plan_cache_mode").string(0, 0)
        let r = try await c.query("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + ClaimPlanTests.execute(name, claim.parameters))
        try await c.execute("ROLLBACK")
        return (ClaimPlanTests.nodes(try ClaimPlanTests.json(r)), mode)
    }

    /// A million waiting rows of 1 000 tenants: 400 000 in 100 lanes with quiet hours (`quiet-0` …
    /// `quiet-99`, in force now for some of their rows' zones and not for others), 300 000 in lane
    /// `capped` (3 a day per recipient, skip; 100 000 recipients by `user_ref`, each with two
    /// reservations in the window and one older), 300 000 in the uncapped lane `bulk`; one in ten
    /// scheduled tomorrow. `capped` has the lowest rank, so the claim takes its rows (and runs the
    /// cap step); the quiet walk runs whatever the order. Built in four INSERT … SELECT of 250 000
    /// rows, and 300 000 reservations: 36 s on the shared 2-core machine (PostgreSQL 15, load average
    /// 4 from other tests), 56 s with a bench running beside it.
    static func load(_ c: PGConnection) async throws {
        // Windows from an hour before to an hour after now in UTC: inside for rows read in UTC
        // (and Europe/London in winter), outside for Asia/Kolkata (+05:30), Pacific/Kiritimati (+14)
        // and America/New_York; the lanes' own zones differ too (rows without one use the lane's).
        try await c.query("""
            INSERT INTO pushq.lanes (name, rank, quiet_start, quiet_end, time_zone, note)
            SELECT 'quiet-' || g, 200, ((now() AT TIME ZONE 'UTC') - interval '1 hour')::time,
                   ((now() AT TIME ZONE 'UTC') + interval '1 hour')::time,
                   (ARRAY['UTC', 'Asia/Kolkata', 'Pacific/Kiritimati', 'America/New_York'])[g % 4 + 1], 'ConsiderateClaimPlanTests'
              FROM generate_series(0, 99) g
            """)
        try await c.query("""
            INSERT INTO pushq.lanes (name, rank, recipient_cap, recipient_window, over_cap, note)
            VALUES ('capped', 100, 3, interval '1 day', 'skip', 'ConsiderateClaimPlanTests')
            """)
        try await c.query("INSERT INTO pushq.lanes (name, rank, note) VALUES ('bulk', 200, 'ConsiderateClaimPlanTests')")
        try await c.query("""
            INSERT INTO pushq.recipient_sends (lane, recipient, sent_at, id)
            SELECT 'capped', pushq.recipient_key('user-' || k, 'apns', NULL),
                   now() - CASE j WHEN 2 THEN interval '2 days' ELSE (k % 3600 + j) * interval '1 second' END, 2000000 + 3 * k + j
              FROM generate_series(0, 99999) k, generate_series(0, 2) j
            """)
        for chunk in 0..<4 {
            let first = chunk * 250_000 + 1
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, time_zone, user_ref, tenant, scheduled_at)
                SELECT lpad(to_hex(g), 64, '0'), '{"aps":{"alert":"plan"}}',
                       CASE WHEN g <= 400000 THEN 'quiet-' || g % 100 WHEN g <= 700000 THEN 'capped' ELSE 'bulk' END,
                       (ARRAY[NULL, 'UTC', 'Asia/Kolkata', 'Pacific/Kiritimati', 'America/New_York', 'Europe/London'])[g % 6 + 1],
                       'user-' || g % 100000, 'tenant-' || g % 1000,
                       CASE WHEN g % 10 = 0 THEN now() + interval '1 day' ELSE now() - interval '1 minute' END
                  FROM generate_series(\(first), \(first + 249_999)) g
                """)
        }
        try await c.query("VACUUM ANALYZE pushq.notifications")
        try await c.query("VACUUM ANALYZE pushq.due")
        try await c.query("VACUUM ANALYZE pushq.recipient_sends")
    }

    /// Rows a scan node returned over all its loops.
    static func rowsRead(_ node: [String: Any]) -> Int {
        (node["Actual Rows"] as? Int ?? 0) * (node["Actual Loops"] as? Int ?? 1)
    }

    @Test("a million rows: 1 000 tenants, 100 quiet lanes, a capped lane of 100 000 recipients; no table read whole")
    func millionRows() async throws {
        try await TestDatabase.with { url in
            // Loading a million rows takes one statement longer than the default deadline on a busy machine.
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger, statementDeadline: .seconds(600))
            let started = ContinuousClock.now
            try await Self.load(c)
            let loading = ContinuousClock.now - started
            #expect(try await c.query("SELECT count(*) FROM pushq.due").decode(Int.self, 0, 0) == 1_000_000)

            let name = "considerate_claim"
            try await c.query("PREPARE \(name) AS " + Self.claim.sql)
            let (nodes, mode) = try await Self.explain(c, name: name)
            #expect(mode == "force_generic_plan", "the worker's prepared claim on a table of a million rows")
            let reads = nodes.filter { ($0["Node Type"] as? String ?? "").hasSuffix("Scan") && Self.large.contains($0["Relation Name"] as? String ?? "") }
            let whole = reads.filter { $0["Node Type"] as? String == "Seq Scan" }
            #expect(whole.map { $0["Relation Name"] as? String ?? "?" } == [], "read whole")
            // Index-backed: every read of them is an index's, and none reads more than the claim
            // walks (its quiet walk at most 5 × 512 entries; a table read whole would be ~900 000).
            let bound = 5 * ClaimStatement.sizeBound(500) + 500
            func describe(_ n: [String: Any]) -> String {
                "\(n["Node Type"] ?? "") \(n["Relation Name"] ?? "") \(n["Index Name"] ?? "-") \(n["Index Cond"] ?? ""): \(Self.rowsRead(n)) rows"
            }
            let heavy = reads.filter { ($0["Index Name"] == nil) || Self.rowsRead($0) > bound }
            // (At 7ca457a, before 16cd218, tenant_walk built the walk of every lane of `queue`, a quiet
            // lane's share 5 × the claim's size: 226 800 entries of due_tenant here, ~410 ms of a
            // ~460 ms claim. This failed on it.)
            #expect(heavy.map(describe) == [], "no read of more than \(bound) rows")
            // The quiet lanes' walk ran, a range of due_order (or of due_tenant, tenant by tenant,
            // or due_tenanted for whether the lane has tenants at all) per lane, and moved the entries
            // inside their window (in force for the rows read in UTC and London).
            let quietWalk = reads.filter { "\($0["Index Cond"] ?? "")".contains("ql.lane") }
            #expect(!quietWalk.isEmpty && quietWalk.allSatisfy { ["due_order", "due_tenant", "due_tenanted"].contains($0["Index Name"] as? String ?? "") }
                    && quietWalk.contains { $0["Actual Loops"] as? Int ?? 0 > 0 }, "\(quietWalk.map { "\($0["Index Name"] ?? "?") \($0["Actual Loops"] ?? "?")" })")
            let moved = nodes.filter { $0["Node Type"] as? String == "ModifyTable" && $0["Operation"] as? String == "Update" && $0["Relation Name"] as? String == "due" }
            #expect(moved.contains { $0["Actual Rows"] as? Int ?? 0 > 0 }, "entries inside their window moved: \(moved.map { $0["Actual Rows"] ?? "?" })")
            // The tenants' walk ran on due_tenant; the cap step probed recipient_sends' primary key
            // once per row of the capped lane it took (each recipient: two sends in the window).
            let tenantWalk = reads.filter { $0["Index Name"] as? String == "due_tenant" }
            #expect(tenantWalk.contains { $0["Actual Loops"] as? Int ?? 0 > 0 }, "the tenants' walk")
            let capProbe = reads.filter { $0["Relation Name"] as? String == "recipient_sends" }
            #expect(!capProbe.isEmpty && capProbe.allSatisfy { $0["Index Name"] as? String == "recipient_sends_pkey" }
                    && capProbe.contains { $0["Actual Loops"] as? Int ?? 0 >= 500 }, "\(capProbe.map { "\($0["Index Name"] ?? "?") \($0["Actual Loops"] ?? "?")" })")
            let top = try #require(nodes.first { $0["Node Type"] != nil }, "the plan's root")
            #expect(top["Actual Rows"] as? Int ?? 0 >= 500, "the claim took its 500 rows")
            // Measured at 16cd218: 75–77 ms for the claim on PostgreSQL 15, 66 ms on 18; the same rows
            // without tenants and caps, 47–55 ms (the quiet walk's 2 560 probes and the move of
            // ~1 700 entries most of it).
            print("ConsiderateClaimPlanTests: loaded in \(loading); claim \(top["Actual Total Time"] ?? "?") ms")
            await c.close()
        }
    }
}
