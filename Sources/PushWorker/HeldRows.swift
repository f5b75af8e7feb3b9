import PushCore
import PushStore

extension PushWorker {
    /// A row this worker holds (claimed, not yet written back or given back).
    struct Held: Sendable {
        var attempt: Int
        /// The claim's lease (``ClaimedNotification/lease``): answers of an older claim of the row are not this one's.
        var lease: Int64
        var maxAttempts: Int
        var endpoint: Endpoint
        var deviceToken: String
        /// The previous attempt's `last_reason`.
        var lastReason: String?
        /// Claimed as the probe of a held endpoint.
        var isProbe = false
        /// The row's lane (``ClaimedNotification/lane``), for `pushq_lane_sent_total`.
        var lane = "default"
        /// Its lane's rank at the claim (``ClaimedNotification/rank``).
        var rank = 100
        /// A quiet lane's row: its window (``ClaimedNotification/quietWindow``) and the claim's
        /// clock, for a give-back to decide whether its entry waits for the window's end.
        var quiet: (window: QuietInstants, clock: QuietClock)?
    }
}

/// The ledger of the rows a worker holds and of the leases they were claimed under.
///
/// A row is held from its claim (``claimed(_:_:)``) until its write-back or give-back lands
/// (``settled(_:)``) or the worker gives up on it (``abandoned(_:)``: the database was given up
/// at shutdown). Every transition names the claim it is about, a row's id and lease: after a
/// row's lease ran out this worker may hold it again under a newer claim, which an older
/// claim's answer (``answered(_:)``), release or write-back must not touch.
///
/// Each claim writes one row of pushq.leases; the ledger counts the held rows of each lease, and
/// once the last one is settled the lease has ended: ``takeEndedLeases()`` hands it out once, for
/// the worker to delete its row. A lease one of whose rows was abandoned never ends here: its
/// row of pushq.leases stays, and the upkeep brings those rows back once the lease runs out.
///
/// A value with no I/O, kept in the worker's `Mutex<State>`; tested without a database.
struct HeldRows: Sendable {
    private var rows: [Int64: PushWorker.Held] = [:]
    /// How many held rows each lease still has.
    private var leaseRows: [Int64: Int] = [:]
    /// Leases one of whose rows was abandoned: they never end here.
    private var unsettledLeases: Set<Int64> = []
    /// Leases whose rows were all settled, in the order they ended, until taken.
    private var endedLeases: [Int64] = []

    /// The rows held.
    var count: Int { rows.count }

    var isEmpty: Bool { rows.isEmpty }

    /// The row `id`, under whichever claim this worker holds it.
    subscript(id: Int64) -> PushWorker.Held? { rows[id] }

    /// The highest lane rank among the held rows (the lowest priority), nil when none is held.
    var highestRank: Int? { rows.values.lazy.map(\.rank).max() }

    /// Row `id` was claimed under `row`'s lease. A row this worker held under an older claim (its
    /// lease ran out and this worker claimed it again) leaves that claim: the newer one has it.
    mutating func claimed(_ id: Int64, _ row: PushWorker.Held) {
        if let older = rows[id] { leave(older.lease, settled: true) }
        rows[id] = row
        leaseRows[row.lease, default: 0] += 1
    }

    /// The row `request` was sent for, if this worker still holds it under the claim that sent it
    /// (the same lease); nil when the row was settled meanwhile, or is held under a newer claim.
    func answered(_ request: PushRequest) -> PushWorker.Held? {
        rows[request.tag].flatMap { $0.lease == request.claim ? $0 : nil }
    }

    /// The claim `request` was sent under, if this worker still holds the row under it: what to
    /// give back, or to end, for it.
    func claim(of request: PushRequest) -> RowClaim? {
        answered(request).map { RowClaim(id: request.tag, attempt: $0.attempt, lease: $0.lease) }
    }

    /// The write-back or give-back of `claim` landed: the row is forgotten, and its lease ends
    /// with its last row. Nothing changes when this worker holds the row under another claim now.
    mutating func settled(_ claim: RowClaim) {
        forget(claim, settled: true)
    }

    /// The worker gave up on the row of `claim` without its write-back landing: the row is
    /// forgotten, and its lease never ends here (its row of pushq.leases brings the row back).
    mutating func abandoned(_ claim: RowClaim) {
        forget(claim, settled: false)
    }

    /// ``settled(_:)`` or ``abandoned(_:)``.
    mutating func forget(_ claim: RowClaim, settled: Bool) {
        guard rows[claim.id]?.lease == claim.lease else { return }
        rows[claim.id] = nil
        leave(claim.lease, settled: settled)
    }

    /// The leases that ended since the last call, whose rows of pushq.leases the worker deletes.
    mutating func takeEndedLeases() -> [Int64] {
        defer { endedLeases.removeAll() }
        return endedLeases
    }

    /// One row fewer under `lease`; the last one ends the lease, unless one of its rows left unsettled.
    private mutating func leave(_ lease: Int64, settled: Bool) {
        if !settled { unsettledLeases.insert(lease) }
        let left = (leaseRows[lease] ?? 1) - 1
        guard left <= 0 else {
            leaseRows[lease] = left
            return
        }
        leaseRows[lease] = nil
        if unsettledLeases.remove(lease) == nil { endedLeases.append(lease) }
    }
}
