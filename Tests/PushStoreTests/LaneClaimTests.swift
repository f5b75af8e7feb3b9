import Foundation
import PushCore
@testable import PushStore
import Testing
import PGClient

/// The claim's order by lane (rank, turns within a rank, due order within a lane), pauses and
/// the fleet-wide caps of lanes and credentials (pushq.lanes, pushq.rate_budgets).
@Suite("Lanes in the claim")
struct LaneClaimTests {
    static func token(_ n: Int) -> String { String(format: "%064x", n) }

    func claim(_ c: PGConnection, limit: Int = 100, credentials: [String] = ["default"], rotation: Int = 0,
               budget: RateBudget? = nil, id: String = "w1") async throws -> ClaimBatch {
        try await c.claim(limit: limit, workerID: id, leaseSeconds: 60, credentials: [.apns: credentials], defaultEnvironment: .production,
                          rotation: rotation, budget: budget)
    }

    /// Inserts `count` rows in `lane`, due `agoSeconds` ago, one second apart (oldest first); returns their ids in due order.
    @discardableResult
    func insert(_ c: PGConnection, lane: String, count: Int, agoSeconds: Int = 100, credential: String? = nil) async throws -> [Int64] {
        let r = try await c.query("""
            INSERT INTO pushq.notifications (device_token, payload, lane, credential, scheduled_at)
            SELECT lpad(to_hex(g + $4), 64, '0'), '{}', $1, $3, now() - ($2 - g) * interval '1 second'
              FROM generate_series(1, $5) g
            RETURNING id
            """, [lane, agoSeconds, credential, Int.random(in: 0..<1_000_000) * 1000, count])
        return try (0..<r.count).map { try r.decode(Int64.self, $0, 0)! }
    }

