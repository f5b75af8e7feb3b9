import PushCore
import Testing

/// A connection's thread never spins on a failing `curl_multi_perform`/`curl_multi_poll`.
@Suite struct LoopBackoffTests {
    /// rests double from 10 ms to 1 s; only the first failure of a run is logged; in-flight transfers are
    /// given up from the third
    @Test("rests double from 10 ms to 1 s; only a run's first failure is logged; in-flight transfers given up from the third")
    func failuresInARow() {
        var backoff = LoopBackoff()
        let steps = (1...9).map { _ in backoff.failed() }
        #expect(steps.map(\.restMilliseconds) == [10, 20, 40, 80, 160, 320, 640, 1000, 1000])
        #expect(steps.map(\.log) == [true, false, false, false, false, false, false, false, false])
        #expect(steps.map(\.abandonInFlight) == [false, false, true, true, true, true, true, true, true])
        #expect(backoff.failures == 9)
    }

    @Test("a turn that works ends the run: it reports how many failures it ends, and the next failure starts over")
    func recovery() {
        var backoff = LoopBackoff()
        #expect(backoff.succeeded() == 0)
        _ = backoff.failed()
        _ = backoff.failed()
        #expect(backoff.succeeded() == 2)
        #expect(backoff.succeeded() == 0)
        let first = backoff.failed()
        #expect(first.log && first.restMilliseconds == 10 && !first.abandonInFlight)
    }

    @Test("a very long run stays at the longest rest")
    func noOverflow() {
        var backoff = LoopBackoff(abandonAfter: 1, firstRestMilliseconds: 5, maximumRestMilliseconds: 250)
        var last = backoff.failed()
        #expect(last.abandonInFlight)
        for _ in 0..<100 { last = backoff.failed() }
        #expect(last.restMilliseconds == 250)
    }
}
