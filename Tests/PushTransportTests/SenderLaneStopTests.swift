import MockPush
import PushCore
@testable import PushTransport
import Testing

/// A sender told that lanes are paused: what waits in its queue comes back at once, and what
/// leaves the queue afterwards is handed back unsent; other lanes go on.
@Suite(.serialized) struct SenderLaneStopTests {
    func inLane(_ i: Int, _ lane: String, rank: Int32 = PushRequest.defaultRank) -> PushRequest {
        var r = request(i)
        r.lane = lane
        r.rank = rank
        return r
    }

    @Test("the queue gives up the requests picked, each rank keeping its order and the others theirs")
    func queueRemoves() {
        var q = SenderQueue()
        q.append(contentsOf: (1...6).map { inLane($0, $0 % 2 == 0 ? "c" : "a", rank: 200) })
        q.append(contentsOf: [inLane(7, "c", rank: 10), inLane(8, "a", rank: 10)])
        _ = q.take(1)  // request 7 left: the head of rank 10 moved
        let removed = q.remove { $0.lane == "c" }
        #expect(removed.map(\.tag) == [2, 4, 6])
        #expect(q.count == 4)
        #expect(q.take(10).map(\.tag) == [8, 1, 3, 5])
        #expect(q.remove { _ in true }.isEmpty && q.count == 0)
    }

    /// lane c stopped while its requests wait behind a held stream: they come back at once, a later one is
    /// handed back as it leaves the queue, lane a goes on
    @Test("lane c stopped while its requests wait behind a held stream: they come back at once, later ones too, lane a goes on")
    func stoppedLaneNeverStarts() async throws {
        let mock = try await MockHarness.start()
        let collector = ResultCollector()
        // One stream, held by request 0 until the test releases the mock's answers.
        mock.server.holdAnswers()
        let sender = try PushSender(configuration: mock.senderConfiguration(connections: 1), apns: mock.apns(streams: 1), credential: .token(tokenManager()),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        try sender.submit([inLane(0, "a")])
        try await mock.server.waitForRequests(count: 1, timeout: .seconds(30))
        try sender.submit((1...10).map { inLane($0, $0 % 2 == 0 ? "c" : "a") })
        let waiting = sender.stats()
        try #require(waiting.pending == 10 && waiting.inFlight == 1, "the held request is in flight and all others wait: \(waiting)")

        let withdrawn = sender.stopLanes(LaneStops(lanes: [(name: "c", paused: true)]))
        #expect(withdrawn.map(\.tag) == [2, 4, 6, 8, 10])
        try sender.submit([inLane(11, "c")])
        mock.server.releaseAnswers()
        await collector.wait(for: 7)
        let handedBack = collector.responses.filter(\.laneStopped)
        #expect(handedBack.map(\.tag) == [11] && handedBack.allSatisfy { $0.status == nil })
        let tags = Dictionary(uniqueKeysWithValues: (0...11).map { (deviceToken($0), $0) })
        let arrived = mock.server.requests().compactMap { $0.deviceToken.flatMap { tags[$0] } }
        #expect(arrived == [0, 1, 3, 5, 7, 9], "only lane a reached the provider")

        // Resumed: the lane starts again.
        _ = sender.stopLanes(LaneStops())
        try sender.submit([inLane(12, "c")])
        await collector.wait(for: 8)
        #expect(collector.responses.last?.tag == 12 && collector.responses.last?.outcome == .sent)
        #expect(await sender.shutdown(deadline: .seconds(5)).isEmpty)
        try await mock.stop()
    }
}
