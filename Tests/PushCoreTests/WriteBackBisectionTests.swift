import PropertyBased
import PushCore
import Testing

@Suite struct WriteBackBisectionTests {
    enum Event: Hashable {
        case written
        case failed(StatementFailure)
    }

    /// A bisection started after a failed write-back of `count` rows: its first step, then each event and the step it leads to.
    struct Script: Sendable, CustomTestStringConvertible {
        var label: String
        var count: Int
        var hasExtras: Bool
        var first: WriteBackBisection.Step
        var events: [(Event, WriteBackBisection.Step)]
        var ended: [Int] = []
        var abandoned: [Int] = []
        var extrasDropped = false
        var testDescription: String { label }
    }

    static let scripts: [Script] = [
        Script(label: "one row, no extras: the failed write was that row's alone, so it is ended at once",
               count: 1, hasExtras: false, first: .end(0), events: [(.written, .done)], ended: [0]),
        Script(label: "one row with a hold: the hold is written first, then the row alone fails and is ended",
               count: 1, hasExtras: true, first: .writeExtras, events: [
                   (.written, .write(0..<1)),
                   (.failed(.deterministic), .end(0)),
                   (.written, .done),
               ], ended: [0]),
        Script(label: "the last of 8 is bad: each left half is written, each right half halved unwritten, the row written alone before it is ended",
               count: 8, hasExtras: false, first: .write(0..<4), events: [
                   (.written, .write(4..<6)),
                   (.written, .write(6..<7)),
                   (.written, .write(7..<8)),
                   (.failed(.deterministic), .end(7)),
                   (.written, .done),
               ], ended: [7]),
        Script(label: "the first of 8 is bad: halved down to it, then its siblings are written on the way back",
               count: 8, hasExtras: false, first: .write(0..<4), events: [
                   (.failed(.deterministic), .write(0..<2)),
                   (.failed(.deterministic), .write(0..<1)),
                   (.failed(.deterministic), .end(0)),
                   (.written, .write(1..<2)),
                   (.written, .write(2..<4)),
                   (.written, .write(4..<8)),
                   (.written, .done),
               ], ended: [0]),
        Script(label: "the extras were what failed: they are dropped and the rows written whole",
               count: 5, hasExtras: true, first: .writeExtras, events: [
                   (.failed(.deterministic), .write(0..<5)),
                   (.written, .done),
               ], extrasDropped: true),
        Script(label: "a transient failure anywhere repeats the same step",
               count: 2, hasExtras: true, first: .writeExtras, events: [
                   (.failed(.transient), .writeExtras),
                   (.written, .write(0..<1)),
                   (.failed(.transient), .write(0..<1)),
                   (.failed(.deterministic), .end(0)),
                   (.failed(.transient), .end(0)),
                   (.written, .write(1..<2)),
                   (.written, .done),
               ], ended: [0]),
        Script(label: "a row whose end fails on data too is abandoned to its lease; the rest go on",
               count: 2, hasExtras: false, first: .write(0..<1), events: [
                   (.failed(.deterministic), .end(0)),
                   (.failed(.deterministic), .write(1..<2)),
                   (.written, .done),
               ], abandoned: [0]),
        Script(label: "a right half inferred bad that writes after all (its row's lease was lost meanwhile) ends nothing",
               count: 2, hasExtras: false, first: .write(0..<1), events: [
                   (.written, .write(1..<2)),
                   (.written, .done),
               ]),
        Script(label: "no rows, only extras", count: 0, hasExtras: true, first: .writeExtras, events: [(.failed(.deterministic), .done)],
               extrasDropped: true),
    ]

    @Test(arguments: scripts)
    func script(_ s: Script) {
        var b = WriteBackBisection(count: s.count, hasExtras: s.hasExtras)
        #expect(b.next == s.first)
        for (i, (event, step)) in s.events.enumerated() {
            switch event {
            case .written: b.written()
            case .failed(let f): b.failed(f)
            }
            #expect(b.next == step, "after event \(i) (\(event))")
        }
        #expect(b.ended == s.ended)
        #expect(b.abandoned == s.abandoned)
        #expect(b.extrasDropped == s.extrasDropped)
    }

    /// Carries a bisection out against rows of which `bad` fail: every row is written or ended
    /// exactly once, only bad rows are ended, and the statements stay within the bounds.
    static func simulate(count: Int, bad: Set<Int>, hasExtras: Bool) -> (statements: Int, written: [Int], ended: [Int]) {
        var b = WriteBackBisection(count: count, hasExtras: hasExtras)
        var written: [Int] = []
        var guardSteps = 0
        while b.next != .done {
            guardSteps += 1
            precondition(guardSteps < 10 * (count + 2))
            switch b.next {
            case .writeExtras: b.written()
            case .write(let r):
                if r.contains(where: bad.contains) { b.failed(.deterministic) } else { written += r; b.written() }
            case .end: b.written()
            case .done: break
            }
        }
        return (b.statements, written, b.ended)
    }

    static func log2Ceiling(_ n: Int) -> Int { n <= 1 ? 0 : Int.bitWidth - (n - 1).leadingZeroBitCount }

    @Test(arguments: [1, 2, 3, 5, 8, 13, 64, 100, 500])
    func oneBadRowAnywhere(count: Int) {
        for badRow in 0..<count {
            for extras in [false, true] {
                let r = Self.simulate(count: count, bad: [badRow], hasExtras: extras)
                #expect(r.ended == [badRow])
                #expect(r.written.sorted() == Array(0..<count).filter { $0 != badRow })
                #expect(r.statements <= 2 * Self.log2Ceiling(count) + 2 + (extras ? 1 : 0), "n \(count), bad \(badRow)")
            }
        }
        // The last row is found in ⌈log2 n⌉ + 2 statements at most.
        #expect(Self.simulate(count: count, bad: [count - 1], hasExtras: false).statements <= Self.log2Ceiling(count) + 2)
    }

    @Test(arguments: [1, 2, 3, 7, 16, 33])
    func everyRowBad(count: Int) {
        let r = Self.simulate(count: count, bad: Set(0..<count), hasExtras: false)
        #expect(r.ended == Array(0..<count))
        #expect(r.written.isEmpty)
        #expect(r.statements <= max(1, 3 * count - 2))
    }

    @Test func anyBadRowsEveryRowOnce() {
        var rng = Xoshiro(seed: (7, 0x9E37_79B9_7F4A_7C15, 0xBF58_476D_1CE4_E5B9, 0x94D0_49BB_1331_11EB))
        for _ in 0..<2000 {
            let count = Int(rng.next() % 40) + 1
            var bad: Set<Int> = []
            for i in 0..<count where rng.next() % 5 == 0 { bad.insert(i) }
            if bad.isEmpty { bad.insert(Int(rng.next() % UInt64(count))) }
            let r = Self.simulate(count: count, bad: bad, hasExtras: rng.next() % 2 == 0)
            #expect(Set(r.ended) == bad && r.ended.count == bad.count)
            #expect(r.written.sorted() == Array(0..<count).filter { !bad.contains($0) })
            #expect(r.statements <= 3 * count)
        }
    }
}
