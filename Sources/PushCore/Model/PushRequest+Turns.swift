extension PushRequest {
    /// `items` (each holding the ``PushRequest`` `request` gives) with each (lane, tenant)'s in turn:
    /// the first of each, then the second of each, …; within a turn in the order they came, and each
    /// one's in its own order (a request without a ``tenant`` is of its lane's NULL tenant).
    /// O(n log n): for a batch appended to a queue where tenants wait (a sender's, the pacer's),
    /// never per request taken.
    public static func inTurn<Item>(_ items: [Item], request: (Item) -> PushRequest) -> [Item] {
        var seen: [TurnKey: Int] = [:]
        var turn: [Int] = []
        turn.reserveCapacity(items.count)
        for item in items {
            let r = request(item)
            let key = TurnKey(lane: r.lane, tenant: r.tenant)
            let n = seen[key, default: 0]
            seen[key] = n + 1
            turn.append(n)
        }
        return items.indices.sorted { turn[$0] != turn[$1] ? turn[$0] < turn[$1] : $0 < $1 }.map { items[$0] }
    }

    /// Whose turn a request is of: its lane and tenant.
    private struct TurnKey: Hashable {
        var lane: String
        var tenant: String?
    }
}
