import Foundation
import PushCore
import PushStore
import Testing
import PGClient

/// Cancelling a campaign that is still queued, as docs/producers.md shows it: by lane (or by
/// lane and metadata), in batches, walking the lane's entries of pushq.due (schema 33).
@Suite("Campaign cancel")
struct CampaignCancelTests {
    /// docs/producers.md's batch, with the lane, a metadata filter (NULL: the whole lane) and
    /// the batch size as parameters. Run until it updates no row.
    static let cancelBatch = """
        WITH batch AS (
            SELECT d.id FROM pushq.due d
             WHERE d.lane = $1
               AND EXISTS (SELECT 1 FROM pushq.notifications n
                            WHERE n.id = d.id AND n.lane = d.lane AND n.status IN ('queued', 'retrying')
                              AND ($2::jsonb IS NULL OR n.metadata @> $2::jsonb)
                              FOR UPDATE SKIP LOCKED)
             LIMIT $3
        )
        UPDATE pushq.notifications SET status = 'cancelled', finished_at = now()
         WHERE id = ANY (ARRAY(SELECT id FROM batch))
        """

    static func cancel(_ c: PGConnection, lane: String, metadata: String? = nil, batch: Int) async throws -> (rows: Int, statements: Int) {
        var total = 0
        var statements = 0
        while true {
            let n = try await c.query(Self.cancelBatch, [lane, metadata, batch]).affectedRows
            statements += 1
            total += n
            if n == 0 { return (total, statements) }
        }
    }

    /// `lane/status/campaign → count`.
    static func counts(_ c: PGConnection) async throws -> [String: Int] {
        let r = try await c.query("""
            SELECT lane || '/' || status || '/' || COALESCE(metadata->>'campaign', '-'), count(*) FROM pushq.notifications GROUP BY 1
            """)
        var out: [String: Int] = [:]
        for i in 0..<r.count { out[r.string(i, 0) ?? ""] = try r.decode(Int.self, i, 1) }
        return out
    }

    static func insert(_ c: PGConnection, _ count: Int, lane: String, status: String, campaign: String?) async throws {
        try await c.query("""
            INSERT INTO pushq.notifications (device_token, payload, lane, status, metadata, locked_by, locked_until, finished_at)
            SELECT lpad(to_hex(g), 64, '0'), '{"aps":{}}', $2, $3, CASE WHEN $4::text IS NOT NULL THEN jsonb_build_object('campaign', $4::text) END,
                   CASE WHEN $3 = 'sending' THEN 'w' END, CASE WHEN $3 = 'sending' THEN now() + interval '1 minute' END,
                   CASE WHEN $3 IN ('sent', 'failed') THEN now() END
              FROM generate_series(1, $1) g
            """, [count, lane, status, campaign])
    }

    /// by lane: only that lane's queued and retrying rows become cancelled, in batches; rows in flight, final
    /// rows and other lanes are untouched
    @Test("by lane: only that lane's queued and retrying rows are cancelled, in batches; all other rows untouched")
    func byLane() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.insert(c, 30, lane: "spring_sale", status: "queued", campaign: "spring")
            try await Self.insert(c, 10, lane: "spring_sale", status: "retrying", campaign: "spring")
            try await Self.insert(c, 5, lane: "spring_sale", status: "sending", campaign: "spring")
            try await Self.insert(c, 5, lane: "spring_sale", status: "sent", campaign: "spring")
            try await Self.insert(c, 10, lane: "orders", status: "queued", campaign: nil)
            try await Self.insert(c, 5, lane: "default", status: "queued", campaign: "spring")
            let cancelled = try await Self.cancel(c, lane: "spring_sale", batch: 7)
            #expect(cancelled.rows == 40)
            #expect(cancelled.statements == 7, "six full or partial batches and the empty one that ends the loop")
            #expect(try await Self.counts(c) == [
                "spring_sale/cancelled/spring": 40, "spring_sale/sending/spring": 5, "spring_sale/sent/spring": 5,
                "orders/queued/-": 10, "default/queued/spring": 5,
            ])
            #expect(try await c.query("""
                SELECT count(*) FROM pushq.notifications WHERE status = 'cancelled' AND finished_at IS NULL
                """).decode(Int.self, 0, 0) == 0, "cancelled rows carry finished_at, for retention")
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications WHERE status = 'sending' AND locked_by = 'w'").decode(Int.self, 0, 0) == 5)
        }
    }

    @Test("by lane and metadata: one campaign of a lane shared with another")
    func byMetadata() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.insert(c, 12, lane: "marketing", status: "queued", campaign: "spring")
            try await Self.insert(c, 8, lane: "marketing", status: "queued", campaign: "autumn")
            #expect(try await Self.cancel(c, lane: "marketing", metadata: #"{"campaign":"spring"}"#, batch: 5).rows == 12)
            #expect(try await Self.counts(c) == ["marketing/cancelled/spring": 12, "marketing/queued/autumn": 8])
        }
    }

    @Test("a row a claim holds locked is skipped, not waited for; the claim sends it")
    func skipsLockedRows() async throws {
        try await TestDatabase.with { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let claimer = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await Self.insert(c, 6, lane: "spring_sale", status: "queued", campaign: nil)
            try await claimer.execute("BEGIN")
            try await claimer.query("SELECT id FROM pushq.notifications WHERE device_token = lpad('1', 64, '0') FOR UPDATE")
            // No statement timeout needed: SKIP LOCKED never waits, so this returns while the lock is held.
            #expect(try await Self.cancel(c, lane: "spring_sale", batch: 100).rows == 5)
            try await claimer.query("UPDATE pushq.notifications SET status = 'sending', locked_by = 'w', locked_until = now() + interval '1 minute' WHERE device_token = lpad('1', 64, '0')")
            try await claimer.execute("COMMIT")
            #expect(try await Self.cancel(c, lane: "spring_sale", batch: 100).rows == 0)
            #expect(try await Self.counts(c) == ["spring_sale/cancelled/-": 5, "spring_sale/sending/-": 1])
            for connection in [c, claimer] { await connection.close() }
        }
    }

    /// the batch walks the lane's entries of pushq.due and reads rows by primary key, not the table, on a
    /// table of mostly other rows, analysed, without the indexes of waiting rows (dropped by schemas 49 and
    /// 50)
    @Test("the batch walks the lane's entries of pushq.due and reads rows by primary key, not the table")
    func indexBacked() async throws {
        try await TestDatabase.withConnection { c in
            try await PruneTests.insert(c, 40_000, status: "sent", finishedAgo: 3_600)
            try await Self.insert(c, 3_000, lane: "spring_sale", status: "queued", campaign: "spring")
            try await Self.insert(c, 2_000, lane: "default", status: "queued", campaign: nil)
            try await c.execute("VACUUM ANALYZE pushq.notifications")
            try await c.execute("ANALYZE pushq.due")
            #expect(try await c.query("SELECT to_regclass('pushq.notifications_lane_due') IS NULL AND to_regclass('pushq.notifications_due') IS NULL")
                .decode(Bool.self, 0, 0) == true, "schemas 49 and 50 dropped the indexes of waiting rows")
            for metadata in [nil, #"{"campaign":"spring"}"#] {
                let r = try await c.query("EXPLAIN " + Self.cancelBatch, ["spring_sale", metadata, 10_000])
                let plan = (0..<r.count).map { r.string($0, 0) ?? "" }.joined(separator: "\n")
                #expect(plan.contains("due_order") && plan.contains("notifications_pkey"), "\(plan)")
                #expect(!plan.contains("Seq Scan on notifications"), "\(plan)")
            }
        }
    }
}