    /// every due row of a lower rank goes before any of a higher rank, whatever became due first; each row
    /// comes back with its lane and rank
    @Test("every due row of a lower rank goes before any of a higher rank; each row comes back with its lane and rank")
    func rankOrder() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, rank) VALUES ('bulk', 200), ('urgent', 10)")
            let bulk = try await insert(c, lane: "bulk", count: 5, agoSeconds: 1000)
            let normal = try await insert(c, lane: "default", count: 3, agoSeconds: 500)
            let urgent = try await insert(c, lane: "urgent", count: 2, agoSeconds: 10)
            let first = try await claim(c, limit: 4)
            #expect(first.map(\.id) == urgent + normal.prefix(2))
            #expect(first.map(\.rank) == [10, 10, 100, 100] && first.map(\.lane) == ["urgent", "urgent", "default", "default"])
            #expect(!first.heldBackByCap)
            let rest = try await claim(c, limit: 100)
            #expect(rest.map(\.id) == [normal[2]] + bulk, "then default's last, then bulk in due order")
            #expect(rest.last?.rank == 200)
        }
    }

    /// a lane with no row in pushq.lanes has default's rank; lanes of one rank take turns going first, and a
    /// short one leaves its room to the other
    @Test("a lane without a row has default's rank; lanes of one rank take turns, and a short one leaves its room to the other")
    func sameRankTurns() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("UPDATE pushq.lanes SET rank = 50 WHERE name = 'default'")
            try await c.query("INSERT INTO pushq.lanes (name, rank) VALUES ('later', 60)")
            let chat = try await insert(c, lane: "chat", count: 6)
            let normal = try await insert(c, lane: "default", count: 6)
            try await insert(c, lane: "later", count: 3, agoSeconds: 5000)
            let a = try await claim(c, limit: 3, rotation: 0)
            let b = try await claim(c, limit: 3, rotation: 1)
            #expect(Set(a.map(\.rank)) == [50] && Set(b.map(\.rank)) == [50], "the unlisted lane 'chat' ranks with default")
            #expect(Set([a.map(\.lane), b.map(\.lane)]) == [["chat", "chat", "chat"], ["default", "default", "default"]],
                    "one rotation starts with chat, the next with default")
            // Two rows left in default's lane: the rotation that starts with it fills the rest from chat.
            try await c.query("UPDATE pushq.notifications SET status = 'cancelled' WHERE id = ANY($1)", [Array(normal.dropFirst(4))])
            let starts = try await claim(c, limit: 3, rotation: a.first?.lane == "default" ? 0 : 1)
            #expect(starts.map(\.lane) == ["default", "chat", "chat"] || starts.map(\.lane) == ["chat", "chat", "chat"])
            let all = try await claim(c, limit: 100)
            #expect(Set(all.map(\.lane)).isSubset(of: ["chat", "default", "later"]) && all.last?.lane == "later")
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications WHERE lane = 'chat' AND status = 'sending'")
                .decode(Int.self, 0, 0) == chat.count)
        }
    }

    @Test("a paused lane is not claimed, nor its lapsed leases; expiry still ends its rows; resumed, it is claimed in order")
    func paused() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, paused) VALUES ('campaign', true)")
            let ids = try await insert(c, lane: "campaign", count: 3)
            try await c.query("""
                UPDATE pushq.notifications SET status = 'sending', attempts = 1, locked_by = 'dead', locked_until = now() - interval '1 second'
                 WHERE id = $1
                """, [ids[0]])
            try await c.query("UPDATE pushq.notifications SET expires_at = now() - interval '1 second' WHERE id = $1", [ids[2]])
            let other = try await insert(c, lane: "default", count: 1)
            #expect(try await claim(c).map(\.id) == other)
            let expired = try await c.expireWaiting(limit: 100)
            #expect(expired.map(\.rows).reduce(0, +) == 1, "the paused lane's row past its expires_at ends expired")
            try await c.query("UPDATE pushq.lanes SET paused = false WHERE name = 'campaign'")
            let resumed = try await claim(c)
            #expect(Set(resumed.map(\.id)) == [ids[0], ids[1]])
            #expect(resumed.first { $0.id == ids[0] }?.lastReason == "LeaseExpired")
        }
    }

    /// a capped lane takes at most its budget's whole tokens, spends them, and says so when due rows were
    /// held back; an empty budget takes none
    @Test("a capped lane takes at most its budget's whole tokens and says when due rows were held back; an empty budget takes none")
    func laneCap() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, rank, max_per_second) VALUES ('capped', 10, 20)")
            #expect(try await c.query("SELECT tokens FROM pushq.rate_budgets WHERE key = 'lane:capped'").decode(Double.self, 0, 0) == 0,
                    "the lane's budget row starts empty")
            let capped = try await insert(c, lane: "capped", count: 10)
            let normal = try await insert(c, lane: "default", count: 2)
            // Refilled long ago: the budget holds its burst, a quarter second of the cap (5 rows).
            try await c.query("UPDATE pushq.rate_budgets SET refilled_at = now() - interval '1 hour' WHERE key = 'lane:capped'")
            let first = try await claim(c)
            #expect(first.map(\.id) == Array(capped.prefix(5)) + normal, "5 of the capped lane, then the rest of the room to default")
            #expect(first.heldBackByCap)
            let left = try await c.query("SELECT tokens, refilled_at > now() - interval '1 minute' FROM pushq.rate_budgets WHERE key = 'lane:capped'")
            #expect(try left.decode(Double.self, 0, 0).map { $0 < 1 } == true && left.string(0, 1) == "t", "spent")
            try await c.query("UPDATE pushq.rate_budgets SET tokens = 2.9, refilled_at = now() + interval '1 hour' WHERE key = 'lane:capped'")
            let second = try await claim(c)
            #expect(second.map(\.id) == Array(capped[5..<7]) && second.heldBackByCap, "2 whole tokens: 2 rows")
            try await c.query("UPDATE pushq.notifications SET status = 'cancelled' WHERE id = ANY($1)", [Array(capped.dropFirst(7))])
            try await c.query("UPDATE pushq.rate_budgets SET tokens = 5, refilled_at = now() + interval '1 hour' WHERE key = 'lane:capped'")
            let none = try await claim(c)
            #expect(none.isEmpty && !none.heldBackByCap, "nothing due is held back")
        }
    }

    @Test("a budget another worker is spending from is skipped, not waited for: its lane is held back this time")
    func budgetLocked() async throws {
        try await TestDatabase.with { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let other = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await c.query("INSERT INTO pushq.lanes (name, max_per_second) VALUES ('capped', 1000)")
            try await insert(c, lane: "capped", count: 3)
            let normal = try await insert(c, lane: "default", count: 1)
            try await c.query("UPDATE pushq.rate_budgets SET refilled_at = now() - interval '1 hour'")
            try await other.execute("BEGIN")
            try await other.query("SELECT 1 FROM pushq.rate_budgets WHERE key = 'lane:capped' FOR UPDATE")
            let batch = try await claim(c)
            try await other.execute("ROLLBACK")
            #expect(batch.map(\.id) == normal && batch.heldBackByCap)
            let after = try await claim(c)
            #expect(after.count == 3 && Set(after.map(\.lane)) == ["capped"], "free again: its burst covers the 3 rows")
            await other.close()
            await c.close()
        }
    }

    @Test("a credential's cap: only that credential's rows, at most its budget; ensureBudgets makes its row once")
    func credentialCap() async throws {
        try await TestDatabase.withConnection { c in
            let cap = RateBudget(provider: .apns, credential: "b", perSecond: 8)
            try await c.ensureBudgets([cap.key])
            try await c.ensureBudgets([cap.key])
            #expect(try await c.query("SELECT count(*) FROM pushq.rate_budgets WHERE key = 'credential:apns:b'").decode(Int.self, 0, 0) == 1)
            let b = try await insert(c, lane: "default", count: 4, credential: "b")
            try await insert(c, lane: "default", count: 2, credential: nil)
            // Empty, and refilling only from a moment to come: no token however slow the machine.
            try await c.query("UPDATE pushq.rate_budgets SET tokens = 0, refilled_at = now() + interval '1 hour'")
            #expect(try await claim(c, credentials: ["b"], budget: cap).isEmpty, "an empty budget")
            try await c.query("UPDATE pushq.rate_budgets SET refilled_at = now() - interval '1 hour'")
            let batch = try await claim(c, credentials: ["b"], budget: cap)
            #expect(batch.map(\.id) == Array(b.prefix(2)) && batch.heldBackByCap, "a quarter second of 8/s: 2 rows of b")
        }
    }

    /// the heads a poison hunt tries: the first due row of each lane not paused, and the first lapsed lease;
    /// the last due row is not a paused lane's
    @Test("a poison hunt's heads: the first due row of each lane not paused, and the first lapsed lease")
    func heads() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, rank, paused) VALUES ('urgent', 10, false), ('stopped', 1, true)")
            let urgent = try await insert(c, lane: "urgent", count: 2)
            let normal = try await insert(c, lane: "default", count: 2)
            let stopped = try await insert(c, lane: "stopped", count: 2, agoSeconds: 10)
            let heads = try await c.claimHeads(credentials: [.apns: ["default"]], defaultEnvironment: .production)
            #expect(Set(heads) == [urgent[0], normal[0]])
            let last = try await c.lastDue(credentials: [.apns: ["default"]], defaultEnvironment: .production)
            #expect(last != nil && !stopped.contains(last!))
        }
    }

    /// a claim below a rank takes only lanes ranked lower, their lapsed leases included; a lapsed lease keeps
    /// its lane's rank and order
    @Test("a claim below a rank takes only lanes ranked lower, their lapsed leases included, which keep their lane's rank")
    func belowRank() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, rank) VALUES ('campaign', 200)")
            let campaign = try await insert(c, lane: "campaign", count: 3, agoSeconds: 1000)
            let normal = try await insert(c, lane: "default", count: 2)
            // Claimed by a worker that died: their leases ended 10 and 1 seconds ago.
            let taken = try await c.claim(limit: 100, workerID: "dead", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production,
                                          row: normal[1]).rows.map(\.id)
            let first = try await c.claim(limit: 100, workerID: "dead", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production,
                                          row: campaign[1]).rows.map(\.id)
            #expect(taken == [normal[1]] && first == [campaign[1]])
            try await c.query("""
                UPDATE pushq.notifications SET locked_until = now() - CASE WHEN id = $1 THEN interval '10 seconds' ELSE interval '1 second' END
                 WHERE id IN ($1, $2)
                """, [campaign[1], normal[1]])
            try await c.query("UPDATE pushq.leases SET lease_until = now() - interval '1 second'")
            #expect(try await c.recoverLapsedLeases(limit: 100) == .init(rows: 2, leases: 2))
            let urgent = try await c.claim(limit: 100, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]],
                                           defaultEnvironment: .production, belowRank: 200)
            #expect(urgent.map(\.id) == normal, "default's rows, its lapsed lease in its due order (its lease's end, after the waiting row's due time)")
            let rest = try await claim(c)
            #expect(rest.map(\.id) == [campaign[0], campaign[2], campaign[1]],
                    "the campaign's rows in due order: its lapsed lease is due when its lease ended, after the others")
        }
    }

    /// a change to pushq.lanes notifies pushq_lanes as it commits; the dashboard's lane cancel notifies
    /// cancel:<lane>; endCancelled ends only this claim's rows, attempt refunded
    @Test("lane changes notify pushq_lanes; the dashboard's cancel notifies cancel:<lane>; endCancelled ends only this claim's rows")
    func laneNotices() async throws {
        try await TestDatabase.with { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let listener = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await listener.listen(LaneStops.laneChannel)
            try await c.query("INSERT INTO pushq.lanes (name, max_per_second) VALUES ('c', 50), ('d', NULL)")
            try await c.query("UPDATE pushq.lanes SET paused = true WHERE name = 'c'")
            var heard: [PGNotification] = []
            while heard.count < 2 {
                let got = try await listener.waitForNotifications(timeout: .seconds(10))
                try #require(!got.isEmpty, "a lane change was not notified")
                heard += got
            }
            #expect(heard.map(\.payload) == ["", ""], "one notice per statement")
            let settings = try await c.laneSettings()
            #expect(settings.contains(LaneSetting(name: "c", paused: true, maxPerSecond: 50)))
            #expect(settings.contains(LaneSetting(name: "d", paused: false, maxPerSecond: nil)))

            // A claim of lane d's rows, then the dashboard's cancel of lane d.
            try await insert(c, lane: "d", count: 3)
            let claimed = try await claim(c)
            try #require(claimed.rows.count == 3)
            let audit = AuditEntry(actor: "test", keyID: nil, action: "lane.cancel", target: "lane d", rows: 0, via: "dashboard")
            #expect(try await c.cancelLane("d", audit: audit) == 0, "rows in flight are not waiting")
            let cancel = try await listener.waitForNotifications(timeout: .seconds(10))
            #expect(cancel.map(\.payload) == ["cancel:d"])
            // The worker ends the rows it holds unsent: the first two under their claim; the third
            // under a claim it no longer holds (another lease) is left alone.
            var claims = claimed.rows.map { RowClaim(id: $0.id, attempt: $0.attempts, lease: $0.lease) }
            claims[2].lease += 1
            #expect(try await c.endCancelled(claims, workerID: "w1") == 2)
            let r = try await c.query("SELECT status, attempts, locked_by IS NULL FROM pushq.notifications WHERE lane = 'd' ORDER BY id")
            #expect((0..<3).map { r.string($0, 0) ?? "" } == ["cancelled", "cancelled", "sending"])
            #expect((0..<2).map { r.string($0, 1) ?? "" } == ["0", "0"] && r.string(0, 2) == "t")
            await listener.close()
            await c.close()
        }
    }
}
