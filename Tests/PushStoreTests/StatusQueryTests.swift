import Foundation
import PushCore
@testable import PushStore
import Testing

/// `pushq status` reads indexes, never the whole of pushq.notifications. The statements
/// checked are the constants `queueStatus` runs (internal, reached through `@testable`).
@Suite("Status queries")
struct StatusQueryTests {
    static func plan(_ c: PGConnection, _ sql: String, _ parameters: [(any PGParameter)?]) async throws -> String {
        let r = try await c.query("EXPLAIN " + sql, parameters)
        return (0..<r.count).map { r.string($0, 0) ?? "" }.joined(separator: "\n")
    }

    @Test("on a table of mostly final rows, analysed, with enable_seqscan on: the status statements use no Seq Scan on notifications (a whole-table count would); the counts are exact")
    func noSequentialScan() async throws {
        try await TestDatabase.withConnection { c in
            try await PruneTests.insert(c, 40_000, status: "sent", finishedAgo: 3_600)
            try await PruneTests.insert(c, 3_000, status: "failed", finishedAgo: 60)
            try await PruneTests.insert(c, 1_000, status: "expired", finishedAgo: 7_200)
            try await PruneTests.insert(c, 500, status: "cancelled", finishedAgo: nil, createdAgo: 100)
            try await PruneTests.insert(c, 300, status: "queued", finishedAgo: nil, createdAgo: 30)
            try await PruneTests.insert(c, 20, status: "sending", finishedAgo: nil, createdAgo: 30)
            try await PruneTests.insert(c, 40, status: "retrying", finishedAgo: nil, createdAgo: 30)
            try await c.query("UPDATE pushq.notifications SET last_reason = 'BadDeviceToken' WHERE status = 'failed'")
            try await c.execute("VACUUM ANALYZE pushq.notifications")
            #expect(try await c.query("SHOW enable_seqscan").string(0, 0) == "on")

            let whole = try await Self.plan(c, "SELECT status, count(*) FROM pushq.notifications GROUP BY status", [])
            #expect(whole.contains("Seq Scan on notifications"), "the table is big enough for the planner to scan it whole: \(whole)")
            for (sql, parameters) in PGConnection.statusStatements {
                let plan = try await Self.plan(c, sql, parameters)
                #expect(!plan.contains("Seq Scan on notifications"), "\(sql)\n\(plan)")
                #expect(plan.contains("notifications_"), "an index of notifications is used: \(plan)")
            }

            let s = try await c.queueStatus(failureMinutes: 60)
            #expect(s.finalCountsExact)
            #expect(s.counts == ["queued": 300, "sending": 20, "retrying": 40, "sent": 40_000, "failed": 3_000, "expired": 1_000, "cancelled": 500])
            #expect(s.oldestDueSeconds.map { (25...40).contains($0) } == true, "\(String(describing: s.oldestDueSeconds))")
            #expect(s.holders.count == 1 && s.holders[0].worker == "w" && s.holders[0].rows == 20)
            #expect(s.reasons.count == 1 && s.reasons[0].status == "failed" && s.reasons[0].reason == "BadDeviceToken" && s.reasons[0].rows == 3_000)
        }
    }

    @Test("above 100 000 final rows their counts are estimates near the truth; open rows stay exact")
    func estimates() async throws {
        try await TestDatabase.withConnection { c in
            try await PruneTests.insert(c, 90_000, status: "sent", finishedAgo: 3_600)
            try await PruneTests.insert(c, 30_000, status: "failed", finishedAgo: 60)
            try await PruneTests.insert(c, 123, status: "queued", finishedAgo: nil, createdAgo: 30)
            try await c.execute("ANALYZE pushq.notifications")
            let s = try await c.queueStatus(failureMinutes: 60)
            #expect(!s.finalCountsExact)
            #expect(s.counts["queued"] == 123 && s.counts["sending"] == 0 && s.counts["retrying"] == 0)
            let final = s.counts["sent", default: 0] + s.counts["failed", default: 0]
            #expect(abs(final - 120_000) < 12_000, "estimate \(final)")
        }
    }
}
