import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// `pushq status` reads indexes, never the whole of pushq.notifications. The statements
/// checked are the constants `queueStatus` runs (internal, reached through `@testable`).
@Suite("Status queries")
struct StatusQueryTests {
    static func plan(_ c: PGConnection, _ sql: String, _ parameters: [(any PGParameter)?]) async throws -> String {
        let r = try await c.query("EXPLAIN " + sql, parameters)
        return (0..<r.count).map { r.string($0, 0) ?? "" }.joined(separator: "\n")
    }

    /// on a table of mostly final rows, analysed: the status statements use no Seq Scan on notifications with
    /// the settings pushq status runs them with (a whole-table count would, with enable_seqscan on); the
    /// counts are exact
    @Test("on mostly final rows, analysed, the status statements use no Seq Scan on notifications, and their counts are exact")
    func noSequentialScan() async throws {
        try await TestDatabase.withConnection { c in
            try await PruneTests.insert(c, 40_000, status: "sent", finishedAgo: 3_600)
            try await PruneTests.insert(c, 3_000, status: "failed", finishedAgo: 60)
            try await PruneTests.insert(c, 1_000, status: "expired", finishedAgo: 7_200)
            try await PruneTests.insert(c, 500, status: "cancelled", finishedAgo: nil, createdAgo: 100)
            try await PruneTests.insert(c, 300, status: "queued", finishedAgo: nil, createdAgo: 30)
            try await PruneTests.insert(c, 20, status: "sending", finishedAgo: nil, createdAgo: 30)
            try await c.giveLeaseRows() // the lease row their claim wrote
            try await PruneTests.insert(c, 40, status: "retrying", finishedAgo: nil, createdAgo: 30)
            try await c.query("UPDATE pushq.notifications SET last_reason = 'BadDeviceToken' WHERE status = 'failed'")
            try await c.execute("VACUUM ANALYZE pushq.notifications")
            #expect(try await c.query("SHOW enable_seqscan").string(0, 0) == "on")

            let whole = try await Self.plan(c, "SELECT status, count(*) FROM pushq.notifications GROUP BY status", [])
            #expect(whole.contains("Seq Scan on notifications"), "the table is big enough for the planner to scan it whole: \(whole)")
            // As pushq status runs them: with enable_seqscan off (pushq.due is read whole with it on).
            for (sql, parameters) in PGConnection.statusStatements {
                try await c.execute("SET enable_seqscan = \(sql == PGConnection.waitingCountsSQL ? "on" : "off")")
                let plan = try await Self.plan(c, sql, parameters)
                #expect(!plan.contains("Seq Scan on notifications"), "\(sql)\n\(plan)")
                #expect(plan.contains("notifications_") || plan.contains("due_order"), "an index of notifications or of pushq.due is used: \(plan)")
            }

            // What the workers that failed those rows tallied (pushq.outcomes).
            try await OutcomeTallyTests.add(c, [("failed", 1, "default", "w", "BadDeviceToken", 3_000)])
            let s = try await c.queueStatus(failureMinutes: 60)
            #expect(s.finalCountsExact)
            #expect(s.counts == ["queued": 300, "sending": 20, "retrying": 40, "sent": 40_000, "failed": 3_000, "expired": 1_000, "cancelled": 500])
            #expect(s.oldestDueSeconds.map { (25...40).contains($0) } == true, "\(String(describing: s.oldestDueSeconds))")
            #expect(s.holders.count == 1 && s.holders[0].worker == "w" && s.holders[0].rows == 20)
            #expect(s.reasons.count == 1 && s.reasons[0].status == "failed" && s.reasons[0].reason == "BadDeviceToken" && s.reasons[0].rows == 3_000)
        }
    }

