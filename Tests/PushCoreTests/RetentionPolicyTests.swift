import PushCore
import Testing

@Suite("RetentionPolicy")
struct RetentionPolicyTests {
    @Test("defaults: sent one day, the other final statuses seven days, batches of 1000")
    func defaults() {
        let p = RetentionPolicy()
        #expect(p.sentSeconds == 86_400)
        #expect(p.finalSeconds == 604_800)
        #expect(p.batchSize == 1000)
        #expect(p.passes.map { $0.pass } == [.sent, .ended])
        #expect(p.passes.map { $0.olderThanSeconds } == [86_400, 604_800])
    }

    @Test("passes cover every final status and none other", arguments: PrunePass.allCases)
    func statuses(pass: PrunePass) {
        let final: Set = ["sent", "failed", "expired", "cancelled"]
        #expect(Set(pass.statuses).isSubset(of: final))
        #expect(Set(PrunePass.allCases.flatMap(\.statuses)) == final)
    }

    @Test("a full batch rests four times as long as it took (at most 1 s); a short one ends the pass", arguments: [
        (1000, 0.05, 0.2 as Double?),
        (1000, 0.2, 0.8),
        (1000, 0.0, 0.0),
        (1000, 0.4, 1.0),
        (1000, 3.0, 1.0),
        (1000, -1.0, 0.0),
        (999, 0.05, nil),
        (0, 0.0, nil),
    ])
    func rest(deleted: Int, took: Double, expected: Double?) {
        #expect(RetentionPolicy(batchSize: 1000).restSeconds(afterBatchOf: deleted, took: took) == expected)
    }

    /// a pass goes on from its position; it starts from the first row again once its last start is as old as
    /// its retention or rescanSeconds (the smaller), or the clock is behind
    @Test("a pass resumes where it was; it restarts once its start is as old as its retention or rescan, or the clock is behind")
    func walkRescan() {
        var walk = PruneWalk()
        let p = PrunePosition(createdAt: "2026-11-20 10:00:00+00", id: 7)
        walk.begin(.sent, retention: 86_400, at: 1_000)
        #expect(walk.startedAt == [.sent: 1_000] && walk.positions.isEmpty)
        walk.positions[.sent] = p
        walk.begin(.sent, retention: 86_400, at: 1_000 + PruneWalk.rescanSeconds - 1)
        #expect(walk.positions == [.sent: p] && walk.startedAt[.sent] == 1_000, "within rescanSeconds: resumed")
        walk.begin(.sent, retention: 86_400, at: 1_000 + PruneWalk.rescanSeconds)
        #expect(walk.positions.isEmpty && walk.startedAt[.sent] == 1_000 + PruneWalk.rescanSeconds, "after it: from the first row")
        // A retention shorter than rescanSeconds: as often as the retention; 0, every round.
        walk.positions[.ended] = p
        walk.begin(.ended, retention: 60, at: 2_000)
        walk.positions[.ended] = p
        walk.begin(.ended, retention: 60, at: 2_059)
        #expect(walk.positions[.ended] == p, "within its retention: resumed")
        walk.begin(.ended, retention: 60, at: 2_060)
        #expect(walk.positions[.ended] == nil && walk.startedAt[.ended] == 2_060)
        walk.positions[.ended] = p
        walk.begin(.ended, retention: 0, at: 2_060)
        #expect(walk.positions[.ended] == nil, "retention 0: from the first row every round")
        walk.positions[.sent] = p
        walk.begin(.sent, retention: 86_400, at: 5)
        #expect(walk.positions[.sent] == nil && walk.startedAt[.sent] == 5, "a clock behind the start: from the first row")
    }
}
