import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// pushq.due.retrying (schemas 43 and 44): the waiting rows counted `queued` and `retrying` apart
/// from pushq.due, not through an index of the row's status.
@Suite("Waiting rows counted from pushq.due")
struct DueRetryingTests {
    static func token(_ n: Int) -> String { String(format: "%064x", n) }

    /// Each entry's id and `retrying` (`true`, `false`, `-` for NULL), in id order.
    static func flags(_ c: PGConnection) async throws -> [String] {
        let r = try await c.query("SELECT id || ' ' || COALESCE(retrying::text, '-') FROM pushq.due ORDER BY id")
        return (0..<r.count).map { r.string($0, 0) ?? "" }
    }

    // 3 queued, 2 retrying, 1 in flight under a lapsed lease (a 0.3.0 worker that died), 1 sent.
    @Test("a 0.3.0 database upgrades: entries get their row's retrying, a lapsed lease's row an unknown one; the counts are exact")
    func upgradeFillsTheFlag() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let before = Migration.all.filter { $0.version <= SchemaHistory.release030 }
            #expect(try await c.migrate(before, logger: TestDatabase.logger) == before.map(\.version))
            let ids = try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, status, attempts, last_reason, locked_by, locked_until, finished_at)
                SELECT lpad(to_hex(g), 64, '0'), '{}',
                       (ARRAY['queued', 'queued', 'queued', 'retrying', 'retrying', 'sending', 'sent'])[g],
                       CASE WHEN g >= 4 THEN 1 ELSE 0 END, CASE WHEN g IN (4, 5) THEN 'InternalServerError' END,
                       CASE WHEN g = 6 THEN 'dead' END, CASE WHEN g = 6 THEN now() - interval '1 second' END,
                       CASE WHEN g = 7 THEN now() END
                  FROM generate_series(1, 7) g
                RETURNING id
                """)
            let id = try (0..<ids.count).map { try ids.decode(Int64.self, $0, 0) ?? 0 }
            #expect(try await c.migrate(logger: TestDatabase.logger) == Migration.all.map(\.version).filter { $0 > 11 })
            #expect(try await Self.flags(c) == ["\(id[0]) false", "\(id[1]) false", "\(id[2]) false", "\(id[3]) true", "\(id[4]) true"])
            // The lapsed row's lease row (the gated part 4 gave it one) ends: the upkeep gives it an entry, retrying unknown.
            #expect(try await c.recoverLapsedLeases(limit: 10).rows == 1)
            #expect(try await Self.flags(c).last == "\(id[5]) -")
            var status = try await c.queueStatus(failureMinutes: 60)
            #expect(status.counts["queued"] == 3 && status.counts["retrying"] == 2 && status.counts["sending"] == 1 && status.counts["sent"] == 1,
                    "\(status.counts)")

            // An entry whose flag is unknown is counted by its row's status: a queued row's entry
            // written without the flag (as a worker of an earlier release's upkeep would).
            try await c.query("UPDATE pushq.due SET retrying = NULL WHERE id = $1", [id[0]])
            status = try await c.queueStatus(failureMinutes: 60)
            #expect(status.counts["queued"] == 3 && status.counts["retrying"] == 2, "\(status.counts)")
            try await c.query("UPDATE pushq.due SET retrying = false WHERE id = $1", [id[0]])

            // The flags follow the rows: a retried row queued again by an operator, a queued row
            // rescheduled, a new retrying row, and the lapsed row claimed and retried.
            try await c.query("UPDATE pushq.notifications SET status = 'queued' WHERE id = $1", [id[3]])
            try await c.query("UPDATE pushq.notifications SET scheduled_at = now() + interval '1 hour' WHERE id = $1", [id[1]])
            try await c.query("INSERT INTO pushq.notifications (device_token, payload, status, attempts) VALUES ($1, '{}', 'retrying', 1)", [Self.token(99)])
            let claimed = try await c.claim(limit: 1, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]],
                                            defaultEnvironment: .production).rows
            #expect(claimed.map(\.id) == [id[5]], "the lapsed row first: it became due when its lease ended")
            let row = try #require(claimed.first)
            #expect(try await c.complete([
                RowCompletion(id: row.id, attempt: row.attempts, lease: row.lease,
                              disposition: Disposition(status: .retrying, reason: "InternalServerError", retryDelay: 60),
                              httpStatus: 500, apnsUniqueID: nil),
            ], invalidations: [], holds: [], resumed: [], workerID: "w1").updated == 1)
            let (due, waiting) = try await DueTableTests.entries(c)
            #expect(due == waiting && due.count == 7, "every entry's flag is its row's status")
            status = try await c.queueStatus(failureMinutes: 60)
            #expect(status.counts["queued"] == 4 && status.counts["retrying"] == 3 && status.counts["sending"] == 0, "\(status.counts)")
            await c.close()
        }
    }
}
