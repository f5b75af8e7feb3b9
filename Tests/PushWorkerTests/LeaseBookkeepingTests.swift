import PushCore
import PushStore
@testable import PushWorker
import Testing

/// Which of a worker's rows of pushq.leases it may delete: a claim's lease row goes once every
/// row of that claim is settled (written back or given back), never while one is in flight or
/// was dropped without its write-back landing.
@Suite("Lease bookkeeping")
struct LeaseBookkeepingTests {
    static let endpoint = Endpoint(credential: "default", environment: .production)

    func held(_ lease: Int64) -> PushWorker.Held {
        PushWorker.Held(attempt: 1, lease: lease, maxAttempts: 10, endpoint: Self.endpoint, deviceToken: "t", lastReason: nil)
    }

    func claim(_ id: Int64, _ lease: Int64) -> RowClaim { RowClaim(id: id, attempt: 1, lease: lease) }

    @Test("a lease ends with its last row settled, not before; one whose row was dropped unsettled never ends")
    func endsWithLastSettledRow() {
        var s = PushWorker.State()
        for id in Int64(1)...3 { s.hold(id, held(100)) }
        s.hold(4, held(200))
        s.hold(5, held(300))
        s.drop(claim(1, 100), settled: true)
        s.drop(claim(2, 100), settled: true)
        #expect(s.endedLeases.isEmpty, "row 3 is still in flight under lease 100")
        s.drop(claim(4, 200), settled: true)
        #expect(s.endedLeases == [200])
        s.drop(claim(3, 100), settled: true)
        #expect(s.endedLeases == [200, 100])
        s.drop(claim(5, 300), settled: false)
        #expect(s.endedLeases == [200, 100], "row 5's write-back did not land: its lease row stays for the upkeep")
        #expect(s.leaseRows.isEmpty && s.unsettledLeases.isEmpty && s.held.isEmpty)
    }

    @Test("a drop under another claim than the row's changes nothing; a row claimed again leaves its older claim, which can end")
    func claimedAgain() {
        var s = PushWorker.State()
        s.hold(1, held(100))
        s.hold(2, held(100))
        s.drop(claim(1, 99), settled: true)
        #expect(s.held[1]?.lease == 100 && s.leaseRows[100] == 2, "an older claim's answer touches nothing")
        // Row 1's lease ran out and this worker claimed it again under lease 500.
        s.hold(1, held(500))
        #expect(s.leaseRows[100] == 1 && s.leaseRows[500] == 1)
        s.drop(claim(2, 100), settled: true)
        #expect(s.endedLeases == [100], "lease 100 has no row left: row 1 is lease 500's now")
        s.drop(claim(1, 500), settled: true)
        #expect(s.endedLeases == [100, 500])
    }

    @Test("one unsettled row keeps its lease from ending even when the others settle after it")
    func unsettledFirst() {
        var s = PushWorker.State()
        s.hold(1, held(100))
        s.hold(2, held(100))
        s.drop(claim(1, 100), settled: false)
        s.drop(claim(2, 100), settled: true)
        #expect(s.endedLeases.isEmpty)
        // A later claim that happens to have the same lease value starts afresh.
        s.hold(3, held(100))
        s.drop(claim(3, 100), settled: true)
        #expect(s.endedLeases == [100])
    }
}
