import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// Quiet hours per lane (issue 48, item 3): what the review of the first version found — the window
/// computed once per zone, a quiet lane's claim locking only the rows it takes, a backlog inside the
/// window that no longer hides other zones' rows behind a poll, a lapsed lease held to the window's
/// end that still expires on time, and lifting quiet hours by releasing the entries themselves.
///
/// As in QuietHoursClaimTests, windows are set relative to the server's `now()`.
@Suite("Quiet hours: the review's findings")
struct QuietHoursReviewTests {
    static func token(_ n: Int) -> String { String(repeating: String(format: "%02x", n), count: 32) }

    static func bound(limit: Int, leaseSeconds: Double = 60) -> (sql: String, parameters: [(any PGParameter)?], custom: Bool) {
        ClaimStatement.bound(limit: limit, workerID: "w1", leaseSeconds: leaseSeconds, credentials: [.apns: ["default"]],
                             defaultEnvironment: .production, only: nil, row: nil, excluding: [], rotation: 0, budget: nil, belowRank: nil)
    }

    static func claim(_ c: PGConnection, limit: Int) async throws -> ClaimBatch {
        try await c.claim(limit: limit, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production)
    }

    /// `n` rows of lane `quiet` (no zone: the lane's), due an hour ago, one second apart.
    static func backlog(_ c: PGConnection, _ n: Int, zone: String? = nil) async throws {
        try await c.query("""
            INSERT INTO pushq.notifications (device_token, payload, lane, time_zone, scheduled_at)
            SELECT lpad(to_hex(g), 64, '0'), '{}', 'quiet', $2, now() - interval '1 hour' + g * interval '1 millisecond'
              FROM generate_series(1, $1::int) g
            """, [n, zone])
    }

