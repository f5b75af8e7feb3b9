import PushCore
import Testing

/// How long a drained claim loop waits (``DrainedWait``): until the next entry comes due, within
/// the poll, never spinning.
@Suite struct DrainedWaitTests {
    static let poll = Duration.seconds(1)

    @Test("no entry due later: the poll; an entry in 0.3 s: 0.3 s and the margin; one beyond the poll: the poll")
    func untilTheNextEntry() {
        var wait = DrainedWait()
        #expect(wait.next(poll: Self.poll, took: 0, secondsUntilNext: nil) == Self.poll)
        #expect(!wait.early)
        #expect(wait.next(poll: Self.poll, took: 3, secondsUntilNext: 0.3) == .milliseconds(305))
        #expect(wait.early)
        #expect(wait.next(poll: Self.poll, took: 1, secondsUntilNext: 7200) == Self.poll)
        #expect(!wait.early)
        #expect(wait.next(poll: Self.poll, took: 1, secondsUntilNext: .infinity) == Self.poll)
        #expect(wait.next(poll: Self.poll, took: 1, secondsUntilNext: 1e300) == Self.poll)
    }

    /// an entry due in a microsecond (or, from a clock's step, a moment ago) waits 10 ms, never 0
    @Test("an entry due at once waits the shortest wait, never 0")
    func neverZero() {
        var wait = DrainedWait()
        #expect(wait.next(poll: Self.poll, took: 1, secondsUntilNext: 0.000_001) == .milliseconds(10))
        #expect(wait.next(poll: Self.poll, took: 1, secondsUntilNext: -5) == .milliseconds(10))
        #expect(wait.next(poll: Self.poll, took: 1, secondsUntilNext: .nan) == Self.poll)
    }

    /// early wakes whose claims take nothing (entries of another credential, close together) wait longer and
    /// longer, up to the poll; a wait that ran out and whose claim takes rows starts over
    @Test("early wakes that take nothing double the shortest wait up to the poll; one that ran out and takes rows starts over")
    func emptyEarlyWakesBackOff() {
        var wait = DrainedWait()
        let waits = (0..<9).map { _ in
            defer { wait.waited(signaled: false) }
            return wait.next(poll: Self.poll, took: 0, secondsUntilNext: 0.001)
        }
        #expect(waits == [10, 20, 40, 80, 160, 320, 640, 1000, 1000].map { Duration.milliseconds($0) })
        #expect(wait.next(poll: Self.poll, took: 5, secondsUntilNext: 0.001) == .milliseconds(10))
        // A wait that was the poll (no early wake) does not grow the floor.
        var plain = DrainedWait()
        _ = plain.next(poll: Self.poll, took: 0, secondsUntilNext: nil)
        plain.waited(signaled: false)
        #expect(plain.next(poll: Self.poll, took: 0, secondsUntilNext: 0.001) == .milliseconds(10))
    }

    /// a wait a NOTIFY ended tells nothing of the entries: its claim's rows (the NOTIFY's) leave the floor as it is,
    /// and so does its claim taking nothing; only a wait that ran out moves it (R3: a stream of entries this worker
    /// cannot take, between its own NOTIFYd rows, woke it every 10 ms)
    @Test("a wait a NOTIFY ended leaves the floor as it is, whether its claim took rows or not")
    func notifyLeavesTheFloor() {
        var wait = DrainedWait()
        for _ in 0..<3 {
            _ = wait.next(poll: Self.poll, took: 0, secondsUntilNext: 0.001)
            wait.waited(signaled: false)
        }
        #expect(wait.next(poll: Self.poll, took: 0, secondsUntilNext: 0.001) == .milliseconds(80))
        wait.waited(signaled: true)
        #expect(wait.next(poll: Self.poll, took: 7, secondsUntilNext: 0.001) == .milliseconds(80), "the NOTIFY's rows")
        wait.waited(signaled: true)
        #expect(wait.next(poll: Self.poll, took: 0, secondsUntilNext: 0.001) == .milliseconds(80))
        wait.waited(signaled: false)
        #expect(wait.next(poll: Self.poll, took: 2, secondsUntilNext: 0.001) == .milliseconds(10), "ran out, and took rows")
    }
}
