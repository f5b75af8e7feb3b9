import PushCore
import PushStore
@testable import PushWorker
import Testing

/// The pacer of capped lanes and credentials, on a clock the test drives and with the free
/// streams the test says: what starts, what waits, and what comes back.
@Suite("Send pacer")
struct SendPacerTests {
    static let second: Int64 = 1_000_000_000
    static let endpoint = Endpoint(credential: "default", environment: .production)

    static func request(_ tag: Int64, lane: String, deadline: Int64? = nil) -> PushRequest {
        var r = PushRequest(tag: tag, deviceToken: "a", payload: [], fields: .fcm, startDeadline: deadline)
        r.lane = lane
        return r
    }

    @Test("a lane capped at 50/s starts at most 50 a second plus its burst, whatever the room; other lanes are not paced")
    func laneCap() {
        var pacer = SendPacer()
        pacer.setLanes([LaneSetting(name: "c", paused: false, maxPerSecond: 50)], now: 0)
        var batches: [Endpoint: [PushRequest]] = [Self.endpoint: (0..<400).map { Self.request($0, lane: $0 < 300 ? "c" : "other") }]
        let took = pacer.take(from: &batches)
        #expect(took)
        #expect(batches[Self.endpoint]?.count == 100, "the other lane's requests go at once")
        #expect(pacer.count == 300)
        var started = 0
        var t: Int64 = 0
        while t <= 2 * Self.second {
            started += pacer.release(now: t) { _ in 1000 }.go[Self.endpoint]?.count ?? 0
            t += Self.second / 100
        }
        #expect((100...101).contains(started), "2 s at 50/s, plus a burst of 1: \(started)")
    }

    @Test("nothing starts while the sender has no free stream, and the tokens do not pile up meanwhile")
    func stallKeepsNoTokens() {
        var pacer = SendPacer()
        pacer.setLanes([LaneSetting(name: "default", paused: false, maxPerSecond: 50)], now: 0)
        var batches: [Endpoint: [PushRequest]] = [Self.endpoint: (0..<500).map { Self.request($0, lane: "unlisted") }]
        let took = pacer.take(from: &batches)
        #expect(took, "a lane without a row takes default's cap")
        let stalled = pacer.release(now: 0) { _ in 0 }
        let stillStalled = pacer.release(now: 20 * Self.second) { _ in 0 }
        #expect(stalled.go.isEmpty && stillStalled.go.isEmpty)
        let after = pacer.release(now: 20 * Self.second + 1) { _ in 1000 }
        #expect(after.go[Self.endpoint]?.count == 1, "after a 20 s stall: the burst, not 20 s of tokens")
        #expect(after.wait == Self.second / 50)
    }

    @Test("a capped credential paces every lane of it; a request needs a token of its lane and of its credential")
    func credentialAndLane() {
        var pacer = SendPacer(credentialCaps: [RateBudget(provider: .apns, credential: "default", perSecond: 10)])
        pacer.setLanes([LaneSetting(name: "c", paused: false, maxPerSecond: 100)], now: 0)
        let other = Endpoint(credential: "other", environment: .production)
        var batches: [Endpoint: [PushRequest]] = [Self.endpoint: (0..<50).map { Self.request($0, lane: "c") },
                                                  other: (50..<60).map { Self.request($0, lane: "plain") }]
        let took = pacer.take(from: &batches)
        #expect(took)
        #expect(batches[other]?.count == 10 && batches[Self.endpoint] == nil)
        let first = pacer.release(now: 0) { _ in 1000 }
        #expect(first.go[Self.endpoint]?.count == 1, "the credential's burst is one token at 10/s")
        let second = pacer.release(now: Self.second) { _ in 1000 }
        #expect(second.go[Self.endpoint]?.count == 1)
    }

    @Test("a request whose send-by time passed while it waited comes back late; a paused lane's are removed")
    func lateAndRemoved() {
        var pacer = SendPacer()
        pacer.setLanes([LaneSetting(name: "c", paused: false, maxPerSecond: 1)], now: 0)
        var batches: [Endpoint: [PushRequest]] = [Self.endpoint: [Self.request(1, lane: "c", deadline: Self.second),
                                                                  Self.request(2, lane: "c", deadline: 5 * Self.second),
                                                                  Self.request(3, lane: "c", deadline: 5 * Self.second)]]
        let took = pacer.take(from: &batches)
        #expect(took)
        let first = pacer.release(now: 2 * Self.second) { _ in 10 }
        #expect(first.late.map(\.tag) == [1])
        #expect(first.go[Self.endpoint]?.map(\.tag) == [2])
        let removed = pacer.remove { $0.lane == "c" }
        #expect(removed.map(\.tag) == [3])
        #expect(pacer.count == 0)
    }
}

/// The pacer's queue with tenants (issue 48, item 5): a capped lane's rows of different tenants are
/// released in turn, so a tenant's few rows do not wait behind another's paced backlog.
@Suite("Send pacer: tenants")
struct SendPacerTenantTests {
    static func request(_ tag: Int64, tenant: String?) -> PushRequest {
        var r = SendPacerTests.request(tag, lane: "c")
        r.tenant = tenant
        return r
    }

    @Test("B's 5 rows appended behind A's 200 paced rows are released in turn with A's first ones")
    func tenantsInTurn() {
        var pacer = SendPacer()
        pacer.setLanes([LaneSetting(name: "c", paused: false, maxPerSecond: 1000)], now: 0)
        var a: [Endpoint: [PushRequest]] = [SendPacerTests.endpoint: (0..<200).map { Self.request($0, tenant: "A") }]
        let tookA = pacer.take(from: &a)
        var b: [Endpoint: [PushRequest]] = [SendPacerTests.endpoint: (1000..<1005).map { Self.request($0, tenant: "B") }]
        let tookB = pacer.take(from: &b)
        #expect(tookA && tookB)
        var released: [Int64] = []
        var t: Int64 = 0
        while released.count < 12 {
            released += pacer.release(now: t) { _ in 1000 }.go[SendPacerTests.endpoint]?.map(\.tag) ?? []
            t += SendPacerTests.second / 100
        }
        #expect(Array(released.prefix(10)) == [0, 1000, 1, 1001, 2, 1002, 3, 1003, 4, 1004])
    }
}
