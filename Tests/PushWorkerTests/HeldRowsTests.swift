import PushCore
import PushStore
@testable import PushWorker
import Testing

/// The ledger of the rows a worker holds and the leases they were claimed under, without a
/// database: which answer or give-back belongs to which claim, and which of the worker's rows of
/// pushq.leases it may delete (a claim's lease row goes once every row of that claim is settled,
/// written back or given back; never while one is in flight or was dropped without its write-back
/// landing).
@Suite("Held rows")
struct HeldRowsTests {
    static let endpoint = Endpoint(credential: "default", environment: .production)

    func row(_ lease: Int64, attempt: Int = 1, rank: Int = 100) -> PushWorker.Held {
        PushWorker.Held(attempt: attempt, lease: lease, maxAttempts: 10, endpoint: Self.endpoint, deviceToken: "t", lastReason: nil,
                        rank: rank)
    }

    func claim(_ id: Int64, _ lease: Int64) -> RowClaim { RowClaim(id: id, attempt: 1, lease: lease) }

    func request(_ id: Int64, claim lease: Int64) -> PushRequest {
        let headers = APNsHeaders(pushType: .alert, topic: "t", priority: 10, apnsID: "00000000-0000-4000-8000-000000000000")
        return PushRequest(tag: id, deviceToken: "t", payload: [], fields: .apns(headers), claim: lease)
    }

    @Test("claimed rows are held: counted, found by id, their highest rank known")
    func claimed() {
        var rows = HeldRows()
        #expect(rows.isEmpty && rows.highestRank == nil)
        rows.claimed(1, row(100, rank: 200))
        rows.claimed(2, row(100, rank: 50))
        #expect(rows.count == 2 && !rows.isEmpty)
        #expect(rows[1]?.rank == 200 && rows[3] == nil)
        #expect(rows.highestRank == 200)
    }

    @Test("an answer is the held row's only under the claim it was sent for; another claim's finds nothing")
    func answered() {
        var rows = HeldRows()
        rows.claimed(1, row(100, attempt: 3))
        #expect(rows.answered(request(1, claim: 100))?.attempt == 3)
        #expect(rows.claim(of: request(1, claim: 100)) == RowClaim(id: 1, attempt: 3, lease: 100))
        #expect(rows.answered(request(1, claim: 99)) == nil, "an older claim of the row")
        #expect(rows.claim(of: request(1, claim: 99)) == nil)
        #expect(rows.answered(request(2, claim: 100)) == nil, "a row not held")
    }

    @Test("a lease ends with its last settled row, not before; one whose row was abandoned never ends")
    func endsWithLastSettledRow() {
        var rows = HeldRows()
        for id in Int64(1)...3 { rows.claimed(id, row(100)) }
        rows.claimed(4, row(200))
        rows.claimed(5, row(300))
        rows.settled(claim(1, 100))
        rows.settled(claim(2, 100))
        #expect(rows.takeEndedLeases().isEmpty, "row 3 is still in flight under lease 100")
        rows.settled(claim(4, 200))
        #expect(rows.takeEndedLeases() == [200])
        rows.settled(claim(3, 100))
        #expect(rows.takeEndedLeases() == [100], "each ended lease is handed out once")
        rows.abandoned(claim(5, 300))
        #expect(rows.takeEndedLeases().isEmpty, "row 5's write-back did not land: its lease row stays for the upkeep")
        #expect(rows.isEmpty)
    }

    @Test("a settle under another claim than the row's changes nothing; a row claimed again leaves its older claim")
    func claimedAgain() {
        var rows = HeldRows()
        rows.claimed(1, row(100))
        rows.claimed(2, row(100))
        rows.settled(claim(1, 99))
        #expect(rows[1]?.lease == 100 && rows.count == 2, "an older claim's answer touches nothing")
        // Row 1's lease ran out and this worker claimed it again under lease 500.
        rows.claimed(1, row(500))
        #expect(rows.count == 2 && rows[1]?.lease == 500)
        #expect(rows.answered(request(1, claim: 100)) == nil, "the older claim's answer is dropped")
        rows.settled(claim(2, 100))
        #expect(rows.takeEndedLeases() == [100], "lease 100 has no row left: row 1 is lease 500's now")
        rows.settled(claim(1, 500))
        #expect(rows.takeEndedLeases() == [500])
    }

    @Test("one abandoned row keeps its lease from ending even when the others settle after it")
    func abandonedFirst() {
        var rows = HeldRows()
        rows.claimed(1, row(100))
        rows.claimed(2, row(100))
        rows.abandoned(claim(1, 100))
        rows.settled(claim(2, 100))
        #expect(rows.takeEndedLeases().isEmpty)
        // A later claim that happens to have the same lease value starts afresh.
        rows.claimed(3, row(100))
        rows.settled(claim(3, 100))
        #expect(rows.takeEndedLeases() == [100])
    }

    @Test("ended leases gather in the order they end until they are taken")
    func endedLeasesGather() {
        var rows = HeldRows()
        rows.claimed(1, row(100))
        rows.claimed(2, row(200))
        rows.settled(claim(2, 200))
        rows.settled(claim(1, 100))
        #expect(rows.takeEndedLeases() == [200, 100])
        #expect(rows.takeEndedLeases().isEmpty)
    }
}
