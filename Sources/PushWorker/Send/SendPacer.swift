import PushCore
import PushStore

/// The requests of capped lanes and capped credentials, each started no faster than its cap.
///
/// The claim spends the fleet's budget (`pushq.rate_budgets`) as it claims rows; claimed rows
/// then wait for a stream, and a provider that stalls for a while would see every row claimed
/// meanwhile start at once when it answers again. So a worker also meters the starts: a
/// request of a capped lane or credential goes to its sender only when a ``TokenBucket`` of its
/// lane's cap (and one of its credential's) has a token, and only while the sender has a free
/// stream for it, so that it starts at once rather than queue behind a stall. Whatever the
/// provider does, the requests of a cap start at most at the cap, plus ``burstSeconds`` of it.
///
/// A lane's cap is its row of `pushq.lanes`, else `default`'s (the claim's rule; lanes without
/// a row share `default`'s bucket, as they share its budget). A credential's is
/// ``WorkerConfiguration/credentialCaps``. Requests of neither never come here.
///
/// Not thread-safe: it lives in the worker's state, under its lock. Pure apart from that: the
/// clock (nanoseconds) and each sender's free streams are passed in.
struct SendPacer {
    /// Seconds of its cap a bucket keeps (at least one token): a cap idle for a while starts this
    /// much at once. Small: what reaches the provider also bunches by how late threads run.
    static let burstSeconds = 0.02

    /// A bucket: a lane's (by the name of the row whose cap it is) or a credential's.
    enum Bucket: Hashable {
        case lane(String)
        case credential(Provider, String)
    }

    /// The buckets a request takes a token from.
    struct Key: Hashable {
        var lane: Bucket?
        var credential: Bucket?
    }

    /// One key's requests, first in, first out.
    struct Queue {
        var items: [(endpoint: Endpoint, request: PushRequest)] = []
        var head = 0
        var count: Int { items.count - head }
    }

    /// Caps of lanes with a row of their own (nil: that row has no cap).
    private var laneCaps: [String: Double?] = [:]
    /// `default`'s cap: every lane without a row of its own.
    private var defaultCap: Double?
    private var credentialCaps: [Bucket: Double] = [:]
    private var buckets: [Bucket: TokenBucket] = [:]
    private var queues: [Key: Queue] = [:]
    /// Keys with requests waiting, in the order they first came: each turn starts with the next.
    private var order: [Key] = []
    private var turn = 0
    /// Requests waiting, every key.
    private(set) var count = 0

    /// Whether any lane or credential is capped: otherwise dispatch never looks here.
    private(set) var isActive = false

    init(credentialCaps: [RateBudget] = []) {
        for cap in credentialCaps where cap.perSecond > 0 {
            self.credentialCaps[.credential(cap.provider, cap.credential)] = cap.perSecond
        }
        isActive = !self.credentialCaps.isEmpty
    }

    /// Takes the lanes' caps as read from `pushq.lanes`; a bucket whose cap changed keeps its tokens.
    mutating func setLanes(_ lanes: [LaneSetting], now: Int64) {
        laneCaps = [:]
        defaultCap = nil
        for lane in lanes {
            let cap = lane.maxPerSecond.flatMap { $0 > 0 ? $0 : nil }
            laneCaps[lane.name] = .some(cap)
            if lane.name == LaneStops.defaultLane { defaultCap = cap }
        }
        for (bucket, _) in buckets {
            if let rate = rate(of: bucket) {
                buckets[bucket]?.setRate(rate, burstSeconds: Self.burstSeconds, now: now)
            } else {
                buckets[bucket] = nil
            }
        }
        isActive = !credentialCaps.isEmpty || defaultCap != nil || laneCaps.values.contains { $0 != nil }
    }

    /// The buckets of a request of `lane` to `endpoint`; nil when neither is capped.
    func key(lane: String, endpoint: Endpoint) -> Key? {
        var key = Key()
        if let own = laneCaps[lane] {
            if own != nil { key.lane = .lane(lane) }
        } else if defaultCap != nil {
            key.lane = .lane(LaneStops.defaultLane)
        }
        let credential = Bucket.credential(endpoint.provider, endpoint.credential)
        if credentialCaps[credential] != nil { key.credential = credential }
        return key.lane == nil && key.credential == nil ? nil : key
    }

    /// Moves the requests of capped lanes and credentials out of `batches` (one per endpoint)
    /// into their queues. A queue a request with a tenant joined puts its waiting requests in
    /// turn (each (lane, tenant)'s first, then second, …: ``PushRequest/inTurn(_:request:)``), as
    /// a sender's queue does.
    ///
    /// - Returns: whether it took any.
    mutating func take(from batches: inout [Endpoint: [PushRequest]]) -> Bool {
        guard isActive else { return false }
        var took = false
        var tenanted: Set<Key> = []
        for (endpoint, requests) in batches {
            guard requests.contains(where: { key(lane: $0.lane, endpoint: endpoint) != nil }) else { continue }
            var unpaced: [PushRequest] = []
            for request in requests {
                if let key = key(lane: request.lane, endpoint: endpoint) {
                    append(request, to: endpoint, key)
                    if request.tenant != nil { tenanted.insert(key) }
                    took = true
                } else {
                    unpaced.append(request)
                }
            }
            batches[endpoint] = unpaced.isEmpty ? nil : unpaced
        }
        for key in tenanted {
            guard var queue = queues[key] else { continue }
            queue.items = PushRequest.inTurn(Array(queue.items[queue.head...])) { $0.request }
            queue.head = 0
            queues[key] = queue
        }
        return took
    }

