import MockPush
import PushCore
@testable import PushTransport
import Testing

/// The order inside the sender, against the mock: requests of a lower rank submitted while
/// every stream is busy start before the requests of a higher rank that wait.
@Suite(.serialized) struct SenderRankOrderTests {
    func ranked(_ i: Int, _ rank: Int32) -> PushRequest {
        var r = request(i)
        r.rank = rank
        return r
    }

    /// A started sender with 1 connection and 1 stream, its stream held by request 0 (rank 200),
    /// whose answer the mock holds until the test releases it (``MockPushServer/releaseAnswers()``):
    /// no timing involved (an answer delayed 4 s came before a loaded machine read the stats).
    func blockedSender(_ mock: MockHarness, _ collector: ResultCollector) async throws -> PushSender {
        // The blocker holds the one stream until its answer comes: the requests submitted
        // meanwhile all wait in the queue (checked by each test, not assumed).
        mock.server.holdAnswers()
        let sender = try PushSender(configuration: mock.senderConfiguration(connections: 1), apns: mock.apns(streams: 1),
                                    credential: .token(tokenManager()), logger: testLogger, onResults: collector.onResults)
        try sender.start()
        try sender.submit([ranked(0, 200)])
        try await mock.server.waitForRequests(count: 1, timeout: .seconds(30))
        return sender
    }

    /// a sender full of rank-200 requests: rank-10 requests submitted after them reach the mock before every
    /// rank-200 one still waiting, each rank in its own order
    @Test("rank-10 requests submitted behind waiting rank-200 ones reach the mock first, each rank in its own order")
    func lowerRankOvertakesWaitingRequests() async throws {
        let mock = try await MockHarness.start()
        let collector = ResultCollector()
        let sender = try await blockedSender(mock, collector)
        try sender.submit((1...20).map { ranked($0, 200) })
        try sender.submit((21...25).map { ranked($0, 10) })
        let waiting = sender.stats()
        try #require(waiting.pending == 25 && waiting.inFlight == 1, "the blocker is still in flight and all others wait: \(waiting)")

        mock.server.releaseAnswers()
        await collector.wait(for: 26)
        #expect(collector.responses.allSatisfy { $0.outcome == .sent })
        let tags = Dictionary(uniqueKeysWithValues: (0...25).map { (deviceToken($0), $0) })
        let arrived = mock.server.requests().compactMap { $0.deviceToken.flatMap { tags[$0] } }
        #expect(arrived == [0] + Array(21...25) + Array(1...20))
        #expect(await sender.shutdown(deadline: .seconds(5)).isEmpty)
        try await mock.stop()
    }

    @Test("shutdown hands back the requests that never got a stream, lowest rank first")
    func unsentComeBackByRank() async throws {
        let mock = try await MockHarness.start()
        let collector = ResultCollector()
        let sender = try await blockedSender(mock, collector)
        try sender.submit([ranked(1, 200), ranked(2, 50), ranked(3, 200), ranked(4, 50)])
        let waiting = sender.stats()
        try #require(waiting.pending == 4 && waiting.inFlight == 1, "the blocker is still in flight and all others wait: \(waiting)")
        // The blocker's answer stays held: at the deadline it is reported cancelled, outcome unknown.
        let unsent = await sender.shutdown(deadline: .seconds(1))
        #expect(unsent.map(\.tag) == [2, 4, 1, 3])
        #expect(collector.responses.map(\.tag) == [0], "the blocker in flight was reported before the threads ended")
        #expect(collector.responses.first?.transportFailure?.kind == .cancelled)
        mock.server.releaseAnswers()
        try await mock.stop()
    }
}
