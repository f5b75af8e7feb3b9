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
        #expect(p.passes.map { $0.pass } == [.sent, .ended, .sentUnstamped, .endedUnstamped])
        #expect(p.passes.map { $0.olderThanSeconds } == [86_400, 604_800, 86_400, 604_800])
    }

    @Test("passes cover every final status and none other", arguments: PrunePass.allCases)
    func statuses(pass: PrunePass) {
        let final: Set = ["sent", "failed", "expired", "cancelled"]
        #expect(Set(pass.statuses).isSubset(of: final))
        #expect(Set(PrunePass.allCases.flatMap(\.statuses)) == final)
    }

    @Test("a full batch rests twice as long as it took (at most 1 s); a short one ends the pass", arguments: [
        (1000, 0.05, 0.1 as Double?),
        (1000, 0.4, 0.8),
        (1000, 0.0, 0.0),
        (1000, 3.0, 1.0),
        (1000, -1.0, 0.0),
        (999, 0.05, nil),
        (0, 0.0, nil),
    ])
    func rest(deleted: Int, took: Double, expected: Double?) {
        #expect(RetentionPolicy(batchSize: 1000).restSeconds(afterBatchOf: deleted, took: took) == expected)
    }
}
