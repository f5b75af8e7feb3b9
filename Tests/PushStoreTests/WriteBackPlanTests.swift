import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// How PostgreSQL plans the write-back when its statistics see almost no row in flight: the
/// state autovacuum's ANALYZE leaves behind during a long drain (docs/performance.md, "The
/// write-back's plan after ANALYZE").
@Suite("The write-back's plan")
struct WriteBackPlanTests {
    /// The node types of an `EXPLAIN (FORMAT JSON)` plan.
    static func nodeTypes(_ plan: Any) -> [String] {
        nodes(plan).compactMap { $0["Node Type"] as? String }
    }

    /// Every node of the plan but the frequency caps' unreserve (`CTE unreserved`): a lateral probe
    /// of recipient_sends' primary key per row not sent, a nested loop by design (one descent per
    /// row, never a pair of scans), checked apart in ``noNestedLoop()``.
    static func nodes(_ plan: Any) -> [[String: Any]] {
        if let list = plan as? [Any] { return list.flatMap(nodes) }
        guard let node = plan as? [String: Any], node["Subplan Name"] as? String != "CTE unreserved" else { return [] }
        return [node] + node.values.flatMap(nodes)
    }

    /// The unreserve's nodes (``nodes(_:)`` leaves them out).
    static func unreserveNodes(_ plan: Any) -> [[String: Any]] {
        let step = ClaimPlanTests.nodes(plan).first { $0["Subplan Name"] as? String == "CTE unreserved" }
        return step.map { ClaimPlanTests.nodes($0) } ?? []
    }

    /// A table of 100 000 rows, analysed while none was `sending`, whose lease index still
    /// holds the dead entries of 60 000 rows claimed and finished since the last vacuum;
    /// then `w1` claims the last 1 000. Returns their write-backs as sent.
    func tableWithASliverInFlight(_ c: PGConnection) async throws -> [RowCompletion] {
        try await c.query("ALTER TABLE pushq.notifications SET (autovacuum_enabled = false)")
        try await c.query("""
            INSERT INTO pushq.notifications (device_token, payload, scheduled_at)
            SELECT lpad(to_hex(g), 64, '0'), '{}', now() - interval '1 hour' + g * interval '1 millisecond'
              FROM generate_series(1, 100000) g
            """)
        try await c.query("""
            UPDATE pushq.notifications SET status = 'sending', attempts = 1, locked_by = 'earlier',
                   locked_until = now() + interval '1 hour'
             WHERE id <= 60000
            """)
        try await c.query("""
            UPDATE pushq.notifications SET status = 'sent', finished_at = now(), sent_at = now(),
                   locked_by = NULL, locked_until = NULL
             WHERE id <= 60000
            """)
        try await c.query("UPDATE pushq.notifications SET status = 'sent', finished_at = now() WHERE id > 60000 AND id <= 99000")
        try await c.query("ANALYZE pushq.notifications")
        var rows: [ClaimedNotification] = []
        while rows.count < 1000 {
            let batch = try await c.claim(limit: 500, workerID: "w1", leaseSeconds: 600, credentials: [.apns: ["default"]],
                                          defaultEnvironment: .production)
            try #require(!batch.rows.isEmpty)
            rows += batch.rows
        }
        return rows.map {
            RowCompletion(id: $0.id, attempt: $0.attempts, lease: $0.lease, disposition: Disposition(status: .sent, reason: nil),
                          httpStatus: 200, apnsUniqueID: nil)
        }
    }

    /// The plan of the write-back of `completions` as the worker sends it, in a transaction
    /// opened with `begin`.
    func plan(_ c: PGConnection, _ completions: [RowCompletion], begin: String) async throws -> Any {
        let text = try await c.transaction(begin: begin) { c in
            try c.query("EXPLAIN (FORMAT JSON) " + PGConnection.completeSQL,
                        PGConnection.completeParameters(completions, workerID: "w1")).string(0, 0) ?? ""
        }
        return try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    /// with the rows in flight a sliver of what ANALYZE saw, the write-back is planned without a nested loop
    /// for a batch of 1 or 1 000 (PostgreSQL otherwise picks one), and writes back every row
    @Test("with few rows in flight against ANALYZE, the write-back avoids a nested loop for 1 or 1 000 rows and writes them all")
    func noNestedLoop() async throws {
        try await TestDatabase.withConnection { c in
            let completions = try await tableWithASliverInFlight(c)
            let estimate = try await c.query("""
                EXPLAIN (FORMAT JSON) SELECT 1 FROM pushq.notifications WHERE status = 'sending' AND locked_by = 'w1'
                """)
            let rows = ClaimPlanTests.nodes(try ClaimPlanTests.json(estimate))
                .compactMap { $0["Plan Rows"] as? NSNumber }.first?.intValue
            #expect(rows.map { $0 < 10 } == true, "the statistics see almost nothing in flight (1 000 are): \(String(describing: rows))")
            // Left to itself, PostgreSQL joins a batch it estimates as small as the rows it
            // expects in flight by a nested loop: the plan that goes quadratic when both are large.
            let alone = Self.nodeTypes(try await plan(c, Array(completions.prefix(1)), begin: "BEGIN"))
            #expect(alone.contains("Nested Loop"), "the premise: \(alone)")
            for batch in [Array(completions.prefix(1)), completions] {
                let types = Self.nodeTypes(try await plan(c, batch, begin: PGConnection.fencedUpdateBegin))
                #expect(!types.contains("Nested Loop"), "\(batch.count) rows: \(types)")
                #expect(types.contains("Hash Join") || types.contains("Merge Join"), "\(batch.count) rows: \(types)")
                let fenced = try await plan(c, batch, begin: PGConnection.fencedUpdateBegin)
                let scans = ClaimPlanTests.nodes(fenced)
                    .filter { $0["Relation Name"] as? String == "notifications" }.compactMap { $0["Node Type"] as? String }
                #expect(!scans.isEmpty && !scans.contains("Seq Scan"), "the rows by primary key, not the whole table: \(scans)")
                let probes = Self.unreserveNodes(fenced).filter { $0["Relation Name"] as? String == "recipient_sends" }
                #expect(probes.contains { $0["Index Name"] as? String == "recipient_sends_pkey" } && !probes.contains { $0["Node Type"] as? String == "Seq Scan" && $0["Alias"] as? String == "e" },
                        "reservations by primary key: \(probes.map { $0["Node Type"] ?? "?" })")
            }
            let write = try await c.complete(completions, invalidations: [], holds: [], resumed: [], workerID: "w1")
            #expect(write.updated == 1000)
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications WHERE status <> 'sent'").decode(Int.self, 0, 0) == 0)
            #expect(try await c.query("SHOW enable_nestloop").string(0, 0) == "on", "the setting ended with the write-back's transaction")
        }
    }
}