    /// lanes: every lane of pushq.lanes with its rank, cap and pause, then the lanes without a row there; due
    /// rows and oldest due age per lane; rows sent per second over the last minute per lane; the lane
    /// statements read indexes
    @Test("lanes: configured lanes then unknown ones, with due rows, oldest age and send rate; the lane statements read indexes")
    func lanes() async throws {
        try await TestDatabase.withConnection { c in
            try await PruneTests.insert(c, 30_000, status: "sent", finishedAgo: 7_200)
            try await PruneTests.insert(c, 300, status: "queued", finishedAgo: nil, createdAgo: 30)
            try await PruneTests.insert(c, 40, status: "retrying", finishedAgo: nil, createdAgo: 60)
            try await c.query("""
                WITH q AS (SELECT id, row_number() OVER (ORDER BY id) i FROM pushq.notifications WHERE status = 'queued')
                UPDATE pushq.notifications n SET lane = CASE WHEN q.i <= 200 THEN 'campaign' WHEN q.i <= 210 THEN 'promo' ELSE 'default' END
                  FROM q WHERE q.id = n.id
                """)
            // Not due yet: waiting, but neither due nor in the oldest age.
            try await c.query("UPDATE pushq.notifications SET lane = 'later', scheduled_at = now() + interval '1 hour' WHERE status = 'retrying'")
            // Sent and failed this minute, as the workers tallied them (pushq.outcomes).
            try await OutcomeTallyTests.add(c, [("sent", 0, "campaign", "w", "", 90), ("sent", 0, "gone", "w", "", 30),
                                                ("failed", 0, "campaign", "w", "BadDeviceToken", 50)])
            try await c.query("INSERT INTO pushq.lanes (name, rank, max_per_second, paused) VALUES ('campaign', 200, 500, true), ('idle', 50, NULL, false)")
            try await c.execute("VACUUM ANALYZE pushq.notifications")
            for (sql, parameters) in PGConnection.statusStatements where sql.contains("lane") {
                let plan = try await Self.plan(c, sql, parameters)
                #expect(!plan.contains("Seq Scan on notifications"), "\(sql)\n\(plan)")
                // A lane's entries through an index that starts with the lane: due_order, or due_tenant
                // (lane, tenant, due_at, id; migration 111), which the planner may take for a count.
                #expect(plan.contains("due_order") || plan.contains("due_tenant"), "\(plan)")
            }

            let lanes = try await c.queueStatus(failureMinutes: 60).lanes
            #expect(lanes.map(\.gauges.name) == ["idle", "default", "campaign", "later", "promo", "gone"])
            let byName = Dictionary(uniqueKeysWithValues: lanes.map { ($0.gauges.name, $0) })
            let campaign = try #require(byName["campaign"])
            #expect(campaign.gauges == LaneGauges(name: "campaign", configured: true, rank: 200, maxPerSecond: 500, paused: true,
                                                  dueRows: 200, oldestDueAgeSeconds: campaign.gauges.oldestDueAgeSeconds))
            #expect((25...40).contains(campaign.gauges.oldestDueAgeSeconds), "\(campaign.gauges)")
            // 90 this minute (fewer should the minute have turned since: the rate's exact sums are OutcomeTallyTests').
            #expect(campaign.sentPerSecond > 0 && campaign.sentPerSecond <= 90.0 / 60 + 0.001, "failed rows are not sends: \(campaign.sentPerSecond)")
            #expect(byName["default"]?.gauges.dueRows == 90 && byName["default"]?.sentPerSecond == 0)
            #expect(byName["idle"]?.gauges.dueRows == 0 && byName["idle"]?.gauges.oldestDueAgeSeconds == 0 && byName["idle"]?.gauges.rank == 50)
            #expect(byName["promo"]?.gauges == LaneGauges(name: "promo", configured: false, rank: 100, maxPerSecond: nil, paused: false,
                                                          dueRows: 10, oldestDueAgeSeconds: byName["promo"]?.gauges.oldestDueAgeSeconds ?? -1))
            #expect(byName["later"]?.gauges.dueRows == 0 && byName["later"]?.gauges.oldestDueAgeSeconds == 0 && byName["later"]?.gauges.configured == false)
            #expect(byName["gone"].map { !$0.gauges.configured && $0.gauges.dueRows == 0 && $0.sentPerSecond > 0 && $0.sentPerSecond <= 30.0 / 60 + 0.001 } == true)
            #expect(try await c.laneGauges().map(\.name) == ["idle", "default", "campaign", "later", "promo"],
                    "the gauges read waiting rows only: a lane with sends and nothing waiting is not there")
            #expect(try await c.laneNames() == ["campaign", "default", "idle"])
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