    /// The walk locks nothing, so the move is guarded by the entry's own lock: an entry another
    /// claim is taking (its row locked, its entry deleted, not yet committed) is skipped — neither
    /// waited for (the claim would hang: statement_timeout turns that into a failure) nor moved —
    /// and moved by the next claim once that claim rolled back.
    @Test("an entry another claim is taking is skipped by the move, neither waited for nor moved")
    func moveSkipsEntryBeingTaken() async throws {
        try await TestDatabase.with { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let other = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await QuietHoursClaimTests.quietLane(c, zone: "UTC")
            let ids = try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane) VALUES ($1, '{}', 'quiet'), ($2, '{}', 'quiet') RETURNING id
                """, [Self.token(1), Self.token(2)]).rows.map { try $0.decode(Int64.self, "id") }
            try await other.execute("BEGIN")
            try await other.query("SELECT 1 FROM pushq.notifications WHERE id = $1 FOR UPDATE", [ids[0]])
            try await other.query("DELETE FROM pushq.due WHERE id = $1", [ids[0]])
            try await c.execute("SET statement_timeout = '20s'")
            #expect(try await Self.claim(c, limit: 10).rows.filter { $0.id != 0 }.isEmpty)
            let held = try await c.query("SELECT string_agg(id::text || ':' || COALESCE(held, '-'), ',' ORDER BY id) FROM pushq.due").string(0, 0)
            #expect(held == "\(ids[0]):-,\(ids[1]):quiet")
            try await other.execute("ROLLBACK")
            _ = try await Self.claim(c, limit: 10)
            #expect(try await c.query("SELECT count(*) FROM pushq.due WHERE held = 'quiet'").decode(Int.self, 0, 0) == 2)
            await other.close()
            await c.close()
        }
    }

    /// One claim of 100 over 500 rows of one zone inside its window: pushq.quiet_window runs once
    /// (one zone, one window), not once or twice per walked row (the planner pulled the per-zone
    /// subquery up into the join).
    @Test("one claim over 500 rows of one zone computes the window once")
    func windowOncePerZone() async throws {
        try await TestDatabase.withConnection { c in
            try await QuietHoursClaimTests.quietLane(c, zone: "UTC")
            try await Self.backlog(c, 500)
            let claim = Self.bound(limit: 100)
            try await c.execute("SET track_functions = 'pl'")
            try await c.execute("BEGIN")
            _ = try await c.query(claim.sql, claim.parameters)
            let calls = try await c.query("""
                SELECT pg_stat_get_xact_function_calls('pushq.quiet_window(timestamptz,text,time,time)'::regprocedure)
                """).decode(Int.self, 0, 0)
            let moved = try await c.query("SELECT count(*) FROM pushq.due WHERE held = 'quiet'").decode(Int.self, 0, 0)
            try await c.execute("ROLLBACK")
            #expect(moved == 500, "the whole walk (100 + 4 × 100) moved")
            #expect(calls == 1)
        }
    }

    /// Daytime (the window opens in an hour): a claim of 10 over 300 due rows locks the 10 rows it
    /// takes, not its walk of 10 + 4 × 10. Seen from a second connection while the claim's
    /// transaction is open: every row it does not take can be locked there (SKIP LOCKED counts).
    /// Inside the window the moved rows are not locked either (only their entries are).
    @Test("a quiet lane's claim locks only the rows it takes, by day and by night")
    func locksOnlyTaken() async throws {
        try await TestDatabase.with { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let other = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await QuietHoursClaimTests.quietLane(c, zone: "UTC", startOffset: "1 hour", endOffset: "3 hours")
            try await Self.backlog(c, 300)
            let claim = Self.bound(limit: 10)
            func lockable() async throws -> Int {
                try await other.query("""
                    SELECT count(*) FROM (SELECT 1 FROM pushq.notifications WHERE lane = 'quiet' FOR UPDATE SKIP LOCKED) x
                    """).decode(Int.self, 0, 0) ?? -1
            }
            try await c.execute("BEGIN")
            let taken = try await c.query(claim.sql, claim.parameters).rows.count
            let free = try await lockable()
            try await c.execute("ROLLBACK")
            #expect(taken == 10)
            #expect(free == 290, "locked: \(300 - free) rows for 10 taken")

            // Night: the window holds now; the claim moves 50 entries and locks no row.
            try await c.query("""
                UPDATE pushq.lanes SET quiet_start = ((now() AT TIME ZONE 'UTC') - interval '1 hour')::time,
                                       quiet_end = ((now() AT TIME ZONE 'UTC') + interval '1 hour')::time WHERE name = 'quiet'
                """)
            try await c.execute("BEGIN")
            let night = try await c.query(claim.sql, claim.parameters).rows.filter { (try? $0.decode(Int64.self, "id")) != 0 }.count
            let freeAtNight = try await lockable()
            try await c.execute("ROLLBACK")
            #expect(night == 0)
            #expect(freeAtNight == 300)
            await other.close()
            await c.close()
        }
    }

    /// The reviewer's s10: 3 000 UTC rows inside their window ahead of 10 Tokyo rows outside theirs
    /// (a window around now in UTC is 9 hours off in Tokyo). A claim of 100 walks 500 entries, all
    /// UTC, and moves them: it says so (``ClaimBatch/claimAgain``), so that the worker claims again at
    /// once rather than at its poll; claims that keep saying so reach the Tokyo rows within
    /// 3 000 / 500 + 1 claims (by structure, no clock), and the last one says nothing more.
    @Test("a backlog inside the window: each claim that moved its walk's full limit says so until other zones' rows go")
    func backlogSaysClaimAgain() async throws {
        try await TestDatabase.withConnection { c in
            try await QuietHoursClaimTests.quietLane(c, zone: "UTC")
            try await Self.backlog(c, 3000)
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, time_zone)
                SELECT lpad(to_hex(g), 64, 'f'), '{}', 'quiet', 'Asia/Tokyo' FROM generate_series(1, 10) g
                """)
            var claims = 0, tokyo = 0
            var batch = try await Self.claim(c, limit: 100)
            claims += 1
            #expect(batch.rows.isEmpty && batch.claimAgain, "the first claim moved 500 and took nothing")
            tokyo += batch.rows.count
            while batch.claimAgain && claims < 20 {
                batch = try await Self.claim(c, limit: 100)
                claims += 1
                tokyo += batch.rows.count
            }
            #expect(tokyo == 10)
            #expect(claims <= 7, "\(claims) claims")
            #expect(!batch.claimAgain)
            #expect(try await c.query("SELECT count(*) FROM pushq.due WHERE held = 'quiet' AND due_at > now()").decode(Int.self, 0, 0) == 3000)
        }
    }

    /// A lapsed lease (its worker gone) given an entry by the upkeep and moved to its window's end:
    /// its expires_at passes an hour before that end, and the upkeep's expiry sweep ends it then
    /// (`expired`, the entry gone), as it does a waiting row.
    @Test("a lapsed lease moved to the window's end ends expired when its expires_at passes")
    func lapsedLeaseExpires() async throws {
        try await TestDatabase.withConnection { c in
            try await QuietHoursClaimTests.quietLane(c, zone: "UTC", startOffset: "1 hour", endOffset: "3 hours")
            let id = try await c.query("INSERT INTO pushq.notifications (device_token, payload, lane) VALUES ($1, '{}', 'quiet') RETURNING id",
                                       [Self.token(1)]).decode(Int64.self, 0, 0) ?? 0
            #expect(try await Self.claim(c, limit: 10).rows.map(\.id) == [id])
            // The worker is gone: its lease ends, the upkeep gives the row an entry again.
            try await c.query("UPDATE pushq.notifications SET locked_until = now() - interval '1 second' WHERE id = $1", [id])
            try await c.query("UPDATE pushq.leases SET lease_until = now() - interval '1 second'")
            #expect(try await c.recoverLapsedLeases(limit: 10).rows == 1)
            // Night falls; the row may live 2 more seconds.
            try await c.query("""
                UPDATE pushq.lanes SET quiet_start = ((now() AT TIME ZONE 'UTC') - interval '1 hour')::time,
                                       quiet_end = ((now() AT TIME ZONE 'UTC') + interval '1 hour')::time WHERE name = 'quiet'
                """)
            try await c.query("UPDATE pushq.notifications SET expires_at = now() + interval '2 seconds' WHERE id = $1", [id])
            #expect(try await Self.claim(c, limit: 10).rows.filter { $0.id != 0 }.isEmpty)
            #expect(try await c.query("SELECT held FROM pushq.due WHERE id = $1", [id]).string(0, 0) == "quiet")
            // Awaited on the server's clock: the sweep runs until the row ends (or a minute passes).
            var status = ""
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                try await c.expireWaiting(limit: 100)
                status = try await c.query("SELECT status FROM pushq.notifications WHERE id = $1", [id]).string(0, 0) ?? ""
                if status == "expired" { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(status == "expired")
            #expect(try await c.query("SELECT count(*) FROM pushq.due").decode(Int.self, 0, 0) == 0)
        }
    }

    /// docs/lanes.md's way to lift quiet hours: release the held entries themselves. Rescheduling
    /// the rows (the first version's advice) leaves a lapsed lease's entry held; this statement
    /// makes both due, and the next claim takes them.
    @Test("lanes.md's release of held entries frees waiting rows and lapsed leases alike")
    func liftReleasesEntries() async throws {
        try await TestDatabase.withConnection { c in
            try await QuietHoursClaimTests.quietLane(c, zone: "UTC", startOffset: "1 hour", endOffset: "3 hours")
            let lapsed = try await c.query("INSERT INTO pushq.notifications (device_token, payload, lane) VALUES ($1, '{}', 'quiet') RETURNING id",
                                           [Self.token(1)]).decode(Int64.self, 0, 0) ?? 0
            #expect(try await Self.claim(c, limit: 10).rows.map(\.id) == [lapsed])
            try await c.query("UPDATE pushq.notifications SET locked_until = now() - interval '1 second' WHERE id = $1", [lapsed])
            try await c.query("UPDATE pushq.leases SET lease_until = now() - interval '1 second'")
            #expect(try await c.recoverLapsedLeases(limit: 10).rows == 1)
            let waiting = try await c.query("INSERT INTO pushq.notifications (device_token, payload, lane) VALUES ($1, '{}', 'quiet') RETURNING id",
                                            [Self.token(2)]).decode(Int64.self, 0, 0) ?? 0
            try await c.query("""
                UPDATE pushq.lanes SET quiet_start = ((now() AT TIME ZONE 'UTC') - interval '1 hour')::time,
                                       quiet_end = ((now() AT TIME ZONE 'UTC') + interval '1 hour')::time WHERE name = 'quiet'
                """)
            #expect(try await Self.claim(c, limit: 10).rows.filter { $0.id != 0 }.isEmpty)
            #expect(try await c.query("SELECT count(*) FROM pushq.due WHERE held = 'quiet'").decode(Int.self, 0, 0) == 2)
            // The first version's advice: the lapsed lease's entry stays held.
            try await c.query("UPDATE pushq.lanes SET quiet_start = NULL, quiet_end = NULL WHERE name = 'quiet'")
            try await c.query("""
                UPDATE pushq.notifications SET scheduled_at = now()
                 WHERE id IN (SELECT id FROM pushq.due WHERE lane = 'quiet' AND held = 'quiet')
                """)
            #expect(try await c.query("SELECT id FROM pushq.due WHERE held = 'quiet'").decode(Int64.self, 0, 0) == lapsed)
            // lanes.md's statement, as written there.
            let docs = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/lanes.md"), encoding: .utf8)
            let release = "UPDATE pushq.due SET due_at = now(), held = NULL WHERE held = 'quiet' AND lane = 'marketing';"
            #expect(docs.contains(release))
            try await c.query(release.replacingOccurrences(of: "'marketing'", with: "'quiet'"))
            let rows = try await Self.claim(c, limit: 10).rows.map(\.id).sorted()
            #expect(rows == [lapsed, waiting].sorted())
        }
    }
}
