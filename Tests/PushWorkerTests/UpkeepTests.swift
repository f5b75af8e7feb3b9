import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing

/// The upkeep inside the claim loop: a mass expiry goes a few chunks a turn, between claims.
@Suite("Upkeep", .serialized)
struct UpkeepTests {
    @Test("a mass expiry does not stop claims: due rows go out while expired rows are still being ended, and the worker stays live")
    func massExpiryBetweenClaims() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                // Rows of a credential no worker serves, long past their expires_at: only the upkeep ends them.
                try await db.query("""
                    INSERT INTO pushq.notifications (device_token, payload, credential, created_at, scheduled_at, expires_at)
                    SELECT 'c' || lpad(to_hex(g), 63, '0'), '{"aps":{}}', 'nobody', now() - interval '1 hour',
                           now() - interval '1 hour', now() - interval '1 minute'
                      FROM generate_series(1, $1) g
                    """, [3000])
                try await insertAlerts(db, count: 20, prefix: "1")
                var configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                configuration.expiryChunkRows = 10
                configuration.expiryChunksPerTurn = 2
                try await withWorker(configuration) { worker in
                    let sent = try await eventually {
                        try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sent'") == 20
                    }
                    #expect(sent)
                    let waiting = try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE credential = 'nobody' AND status = 'queued'")
                    #expect(waiting > 0, "the due rows went out before the expiry of the 3000 rows was over")
                    #expect(worker.health().livenessProblems.isEmpty)
                    var alwaysLive = true
                    let done = try await eventually(timeout: .seconds(60)) {
                        if !worker.health().livenessProblems.isEmpty { alwaysLive = false }
                        return try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'expired'") == 3000
                    }
                    #expect(done && alwaysLive)
                }
                #expect(mock.requests().count == 20)
            }
        }
    }
}
