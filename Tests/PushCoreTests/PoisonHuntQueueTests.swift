import PushCore
import Testing

/// Hunts against a model of the queue: a claim takes the first `limit` due rows and the first
/// `limit` lapsed rows, and fails if any of them is bad.
@Suite struct PoisonHuntQueueTests {
    struct Queue {
        var due: [Int64]
        var lapsed: [Int64] = []
        var bad: Set<Int64>
        /// Every claim fails, whatever the rows (a broken statement).
        var brokenStatement = false
        var claimed: [Int64] = []
        var ended: [Int64] = []
        var claims = 0

        /// Claims like the claim statement; nil when it fails.
        mutating func claim(limit: Int, row: Int64? = nil, excluding: [Int64] = []) -> Int? {
            claims += 1
            let eligible = { (id: Int64) in (row == nil || id == row) && !excluding.contains(id) }
            let takeDue = Array(due.filter(eligible).prefix(limit))
            let takeLapsed = Array(lapsed.filter(eligible).prefix(limit))
            let taken = takeDue + takeLapsed
            if taken.contains(where: bad.contains) || (brokenStatement && !taken.isEmpty) { return nil }
            due.removeAll { takeDue.contains($0) }
            lapsed.removeAll { takeLapsed.contains($0) }
            claimed += taken
            return taken.count
        }

        func heads(excluding: [Int64]) -> [Int64] {
            [due.first { !excluding.contains($0) }, lapsed.first { !excluding.contains($0) }].compactMap { $0 }
        }

        /// Claims at `full` until the queue is empty or a hunt gives up; returns the hunts' ends.
        mutating func drain(full: Int, maximumSuspects: Int = 64) -> [PoisonHunt.Step] {
            var ends: [PoisonHunt.Step] = []
            while !(due.isEmpty && lapsed.isEmpty) && ends.count < 1000 {
                if claim(limit: full) != nil { continue }
                var hunt = PoisonHunt(failedLimit: full, maximumSuspects: maximumSuspects)
                while !hunt.isOver {
                    switch hunt.next {
                    case .claim(let limit):
                        if let n = claim(limit: limit) { hunt.claimed(rows: n) } else { hunt.failed(.deterministic, error: "bad") }
                    case .findHeads(let excluding):
                        hunt.found(heads(excluding: excluding))
                    case .claimRow(let id):
                        if let n = claim(limit: 1, row: id) { hunt.claimed(rows: n) } else { hunt.failed(.deterministic, error: "bad \(id)") }
                    case .claimOther(let excluding):
                        if let n = claim(limit: 1, excluding: excluding) { hunt.claimed(rows: n) } else { hunt.failed(.deterministic, error: "bad") }
                    case .claimLast(let excluding):
                        if let last = due.last(where: { !excluding.contains($0) }) {
                            if let n = claim(limit: 1, row: last) { hunt.claimed(rows: n) } else { hunt.failed(.deterministic, error: "bad") }
                        } else {
                            hunt.claimed(rows: 0)
                        }
                    case .isolate(let suspects):
                        let ids = suspects.map(\.id)
                        ended += ids
                        due.removeAll { ids.contains($0) }
                        lapsed.removeAll { ids.contains($0) }
                        hunt.isolated()
                    case .done, .giveUp:
                        break
                    }
                }
                ends.append(hunt.next)
                if case .giveUp = hunt.next { break }
            }
            return ends
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var rows = 1000
        var full = 500
        var bad: [Int64]
        var lapsed: [Int64] = []
        var maximumSuspects = 64
        var testDescription: String { label }
    }

    static let cases: [Case] = [
        Case(label: "bad row first", bad: [0]),
        Case(label: "bad row second", bad: [1]),
        Case(label: "bad row last of the first claim", bad: [499]),
        Case(label: "bad row 300 rows in", bad: [300]),
        Case(label: "bad row past the first claim", bad: [777]),
        Case(label: "three bad rows together at the head", bad: [0, 1, 2]),
        Case(label: "bad rows spread out", bad: [3, 64, 65, 400, 999]),
        Case(label: "ten bad rows together, more than the suspects of one hunt", bad: Array(10..<20), maximumSuspects: 4),
        Case(label: "a batch of 150 bad rows", bad: Array(200..<350)),
        Case(label: "claim of one row", rows: 50, full: 1, bad: [0, 7]),
        Case(label: "full size of 10 000", rows: 10_500, full: 10_000, bad: [6_789]),
        Case(label: "bad lapsed row", rows: 300, full: 200, bad: [5_002], lapsed: [5_000, 5_001, 5_002, 5_003]),
        Case(label: "bad rows due and lapsed", rows: 300, full: 200, bad: [150, 5_000], lapsed: [5_000, 5_001]),
    ]

    @Test("every bad row is ended, every other row is claimed once, with few claims", arguments: cases)
    func drain(_ c: Case) {
        var q = Queue(due: (0..<Int64(c.rows)).map { $0 }, lapsed: c.lapsed, bad: Set(c.bad))
        let ends = q.drain(full: c.full, maximumSuspects: c.maximumSuspects)
        #expect(ends.allSatisfy { $0 == .done }, "\(ends.filter { $0 != .done })")
        #expect(Set(q.ended) == Set(c.bad) && q.ended.count == c.bad.count)
        let good = (0..<Int64(c.rows)).map { $0 } + c.lapsed
        #expect(q.claimed.sorted() == good.filter { !c.bad.contains($0) }.sorted())
        // Not linear in the queue: about (log2 full)^2 claims per hunt, 3 per bad row, plus the plain claims.
        let log = c.full.bitWidth - c.full.leadingZeroBitCount
        let hunts = c.bad.count / c.maximumSuspects + c.bad.count
        let bound = hunts * (log * log + 2) + 3 * c.bad.count + c.rows / c.full + 2
        #expect(q.claims <= bound, "\(q.claims) claims")
    }

    @Test("a claim that fails whatever the row ends nothing")
    func brokenStatement() {
        for rows in [1, 2, 30, 64, 65, 1000] {
            var q = Queue(due: (0..<Int64(rows)).map { $0 }, bad: [], brokenStatement: true)
            let ends = q.drain(full: 500)
            #expect(ends.count == 1)
            // Up to 64 rows, all are suspects and none is left to claim; past that, the row due last fails too.
            #expect(ends.first == .giveUp(rows <= 64 ? .nothingElseDue : .everyRowFails), "\(rows) rows")
            #expect(q.ended.isEmpty && q.claimed.isEmpty)
            #expect(q.due.count == rows)
        }
    }

    /// a bad row alone in the queue is not ended: nothing shows the claim works; a row enqueued after it is
    /// claimed, and it is ended
    @Test("a bad row alone in the queue is not ended; once a row enqueued after it is claimed, it is ended")
    func aloneThenCompany() {
        var q = Queue(due: [1], bad: [1])
        #expect(q.drain(full: 500) == [.giveUp(.nothingElseDue)])
        #expect(q.ended.isEmpty)
        q.due.append(2)
        #expect(q.drain(full: 500) == [.done])
        #expect(q.ended == [1] && q.claimed == [2])
    }
}
