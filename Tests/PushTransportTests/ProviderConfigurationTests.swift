import MockPush
import PushCore
@testable import PushTransport
import Testing

/// Each provider's own settings (``APNsConfiguration``, ``FCMConfiguration``) beside the neutral
/// ``PushSenderConfiguration`` (issue 46 item 4): a provider added later brings its own type and
/// changes nothing the others share.
@Suite(.serialized) struct ProviderConfigurationTests {
    /// The neutral configuration's stored properties, every one of them: a provider's setting
    /// (a host, an environment, a window) added to it makes this fail.
    @Test func senderConfigurationHoldsNoProviderSetting() {
        let labels = Set(Mirror(reflecting: PushSenderConfiguration()).children.compactMap(\.label))
        #expect(labels == ["extraCAFile", "connections", "maxConcurrentStreams", "requestTimeout", "connectTimeout",
                           "connectionStagger", "idleReopenAfter", "databaseClock", "curlVerbose"])
    }

    /// One neutral configuration (2 connections) for a sender to each provider: each sender's
    /// window is its provider's streams per connection. `freeSlots` before start is the whole
    /// window; after 200 requests on one connection the peak in flight is the window (a queue of
    /// 200 fills it in one take, and the connection never starts more than its window).
    @Test func eachSendersWindowIsItsProvidersStreamsPerConnection() async throws {
        let mock = try await MockHarness.start()
        let shared = mock.senderConfiguration(connections: 2)
        let apns = try PushSender(configuration: shared, apns: mock.apns(streams: 3), credential: .token(tokenManager()),
                                  logger: testLogger, onResults: { _ in })
        let fcm = try PushSender(configuration: shared, fcm: mock.fcm(streams: 5), tokens: FCMAccessTokenTests.provider(mock),
                                 logger: testLogger, onResults: { _ in })
        #expect(apns.freeSlots == 6 && fcm.freeSlots == 10)

        let one = mock.senderConfiguration(connections: 1)
        let (apnsAnswers, fcmAnswers) = (ResultCollector(), ResultCollector())
        let apnsSender = try PushSender(configuration: one, apns: mock.apns(streams: 3), credential: .token(tokenManager()),
                                        logger: testLogger, onResults: apnsAnswers.onResults)
        let fcmSender = try PushSender(configuration: one, fcm: mock.fcm(streams: 5), tokens: FCMAccessTokenTests.provider(mock),
                                       logger: testLogger, onResults: fcmAnswers.onResults)
        try apnsSender.start()
        try fcmSender.start()
        try apnsSender.submit((0..<200).map { request($0) })
        try fcmSender.submit((0..<200).map { FCMSenderTests.fcmRequest($0) })
        await apnsAnswers.wait(for: 200)
        await fcmAnswers.wait(for: 200)
        #expect(apnsAnswers.responses.allSatisfy { $0.status == 200 } && fcmAnswers.responses.allSatisfy { $0.status == 200 })
        #expect(apnsSender.stats().peakInFlight == 3)
        #expect(fcmSender.stats().peakInFlight == 5)
        for sender in [apns, fcm, apnsSender, fcmSender] { _ = await sender.shutdown(deadline: .seconds(5)) }
        try await mock.stop()
    }

    /// A bad value of a provider's own setting is refused when the sender is made, naming the setting.
    @Test func aProvidersBadSettingIsRefusedNamingIt() async throws {
        let mock = try await MockHarness.start()
        let shared = mock.senderConfiguration()
        let apnsWindow = try #require(throws: PushTransportError.self) {
            try PushSender(configuration: shared, apns: mock.apns(streams: 0), credential: .token(tokenManager()),
                           logger: testLogger, onResults: { _ in })
        }
        #expect(apnsWindow.description.contains("PUSHQ_APNS_STREAMS (streams per connection) must be at least 1, not 0"))
        let fcmWindow = try #require(throws: PushTransportError.self) {
            try PushSender(configuration: shared, fcm: mock.fcm(streams: 0), tokens: FCMAccessTokenTests.provider(mock),
                           logger: testLogger, onResults: { _ in })
        }
        #expect(fcmWindow.description.contains("PUSHQ_FCM_STREAMS (streams per connection) must be at least 1, not 0"))
        let apnsURL = try #require(throws: PushTransportError.self) {
            try PushSender(configuration: shared, apns: APNsConfiguration(baseURL: "http://127.0.0.1:1"), credential: .token(tokenManager()),
                           logger: testLogger, onResults: { _ in })
        }
        #expect(apnsURL.description.contains("PUSHQ_APNS_URL must be an https:// URL"))
        try await mock.stop()
    }
}