    /// Queues `request` for `endpoint` under `key`.
    mutating func append(_ request: PushRequest, to endpoint: Endpoint, _ key: Key) {
        if queues[key] == nil { order.append(key) }
        queues[key, default: Queue()].items.append((endpoint, request))
        count += 1
    }

    /// What may start now: for each key in turn, the requests at its head while their buckets
    /// have a token and their sender a free stream (`room`, asked once per endpoint); requests
    /// whose ``PushRequest/startDeadline`` passed meanwhile come back as `late` (never sent).
    ///
    /// - Returns: the requests to submit, by endpoint; the late ones; and nanoseconds until a
    ///   bucket that held a request back has its next token (nil: none waits for a token).
    mutating func release(now: Int64, room: (Endpoint) -> Int) -> (go: [Endpoint: [PushRequest]], late: [PushRequest], wait: Int64?) {
        var go: [Endpoint: [PushRequest]] = [:]
        var late: [PushRequest] = []
        var wait: Int64?
        guard count > 0 else { return (go, late, nil) }
        var rooms: [Endpoint: Int] = [:]
        var keys = order
        if keys.count > 1 {
            let first: Int = turn % keys.count
            keys = Array(order[first...]) + Array(order[..<first])
        }
        turn &+= 1
        for key in keys {
            guard var queue = queues[key] else { continue }
            while queue.count > 0 {
                let (endpoint, request) = queue.items[queue.head]
                if let deadline = request.startDeadline, now >= deadline {
                    late.append(request)
                    queue.head += 1
                    continue
                }
                let free = rooms[endpoint] ?? room(endpoint)
                rooms[endpoint] = free
                guard free > 0 else { break }
                var tokens = true
                var next: Int64 = 0
                if let lane = key.lane, !bucketAvailable(lane, now: now) {
                    tokens = false
                    next = untilToken(lane, now: now)
                }
                if let credential = key.credential, !bucketAvailable(credential, now: now) {
                    tokens = false
                    next = max(next, untilToken(credential, now: now))
                }
                guard tokens else {
                    wait = min(wait ?? next, next)
                    break
                }
                if let lane = key.lane { _ = buckets[lane]?.take(now: now) }
                if let credential = key.credential { _ = buckets[credential]?.take(now: now) }
                go[endpoint, default: []].append(request)
                rooms[endpoint] = free - 1
                queue.head += 1
            }
            store(queue, key)
        }
        count -= late.count + go.values.reduce(0) { $0 + $1.count }
        return (go, late, wait)
    }

    /// Removes and returns the requests `isWithdrawn` picks (a lane paused or cancelled).
    mutating func remove(where isWithdrawn: (PushRequest) -> Bool) -> [PushRequest] {
        guard count > 0 else { return [] }
        var removed: [PushRequest] = []
        for key in order {
            guard var queue = queues[key] else { continue }
            let live = queue.items[queue.head...]
            guard live.contains(where: { isWithdrawn($0.request) }) else { continue }
            var kept: [(endpoint: Endpoint, request: PushRequest)] = []
            for item in live {
                if isWithdrawn(item.request) { removed.append(item.request) } else { kept.append(item) }
            }
            queue.items = kept
            queue.head = 0
            store(queue, key)
        }
        count -= removed.count
        return removed
    }

    /// Removes and returns every request waiting.
    mutating func removeAll() -> [PushRequest] {
        remove { _ in true }
    }

    /// Puts `queue` back under `key`, or forgets the key once its queue is empty.
    private mutating func store(_ queue: Queue, _ key: Key) {
        if queue.count == 0 {
            queues[key] = nil
            order.removeAll { $0 == key }
        } else if queue.head >= 1024, queue.head * 2 >= queue.items.count {
            var compacted = queue
            compacted.items.removeFirst(queue.head)
            compacted.head = 0
            queues[key] = compacted
        } else {
            queues[key] = queue
        }
    }

    /// The cap of `bucket` now, nil if it has none.
    private func rate(of bucket: Bucket) -> Double? {
        switch bucket {
        case .lane(let name): return name == LaneStops.defaultLane ? defaultCap : laneCaps[name] ?? nil
        case .credential: return credentialCaps[bucket]
        }
    }

    /// Whether `bucket` has a token now; made full at its first use.
    private mutating func bucketAvailable(_ bucket: Bucket, now: Int64) -> Bool {
        if buckets[bucket] == nil {
            guard let rate = rate(of: bucket) else { return true }
            buckets[bucket] = TokenBucket(rate: rate, burstSeconds: Self.burstSeconds, now: now)
        }
        return buckets[bucket]!.available(now: now) >= 1
    }

    private func untilToken(_ bucket: Bucket, now: Int64) -> Int64 {
        buckets[bucket]?.untilNextToken(now: now) ?? 0
    }
}
