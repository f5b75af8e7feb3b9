import PushCore
@testable import PushTransport
import Testing

/// The sender's waiting queue with tenants (issue 48, item 5): once a request with a tenant waits in
/// a rank, the rank's lanes and tenants take turns, so that a tenant's few rows claimed after
/// another's backlog start next, not behind it. Without tenants it stays first in, first out.
@Suite struct SenderQueueTenantTests {
    func request(_ tag: Int, tenant: String?, lane: String = "default", rank: Int32 = PushRequest.defaultRank) -> PushRequest {
        var r = PushRequest(tag: Int64(tag), deviceToken: "t", payload: [], fields: .fcm)
        r.tenant = tenant
        r.lane = lane
        r.rank = rank
        return r
    }

    @Test("B's 10 requests appended behind A's 300 waiting: taken in turn with A's first ones, not after them")
    func tenantBehindBacklog() {
        var q = SenderQueue()
        q.append(contentsOf: (1...300).map { request($0, tenant: "A") })
        q.append(contentsOf: (1001...1010).map { request($0, tenant: "B") })
        let first = q.take(20).map(\.tag)
        #expect(first == Array(zip(1...10, 1001...1010).flatMap { [Int64($0), Int64($1)] }))
        #expect(q.take(5).map(\.tag) == [11, 12, 13, 14, 15], "then A's, in its order")
        #expect(q.count == 285)
    }

    @Test("no tenant is one tenant of its own; A's rows appended after it take turns with it; each keeps its order")
    func nullTenantAndOrder() {
        var q = SenderQueue()
        q.append(contentsOf: (1...4).map { request($0, tenant: nil) })
        q.append(contentsOf: (11...12).map { request($0, tenant: "A") } + [request(5, tenant: nil)])
        #expect(q.take(10).map(\.tag) == [1, 11, 2, 12, 3, 4, 5])
    }

    @Test("turns stay within a rank: a lower rank still goes first; untenanted ranks stay first in, first out")
    func ranksAndPlainFIFO() {
        var q = SenderQueue()
        q.append(contentsOf: (1...3).map { request($0, tenant: nil, lane: "x", rank: 200) } + (4...5).map { request($0, tenant: nil, lane: "y", rank: 200) })
        q.append(contentsOf: (6...8).map { request($0, tenant: "A", rank: 100) } + [request(9, tenant: "B", rank: 100)])
        #expect(q.take(9).map(\.tag) == [6, 9, 7, 8, 1, 2, 3, 4, 5])
    }
}
