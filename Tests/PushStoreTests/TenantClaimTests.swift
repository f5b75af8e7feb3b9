import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// Fair shares between tenants (issue 48, item 5) in the store: `pushq.notifications.tenant` and its
/// shape rule, the tenant carried into `pushq.due`, and the claim that takes a lane's due rows of
/// different tenants in turn (NULL one tenant of its own), from a start that moves every claim, in
/// lanes with quiet hours too; a 0.4.0 worker's claim still takes tenanted rows.
///
/// Every assertion is by structure (which rows a claim holds), never by time.
@Suite("Tenants in the claim")
struct TenantClaimTests {
    static func claim(_ c: PGConnection, limit: Int, rotation: Int = 0) async throws -> ClaimBatch {
        try await c.claim(limit: limit, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]],
                          defaultEnvironment: .production, rotation: rotation)
    }

    /// Inserts `count` APNs rows of `tenant` (NULL: none) in `lane`, due `ago` (an interval) ago.
    static func insert(_ c: PGConnection, tenant: String?, count: Int, lane: String = "default", ago: String = "0 seconds") async throws {
        try await c.query("""
            INSERT INTO pushq.notifications (device_token, payload, lane, tenant, scheduled_at)
            SELECT lpad(to_hex(i), 64, '0'), '{"aps":{}}', $2, $1, now() - $4::interval - i * interval '1 microsecond'
              FROM generate_series(1, $3::int) i
            """, [tenant, lane, count, ago])
    }

    /// The tenants of rows `ids`, each with its count: `A:50,B:50` (`-` for NULL), sorted.
    static func tenants(_ c: PGConnection, _ ids: [Int64]) async throws -> String {
        try await c.query("""
            SELECT COALESCE(string_agg(t || ':' || n, ',' ORDER BY t), '')
              FROM (SELECT COALESCE(tenant, '-') AS t, count(*) AS n FROM pushq.notifications WHERE id = ANY ($1) GROUP BY 1) x
            """, [ids]).string(0, 0) ?? "?"
    }

    /// tenant A's 30 000 rows due first, B's rows inserted after them: the next claim holds B's rows (and fills
    /// with A's); with as many of B's as the claim takes, the two share it evenly
    @Test("a tenant's few rows behind another's 30 000 due rows are in the next claim; two backlogs share it evenly")
    func tenantsInTurn() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.insert(c, tenant: "A", count: 30_000, ago: "1 hour")
            try await c.query("ANALYZE pushq.due")
            try await Self.insert(c, tenant: "B", count: 10)
            let first = try await Self.claim(c, limit: 100)
            #expect(first.rows.allSatisfy { $0.verdict == .send })
            #expect(try await Self.tenants(c, first.rows.map(\.id)) == "A:90,B:10", "B's ten rows, and A's oldest to fill the claim")
            let oldestA = try await c.query("""
                SELECT count(*) FROM pushq.notifications WHERE tenant = 'A' AND status = 'sending'
                   AND scheduled_at <= (SELECT min(scheduled_at) FROM pushq.notifications WHERE tenant = 'A' AND status = 'queued')
                """).string(0, 0)
            #expect(oldestA == "90", "A's rows taken are its oldest")
            try await Self.insert(c, tenant: "B", count: 500)
            let second = try await Self.claim(c, limit: 100)
            #expect(try await Self.tenants(c, second.rows.map(\.id)) == "A:50,B:50")
        }
    }

    @Test("NULL is one tenant of its own: untenanted rows behind a tenant's backlog are in the next claim")
    func nullTenant() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.insert(c, tenant: "A", count: 3_000, ago: "1 hour")
            try await Self.insert(c, tenant: nil, count: 5)
            let batch = try await Self.claim(c, limit: 40)
            #expect(try await Self.tenants(c, batch.rows.map(\.id)) == "-:5,A:35")
            // And the other way round: a tenant's rows behind untenanted ones.
            try await Self.insert(c, tenant: nil, count: 3_000, lane: "other", ago: "1 hour")
            try await Self.insert(c, tenant: "C", count: 5, lane: "other")
            try await c.query("UPDATE pushq.notifications SET status = 'cancelled' WHERE lane = 'default' AND status = 'queued'")
            let other = try await Self.claim(c, limit: 40)
            #expect(try await Self.tenants(c, other.rows.map(\.id)) == "-:35,C:5")
        }
    }

    /// three tenants A, B, C (A's rows oldest), claims of 2: each claim starts where the last one's
    /// turn ended (rotation 0: A B, 1: C A, 2: B C)
    @Test("the tenant a claim starts with moves on from claim to claim (the rotation)")
    func rotation() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.insert(c, tenant: "A", count: 10, ago: "3 hours")
            try await Self.insert(c, tenant: "B", count: 10, ago: "2 hours")
            try await Self.insert(c, tenant: "C", count: 10, ago: "1 hour")
            var taken: [String] = []
            for rotation in 0..<3 {
                let batch = try await Self.claim(c, limit: 2, rotation: rotation)
                taken.append(try await Self.tenants(c, batch.rows.map(\.id)))
            }
            #expect(taken == ["A:1,B:1", "A:1,C:1", "B:1,C:1"])
            // The rows of each tenant go in due order: after three claims, each tenant's two oldest.
            let oldest = try await c.query("""
                SELECT string_agg(tenant || ':' || ok::text, ',' ORDER BY tenant) FROM (
                    SELECT tenant, bool_and(rn <= 2) AS ok FROM (
                        SELECT tenant, status, row_number() OVER (PARTITION BY tenant ORDER BY scheduled_at) AS rn
                          FROM pushq.notifications) x WHERE status = 'sending' GROUP BY tenant) y
                """).string(0, 0)
            #expect(oldest == "A:true,B:true,C:true")
        }
    }

    /// a lane with quiet hours (a window that opens in an hour in UTC, so its rows are outside it now): the rows
    /// it takes are in turn too; a tenant's row inside its window (Lagos, an hour ahead) is moved, not taken
    @Test("a quiet lane's rows of different tenants are taken in turn; a row inside its window still moves")
    func quietLaneWithTenants() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.lanes (name, quiet_start, quiet_end, time_zone)
                VALUES ('quiet', ((now() AT TIME ZONE 'UTC') + interval '1 hour')::time, ((now() AT TIME ZONE 'UTC') + interval '2 hours')::time, 'UTC')
                """)
            try await Self.insert(c, tenant: "A", count: 2_000, lane: "quiet", ago: "1 hour")
            try await Self.insert(c, tenant: "B", count: 5, lane: "quiet")
            // Inside: Lagos is an hour ahead of UTC all year, so there the window is open now.
            let inside = try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, tenant, time_zone)
                VALUES (repeat('ee', 32), '{"aps":{}}', 'quiet', 'B', 'Africa/Lagos') RETURNING id
                """).decode(Int64.self, 0, 0) ?? 0
            let batch = try await Self.claim(c, limit: 40)
            #expect(try await Self.tenants(c, batch.rows.map(\.id)) == "A:35,B:5")
            #expect(batch.rows.allSatisfy { $0.quietWindow != nil }, "a quiet lane's rows carry their window")
            #expect(try await c.query("SELECT held FROM pushq.due WHERE id = $1", [inside]).string(0, 0) == "quiet",
                    "B's row in a zone inside its window waits for its end")
        }
    }

    @Test("the tenant's shape: 1–64 of the lane alphabet or NULL; refused at INSERT and UPDATE naming the column")
    func shape() async throws {
        try await TestDatabase.withConnection { c in
            for bad in ["", "acme corp", "a/b", String(repeating: "x", count: 65), "é"] {
                let error = await #expect(throws: PGError.self) {
                    try await c.query("INSERT INTO pushq.notifications (device_token, payload, tenant) VALUES (repeat('ab', 32), '{}', $1)", [bad])
                }
                #expect(error?.sqlState == "23514", "\(bad)")
                #expect(error?.constraint == "notifications_tenant_shape", "\(bad)")
                #expect(error?.column == "tenant" && error?.message.contains("tenant") == true, "\(String(describing: error))")
            }
            let good = String(repeating: "A", count: 60) + "_.:-"
            let id = try await c.query("INSERT INTO pushq.notifications (device_token, payload, tenant) VALUES (repeat('ab', 32), '{}', $1) RETURNING id",
                                       [good]).decode(Int64.self, 0, 0) ?? 0
            #expect(try await c.query("SELECT tenant FROM pushq.due WHERE id = $1", [id]).string(0, 0) == good, "the entry carries it")
            await #expect(throws: PGError.self) {
                try await c.query("UPDATE pushq.notifications SET tenant = 'no spaces' WHERE id = $1", [id])
            }
            // A waiting row given another tenant (or none): its entry follows, in its place.
            let due = try await c.query("SELECT due_at::text FROM pushq.due WHERE id = $1", [id]).string(0, 0)
            try await c.query("UPDATE pushq.notifications SET tenant = 'other' WHERE id = $1", [id])
            #expect(try await c.query("SELECT tenant || '|' || due_at::text FROM pushq.due WHERE id = $1", [id]).string(0, 0) == "other|" + (due ?? ""))
            try await c.query("UPDATE pushq.notifications SET tenant = NULL WHERE id = $1", [id])
            #expect(try await c.query("SELECT COALESCE(tenant, '-') FROM pushq.due WHERE id = $1", [id]).string(0, 0) == "-")
        }
    }

    /// a worker of 0.4.0 (or of 109: the same walk of due_order) knows nothing of tenants: its claim takes
    /// tenanted rows like any other, and they are written back sent
    @Test("a 0.4.0 worker's claim takes and sends tenanted rows (the tenant is only an order)")
    func olderWorker() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.insert(c, tenant: "A", count: 20, ago: "1 hour")
            try await Self.insert(c, tenant: nil, count: 5)
            let taken = try await WebPushMigrationTests.claimAs040(c)
            #expect(taken.count == 25 && taken.allSatisfy { $0.verdict == "sending" })
            let rows = try await c.query("SELECT id, attempts, (extract(epoch FROM locked_until) * 1000000)::bigint AS lease FROM pushq.notifications")
            let completions = try rows.rows.map {
                RowCompletion(id: try $0.decode(Int64.self, "id"), attempt: try $0.decode(Int.self, "attempts"),
                              lease: try $0.decode(Int64.self, "lease"), disposition: Disposition(status: .sent, reason: nil, retryDelay: 0), httpStatus: 200, apnsUniqueID: nil)
            }
            try await c.complete(completions, invalidations: [], holds: [], resumed: [], workerID: "w-0.4.0")
            #expect(try await c.query("SELECT string_agg(DISTINCT status, ',') FROM pushq.notifications").string(0, 0) == "sent")
        }
    }
}
