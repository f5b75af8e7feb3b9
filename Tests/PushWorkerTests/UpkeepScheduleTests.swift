@testable import PushWorker
import Testing

/// When the worker's upkeep runs (``Upkeep/Schedule``), on instants the test picks: a full turn
/// (heartbeat, clock, deletions, gauges) every heartbeat, and turns between claims while the last
/// one left work (a mass expiry goes on a few chunks at a time), without moving the heartbeat.
@Suite("Upkeep schedule")
struct UpkeepScheduleTests {
    static let start = ContinuousClock.now
    static func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int(seconds * 1000)) }

    @Test("the first turn is a full one, due at once")
    func firstTurnFull() {
        let schedule = Upkeep.Schedule(every: .seconds(10), start: Self.at(0))
        #expect(schedule.due(at: Self.at(0)) == .full)
    }

    @Test("after a full turn that left no work, nothing is due until a heartbeat after it ended")
    func nothingUntilHeartbeat() {
        var schedule = Upkeep.Schedule(every: .seconds(10), start: Self.at(0))
        schedule.ran(.full, workLeft: false, at: Self.at(1))
        #expect(schedule.due(at: Self.at(1)) == nil)
        #expect(schedule.due(at: Self.at(10.9)) == nil)
        #expect(schedule.due(at: Self.at(11)) == .full)
    }

    @Test("while turns leave work, a turn between claims is due at once, until one leaves none")
    func betweenWhileWorkLeft() {
        var schedule = Upkeep.Schedule(every: .seconds(10), start: Self.at(0))
        schedule.ran(.full, workLeft: true, at: Self.at(1))
        #expect(schedule.workLeft)
        #expect(schedule.due(at: Self.at(1)) == .between)
        schedule.ran(.between, workLeft: true, at: Self.at(2))
        #expect(schedule.due(at: Self.at(2)) == .between)
        schedule.ran(.between, workLeft: false, at: Self.at(3))
        #expect(!schedule.workLeft)
        #expect(schedule.due(at: Self.at(3)) == nil)
    }

    @Test("turns between claims do not move the heartbeat: the full turn comes a heartbeat after the last full one")
    func betweenKeepsHeartbeat() {
        var schedule = Upkeep.Schedule(every: .seconds(10), start: Self.at(0))
        schedule.ran(.full, workLeft: true, at: Self.at(1))
        for second in 2...10 { schedule.ran(.between, workLeft: true, at: Self.at(Double(second))) }
        #expect(schedule.fullAt == Self.at(11))
        #expect(schedule.due(at: Self.at(11)) == .full)
    }

    @Test("a full turn that is due wins over a turn between claims")
    func fullWinsOverBetween() {
        var schedule = Upkeep.Schedule(every: .seconds(10), start: Self.at(0))
        schedule.ran(.full, workLeft: true, at: Self.at(1))
        #expect(schedule.due(at: Self.at(12)) == .full)
    }
}
