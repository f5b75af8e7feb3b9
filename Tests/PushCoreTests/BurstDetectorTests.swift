import PushCore
import Testing

@Suite struct BurstDetectorTests {
    @Test("more than half of at least 20 recent answers")
    func threshold() {
        var d = BurstDetector(capacity: 32, minimumAnswers: 20)
        for i in 0..<19 { d.record(row: Int64(i), suspect: true) }
        #expect(!d.canJudge)
        #expect(!d.isBurst)
        d.record(row: 19, suspect: true)
        #expect(d.isBurst)
        // 10 bad of 20: exactly half is not a burst; 11 of 21 is.
        var e = BurstDetector(capacity: 32, minimumAnswers: 20)
        for i in 0..<20 { e.record(row: Int64(i), suspect: i % 2 == 0) }
        #expect(e.canJudge && !e.isBurst)
        e.record(row: 20, suspect: true)
        #expect(e.isBurst)
        // Old answers roll out of the window: 32 good answers clear it.
        for i in 100..<132 { e.record(row: Int64(i), suspect: false) }
        #expect(!e.isBurst)
        #expect(e.count == 32)
    }

    @Test("one notification answered again takes no second place: a row tried again cannot fill the window")
    func distinctRows() {
        var d = BurstDetector(capacity: 32, minimumAnswers: 20)
        for _ in 0..<50 { d.record(row: 7, suspect: true) }
        #expect(d.count == 1)
        #expect(!d.canJudge)
        // Its latest answer replaces the earlier one.
        for i in 0..<19 { d.record(row: Int64(100 + i), suspect: false) }
        #expect(d.canJudge && !d.isBurst)
        d.record(row: 7, suspect: false)
        #expect(d.count == 20)
        for i in 0..<11 { d.record(row: Int64(100 + i), suspect: true) }
        #expect(d.isBurst)  // 11 of 20
    }
}
