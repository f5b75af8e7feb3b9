import PushCore

/// The requests of a sender that wait for a stream: lowest ``PushRequest/rank`` first, first
/// in, first out within a rank; once a request with a ``PushRequest/tenant`` waits in a rank,
/// that rank's lanes and tenants take turns (``PushRequest/inTurn(_:request:)``).
///
/// One FIFO per rank present, in a small array sorted by rank: a row of a transactional lane
/// claimed while the sender is full of campaign rows starts before the campaign rows still
/// waiting, not after them. The common case, every request of one rank, is a single FIFO:
/// appending and taking cost what they cost on one array (O(1) amortized per request, one
/// comparison of ranks per request appended, no search). An emptied FIFO is dropped unless it
/// is the only one, which keeps its capacity for the next batch.
///
/// Not thread-safe: it lives in ``SenderState``, under the sender's lock.
struct SenderQueue {
    /// One rank's requests; `items[head...]` are live.
    struct FIFO {
        var rank: Int32
        var items: [PushRequest] = []
        var head = 0
        /// A request with a tenant waits here: appends put the rank's requests in turn.
        var tenanted = false

        var count: Int { items.count - head }

        /// Moves up to `want` requests from the front into `taken`.
        mutating func take(_ want: Int, into taken: inout [PushRequest]) {
            let n = min(want, count)
            taken.append(contentsOf: items[head..<head + n])
            head += n
            if head == items.count {
                items.removeAll(keepingCapacity: true)
                head = 0
                tenanted = false
            } else if head >= 4096, head * 2 >= items.count {
                items.removeFirst(head)
                head = 0
            }
        }

        /// Puts `requests` back at the front, in their order.
        mutating func putBack(_ requests: ArraySlice<PushRequest>) {
            if head >= requests.count {
                head -= requests.count
                items.replaceSubrange(head..<head + requests.count, with: requests)
            } else {
                items.insert(contentsOf: requests, at: head)
            }
        }
    }

    /// Sorted by rank; none is empty, except a lone FIFO.
    private(set) var fifos: [FIFO] = []
    /// Requests waiting, over every rank.
    private(set) var count = 0

    /// Appends `batch` behind the requests of the same rank; in a rank where a request with a
    /// tenant waits, the rank's waiting requests and the new ones are put in turn
    /// (``PushRequest/inTurn(_:request:)``), so that a tenant's few rows do not wait behind
    /// another's claimed backlog.
    mutating func append(contentsOf batch: [PushRequest]) {
        Self.forEachRun(of: batch[...]) { rank, run in
            let i = index(of: rank)
            if fifos[i].tenanted || run.contains(where: { $0.tenant != nil }) {
                var live = Array(fifos[i].items[fifos[i].head...])
                live.append(contentsOf: run)
                fifos[i].items = PushRequest.inTurn(live) { $0 }
                fifos[i].head = 0
                fifos[i].tenanted = true
            } else {
                fifos[i].items.append(contentsOf: run)
            }
        }
        count += batch.count
    }

    /// Removes and returns up to `want` requests, lowest rank first.
    mutating func take(_ want: Int) -> [PushRequest] {
        var taken: [PushRequest] = []
        taken.reserveCapacity(min(want, count))
        var i = 0
        while taken.count < want, i < fifos.count {
            fifos[i].take(want - taken.count, into: &taken)
            if fifos[i].count == 0, fifos.count > 1 {
                fifos.remove(at: i)
            } else {
                i += 1
            }
        }
        count -= taken.count
        return taken
    }

    /// Puts requests taken by ``take(_:)`` back at the head of their ranks, each rank's in the
    /// order given: they go before every request of their rank that waits.
    mutating func putBack(_ requests: [PushRequest]) {
        // Last run first: a rank's runs then end up in their order at its head.
        var runs: [(Int32, ArraySlice<PushRequest>)] = []
        Self.forEachRun(of: requests[...]) { rank, run in runs.append((rank, run)) }
        for (rank, run) in runs.reversed() {
            let i = index(of: rank)
            fifos[i].putBack(run)
        }
        count += requests.count
    }

    /// Removes and returns every request, lowest rank first.
    mutating func removeAll() -> [PushRequest] {
        let all = take(count)
        fifos = []
        return all
    }

    /// Removes and returns the requests `isWithdrawn` picks, lowest rank first, each rank's in
    /// their order; the others keep theirs. O(n) in the requests waiting: run when a lane is
    /// paused or cancelled, never per request.
    mutating func remove(where isWithdrawn: (PushRequest) -> Bool) -> [PushRequest] {
        var removed: [PushRequest] = []
        for i in fifos.indices {
            let live = fifos[i].items[fifos[i].head...]
            guard live.contains(where: isWithdrawn) else { continue }
            var kept: [PushRequest] = []
            kept.reserveCapacity(live.count)
            for request in live {
                if isWithdrawn(request) { removed.append(request) } else { kept.append(request) }
            }
            fifos[i].items = kept
            fifos[i].head = 0
        }
        guard !removed.isEmpty else { return [] }
        fifos.removeAll { $0.count == 0 }
        count -= removed.count
        return removed
    }

    /// Calls `body` with each run of consecutive requests of one rank.
    private static func forEachRun(of requests: ArraySlice<PushRequest>, _ body: (Int32, ArraySlice<PushRequest>) -> Void) {
        var start = requests.startIndex
        while start < requests.endIndex {
            let rank = requests[start].rank
            var end = start + 1
            while end < requests.endIndex, requests[end].rank == rank { end += 1 }
            body(rank, requests[start..<end])
            start = end
        }
    }

    /// The index of the FIFO of `rank`, made (in rank order) if there is none. A lone empty
    /// FIFO of another rank is reused, keeping its capacity.
    private mutating func index(of rank: Int32) -> Int {
        if let last = fifos.indices.last, fifos[last].rank == rank { return last }
        if fifos.count == 1, fifos[0].count == 0 {
            fifos[0].rank = rank
            return 0
        }
        var i = 0
        while i < fifos.count, fifos[i].rank < rank { i += 1 }
        if i < fifos.count, fifos[i].rank == rank { return i }
        fifos.insert(FIFO(rank: rank), at: i)
        return i
    }
}
