import Foundation
import PushCore
import PushStore
import Testing
import PGClient

/// Claims of the whole fleet take turns (`PGConnection.claimLockKey`).
@Suite("Claims take turns")
struct ClaimLockTests {
    static func token(_ i: Int) -> String { String(repeating: "0", count: 63) + String(i) }

    @Test("a claim waits while another claim holds the claim lock, then takes only the rows that claim left")
    func claimsTakeTurns() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.notifications (device_token, payload) SELECT $1 || g, '{}' FROM generate_series(1, 3) g",
                              [String(repeating: "0", count: 63)])
            let database = try await c.query("SELECT current_database()").string(0, 0)!
            let url = PGURL.withDatabase(try TestDatabase.serverURL, database)
            let holder = try await PGConnection.connect(url, logger: TestDatabase.logger)
            // Another worker's claim, in progress: it holds the lock and has taken row 1.
            try await holder.execute("BEGIN; SELECT pg_advisory_xact_lock(\(PGConnection.claimLockKey))")
            try await holder.query("UPDATE pushq.notifications SET status = 'sending', attempts = 1, locked_by = 'other', locked_until = now() + interval '1 minute' WHERE device_token = $1",
                                   [Self.token(1)])
            let pid = await c.backendPID
            let claim = Task {
                try await c.claim(limit: 10, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production).rows
            }
            // The claim is blocked on the lock: its backend waits for it (seen in pg_locks).
            let waited = try await LockWait.until(timeout: .seconds(30)) {
                try await holder.query("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND pid = $1",
                                       [Int(pid)]).decode(Int.self, 0, 0) == 1
            }
            #expect(waited, "the claim never waited for the claim lock")
            try await holder.execute("COMMIT")
            let rows = try await claim.value
            // Its snapshot is taken after the lock: the other claim's row is not even seen as due.
            #expect(rows.map(\.deviceToken).sorted() == [Self.token(2), Self.token(3)])
            #expect(rows.allSatisfy { $0.verdict == .send })
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications WHERE status = 'sending' AND locked_by = 'w1'").decode(Int.self, 0, 0) == 2)
            // The lock went with the claim's transaction: the next claim does not wait.
            #expect(try await holder.query("SELECT pg_try_advisory_xact_lock($1)", [PGConnection.claimLockKey]).string(0, 0) == "t")
            await holder.close()
        }
    }
}
