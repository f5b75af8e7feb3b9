import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import Testing
import PGClient

/// Issue 45, item 9: a capped lane whose `pushq.rate_budgets` row is gone heals itself.
@Suite("Missing budget rows")
struct BudgetHealTests {
    @Test("a capped lane whose pushq.rate_budgets row was deleted: the worker makes it again and the lane's rows go out")
    func deletedBudgetHeals() async throws {
        try await TestDatabase.with { url in
            let db = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await db.query("INSERT INTO pushq.lanes (name, max_per_second) VALUES ('capped', 200)")
            try await db.query("DELETE FROM pushq.rate_budgets")
            try await db.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane)
                SELECT 'e' || lpad(to_hex(g), 63, '0'), '{"aps":{}}', 'capped' FROM generate_series(1, 50) g
                """)
            try await withMock { _, apnsURL in
                try await withWorker(try workerConfiguration(databaseURL: url, apnsURL: apnsURL)) { _ in
                    // Generous: 50 rows at 200/s take a quarter of a second once the bucket exists.
                    let sent = try await eventually(timeout: .seconds(60)) {
                        try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sent'") == 50
                    }
                    #expect(sent, "the capped lane's rows never went out")
                }
            }
            #expect(try await scalar(db, "SELECT count(*) FROM pushq.rate_budgets WHERE key = 'lane:capped'") == 1)
            await db.close()
        }
    }
}
