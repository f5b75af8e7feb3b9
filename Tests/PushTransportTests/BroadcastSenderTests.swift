import MockPush
import PushCore
import PushTestSupport
@testable import PushTransport
import Testing

/// Broadcasts through the ordinary APNs sender: `/4/broadcasts/apps/<bundle>` with
/// `apns-channel-id`, on the same connection as pushes to devices.
@Suite(.serialized) struct BroadcastSenderTests {
    static let update = #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":3}}}"#

    func broadcast(_ tag: Int64, channel: String, expiration: Int64? = nil) throws -> PushRequest {
        try PushRequest(row: ClaimedNotification(id: tag, deviceToken: "", payload: Array(Self.update.utf8), pushType: .liveactivity,
                                                 priority: 5, expiresAt: expiration, collapseID: "ignored", apnsID: lowercaseUUID(),
                                                 lease: 1, channelID: channel),
                        defaultTopic: Fixtures.topic, sendBy: nil)
    }

    @Test func broadcastsAndDevicePushesShareAConnection() async throws {
        let mock = try await MockHarness.start { $0.environment = .development }
        let stored = try #require(mock.server.createChannel(bundleID: Fixtures.topic, storagePolicy: 1))
        let noStorage = try #require(mock.server.createChannel(bundleID: Fixtures.topic, storagePolicy: 0))
        let collector = ResultCollector()
        let sender = try PushSender(configuration: mock.senderConfiguration(), apns: mock.apns(), credential: .token(tokenManager()),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        let batch = [try broadcast(1, channel: stored.id, expiration: 1_900_000_000), request(2),
                     try broadcast(3, channel: noStorage.id), request(4)]
        try sender.submit(batch)
        await collector.wait(for: 4)
        let byTag = Dictionary(uniqueKeysWithValues: collector.responses.map { ($0.tag, $0) })
        for sent in batch {
            let response = try #require(byTag[sent.tag])
            #expect(response.status == 200, "\(String(describing: response.reasonText))")
            #expect(response.outcome == .sent)
            #expect(response.apns?.uniqueID?.count == 36)
            if sent.apns.isBroadcast {
                #expect(response.apns?.requestID == sent.apns.apnsID)
                #expect(response.apns?.apnsID == nil)
            } else {
                #expect(response.apns?.apnsID == sent.apns.apnsID)
                #expect(response.apns?.requestID == nil)
            }
        }
        let recorded = mock.server.requests()
        #expect(Set(recorded.map(\.connectionID)).count == 1)
        let broadcasts = recorded.filter { $0.path.hasPrefix("/4/") }
        #expect(broadcasts.count == 2)
        for r in broadcasts {
            #expect(r.path == "/4/broadcasts/apps/" + Fixtures.topic)
            #expect(r.header("apns-topic") == nil && r.header("apns-id") == nil && r.header("apns-collapse-id") == nil)
            #expect(r.header("apns-push-type") == "liveactivity")
            #expect(r.header("apns-priority") == "5")
            #expect(r.body == Array(Self.update.utf8))
        }
        let byChannel = Dictionary(uniqueKeysWithValues: broadcasts.map { ($0.header("apns-channel-id")!, $0) })
        #expect(byChannel[stored.id]?.header("apns-expiration") == "1900000000")
        #expect(byChannel[noStorage.id]?.header("apns-expiration") == "0", "no expiration: deliver once, store nothing")
        #expect(byChannel[stored.id]?.header("apns-request-id") == batch[0].apns.apnsID)
        let devices = recorded.filter { $0.path.hasPrefix("/3/device/") }
        #expect(devices.count == 2 && devices.allSatisfy { $0.header("apns-channel-id") == nil && $0.header("apns-topic") == Fixtures.topic })
        #expect(await sender.shutdown(deadline: .seconds(5)).isEmpty)
        try await mock.stop()
    }

    @Test func broadcastErrorsEndTheRowAndNeverInvalidateAToken() async throws {
        let mock = try await MockHarness.start()
        let channel = try #require(mock.server.createChannel(bundleID: Fixtures.topic))
        let gone = try #require(mock.server.createChannel(bundleID: Fixtures.topic))
        mock.server.setRule(forToken: channel.id, .always(.status(410, reason: nil)))
        #expect(mock.server.deleteChannel(id: gone.id))
        let collector = ResultCollector()
        let sender = try PushSender(configuration: mock.senderConfiguration(), apns: mock.apns(), credential: .token(tokenManager()),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        try sender.submit([try broadcast(1, channel: channel.id), try broadcast(2, channel: gone.id)])
        await collector.wait(for: 2)
        let byTag = Dictionary(uniqueKeysWithValues: collector.responses.map { ($0.tag, $0) })
        #expect(byTag[1]?.status == 410)
        #expect(byTag[1]?.outcome == .fail(.unregistered), "a broadcast has no token to invalidate")
        #expect(byTag[2]?.status == 400)
        #expect(byTag[2]?.outcome == .fail(.channelNotRegistered))
        #expect(byTag[2]?.reasonText == "ChannelNotRegistered")
        #expect(byTag[2]?.apns?.requestID?.count == 36)
        #expect(await sender.shutdown(deadline: .seconds(5)).isEmpty)
        try await mock.stop()
    }
}
