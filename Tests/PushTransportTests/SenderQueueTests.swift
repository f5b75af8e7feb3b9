import PushCore
@testable import PushTransport
import Testing

/// The sender's waiting queue (``SenderState``, ``SenderQueue``) alone: lowest rank first,
/// first in, first out within a rank.
@Suite struct SenderQueueTests {
    func ranked(_ i: Int, _ rank: Int32) -> PushRequest {
        var r = request(i)
        r.rank = rank
        return r
    }

    func running() -> SenderState {
        var s = SenderState()
        s.phase = .running
        return s
    }

    @Test("one rank: first in, first out, in takes of any size, and the count follows")
    func oneRankIsFIFO() {
        var s = running()
        s.queue.append(contentsOf: (1...5).map { request($0) })
        s.queue.append(contentsOf: (6...10).map { request($0) })
        #expect(s.pendingCount == 10)
        #expect(s.exchange(want: 3).1.map(\.tag) == [1, 2, 3])
        #expect(s.exchange(want: 4).1.map(\.tag) == [4, 5, 6, 7])
        #expect(s.pendingCount == 3 && s.inFlight == 7)
        #expect(s.exchange(want: 10).1.map(\.tag) == [8, 9, 10])
        #expect(s.pendingCount == 0 && s.inFlight == 10)
        #expect(s.exchange(want: 10).1.isEmpty)
        #expect(s.queue.fifos.count == 1, "the lone FIFO is kept, with its capacity")
    }

    @Test("a lower rank submitted after a higher one is taken first; each rank stays in its order")
    func lowerRankFirst() {
        var s = running()
        s.queue.append(contentsOf: (1...4).map { ranked($0, 200) })
        s.queue.append(contentsOf: [ranked(5, 10), ranked(6, 100), ranked(7, 10)])
        s.queue.append(contentsOf: [ranked(8, 200), ranked(9, 10)])
        #expect(s.pendingCount == 9)
        #expect(s.queue.fifos.map(\.rank) == [10, 100, 200])
        #expect(s.exchange(want: 2).1.map(\.tag) == [5, 7])
        #expect(s.exchange(want: 3).1.map(\.tag) == [9, 6, 1])
        #expect(s.queue.fifos.map(\.rank) == [200], "emptied ranks are dropped")
        #expect(s.exchange(want: 100).1.map(\.tag) == [2, 3, 4, 8])
        #expect(s.pendingCount == 0)
    }

    @Test("requeue puts requests back at the head of their own rank, before what waits in it, behind lower ranks")
    func requeueAtHeadOfRank() {
        var s = running()
        s.queue.append(contentsOf: (1...6).map { ranked($0, 200) })
        let taken = s.exchange(want: 3).1
        #expect(taken.map(\.tag) == [1, 2, 3])
        s.queue.append(contentsOf: [ranked(7, 10), ranked(8, 10)])
        let requeued = s.requeue(Array(taken[1...]))
        #expect(requeued)
        #expect(s.inFlight == 1 && s.pendingCount == 7)
        #expect(s.exchange(want: 100).1.map(\.tag) == [7, 8, 2, 3, 4, 5, 6])

        // A requeued batch of several ranks (an exchange that took across ranks).
        var t = running()
        t.queue.append(contentsOf: [ranked(1, 10), ranked(2, 10), ranked(3, 200), ranked(4, 200)])
        let mixed = t.exchange(want: 3).1
        #expect(mixed.map(\.tag) == [1, 2, 3])
        let putBack = t.requeue(mixed)
        #expect(putBack)
        #expect(t.exchange(want: 100).1.map(\.tag) == [1, 2, 3, 4])

        // Answers resent in any order of ranks: each rank's keep their order.
        var u = running()
        u.queue.append(contentsOf: [ranked(9, 10), ranked(10, 200)])
        u.queue.putBack([ranked(1, 200), ranked(2, 10), ranked(3, 200), ranked(4, 10)])
        #expect(u.pendingCount == 6)
        #expect(u.exchange(want: 100).1.map(\.tag) == [2, 4, 9, 1, 3, 10])
    }

    @Test("requeue after shutdown began requeues nothing")
    func requeueWhileStopping() {
        var s = running()
        s.queue.append(contentsOf: [request(1)])
        let taken = s.exchange(want: 1).1
        s.phase = .stopping(deadline: 0)
        let requeued = s.requeue(taken)
        #expect(!requeued)
        #expect(s.pendingCount == 0)
    }

    @Test("takeUnsent returns every waiting request, lowest rank first, and leaves the queue empty")
    func takeUnsentReturnsAll() {
        var s = running()
        s.queue.append(contentsOf: [ranked(1, 200), ranked(2, 100), ranked(3, 200), ranked(4, 5), ranked(5, 100)])
        _ = s.exchange(want: 1)
        let unsent = s.takeUnsent()
        #expect(unsent.map(\.tag) == [2, 5, 1, 3])
        #expect(s.pendingCount == 0 && s.queue.fifos.isEmpty)
        #expect(s.exchange(want: 10).1.isEmpty)
        #expect(s.takeUnsent().isEmpty)
    }

    @Test("a long queue of one rank compacts its front and still hands out every request once, in order")
    func longQueueCompacts() {
        var s = running()
        s.queue.append(contentsOf: (0..<20_000).map { request($0) })
        var seen: [Int64] = []
        while s.pendingCount > 0 {
            let taken = s.exchange(want: 700).1
            seen += taken.map(\.tag)
            if taken.count == 700 { _ = s.requeue(Array(taken.suffix(100))); seen.removeLast(100) }
        }
        #expect(seen == (0..<20_000).map(Int64.init))
    }
}
