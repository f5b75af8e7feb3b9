import Logging
import MockPush
import PushCore
import PushTestSupport
@testable import PushTransport
import Testing

/// The channel-management client against the mock's management port, over real TLS + HTTP/2.
@Suite(.serialized) struct ChannelClientTests {
    func client(_ mock: MockHarness, credential: APNsCredential? = nil, caFile: String? = Fixtures.caFile,
                baseURL: String? = nil) throws -> APNsChannelClient {
        let configuration = APNsChannelConfiguration(baseURL: baseURL ?? mock.server.managementURL, extraCAFile: caFile,
                                                     requestTimeout: 10, connectTimeout: 5)
        return try APNsChannelClient(configuration: configuration, credential: credential ?? .token(tokenManager()),
                                     bundleID: Fixtures.topic, logger: testLogger)
    }

    @Test func createReadListDelete() async throws {
        let mock = try await MockHarness.start()
        let client = try client(mock)
        let requestID = lowercaseUUID()
        let created = await client.send(.create(.noMessageStored), requestID: requestID)
        #expect(created.outcome == .done)
        let id = try #require(created.createdChannelID)
        #expect(created.answer?.status == 201)
        #expect(created.answer?.requestID == requestID)
        #expect(mock.server.channels().map(\.id) == [id])
        #expect(mock.server.channels().first?.storagePolicy == 0)

        let read = await client.send(.read(channelID: id))
        #expect(read.outcome == .done)
        #expect(read.answer?.storagePolicy == .noMessageStored)
        #expect(read.answer?.pushType == "LiveActivity")

        let other = try #require(mock.server.createChannel(bundleID: Fixtures.topic))
        let list = await client.send(.listAll)
        #expect(list.outcome == .done)
        #expect(list.answer?.channels == [id, other.id])

        let deleted = await client.send(.delete(channelID: id))
        #expect(deleted.outcome == .done)
        #expect(deleted.answer?.status == 204)
        #expect(mock.server.channels().map(\.id) == [other.id])
        let again = await client.send(.delete(channelID: id))
        #expect(again.outcome == .gone, "a channel already deleted is what a delete wants")

        let recorded = mock.server.channelRequests()
        #expect(recorded.map(\.method) == ["POST", "GET", "GET", "DELETE", "DELETE"])
        #expect(recorded.map(\.path) == ["/1/apps/\(Fixtures.topic)/channels", "/1/apps/\(Fixtures.topic)/channels",
                                         "/1/apps/\(Fixtures.topic)/all-channels", "/1/apps/\(Fixtures.topic)/channels",
                                         "/1/apps/\(Fixtures.topic)/channels"])
        #expect(recorded.allSatisfy { $0.auth == "token" && $0.jwtKeyID == MockTestFixtures.keyID })
        #expect(recorded[0].bodyString == #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#)
        #expect(Set(recorded.map(\.connectionID)).count == 1, "successive requests reuse the connection")
        #expect(mock.server.stats().requests == 0, "nothing went to the push port")
        try await mock.stop()
    }

    @Test func answersAreClassified() async throws {
        let mock = try await MockHarness.start()
        let client = try client(mock)
        mock.server.failNextChannelRequest(with: .status(500, reason: "InternalServerError"))
        let failed = await client.send(.create(.mostRecentMessageStored))
        #expect(failed.outcome == .retry(.serverError(.internalServerError)))
        #expect(failed.createdChannelID == nil)
        #expect(mock.server.channels().isEmpty)

        mock.server.failNextChannelRequest(with: .status(400, reason: "CannotCreateChannelConfig"))
        #expect(await client.send(.create(.mostRecentMessageStored)).outcome == .fail(.cannotCreateChannelConfig))

        mock.server.failNextChannelRequest(with: .status(403, reason: "InvalidProviderToken"))
        #expect(await client.send(.listAll).outcome == .hold(.credential, reason: "InvalidProviderToken"))

        mock.server.failNextChannelRequest(with: .status(429, reason: "TooManyRequests"))
        #expect(await client.send(.listAll).outcome == .retry(.tooManyRequests))

        #expect(await client.send(.read(channelID: "bm9uZQ==")).outcome == .gone)
        mock.server.failNextChannelRequest(with: .reset)
        let reset = await client.send(.listAll)
        #expect(reset.answer == nil)
        #expect(reset.outcome == .retry(.outcomeUnknown(try #require(reset.transportFailure?.kind))))
        #expect(await client.send(.create(.mostRecentMessageStored)).outcome == .done, "the client recovers after a reset")
        try await mock.stop()
    }

    @Test func expiredProviderTokenRenewsTheSharedToken() async throws {
        let mock = try await MockHarness.start()
        let manager = try tokenManager()
        let client = try client(mock, credential: .token(manager))
        _ = try manager.newest()
        mock.server.failNextChannelRequest(with: .status(403, reason: "ExpiredProviderToken"))
        #expect(await client.send(.listAll).outcome == .retryNow(.renewProviderToken))
        #expect(manager.mintedCount == 2, "renewed once, for the caller's immediate resend")
        #expect(await client.send(.listAll).outcome == .done)
        try await mock.stop()
    }

    @Test func certificateAuthentication() async throws {
        let mock = try await MockHarness.start()
        let certificate = APNsClientCertificate(file: Fixtures.p12, format: .pkcs12, password: Fixtures.p12Password)
        let client = try client(mock, credential: .certificate(certificate))
        let created = await client.send(.create(.mostRecentMessageStored))
        #expect(created.outcome == .done)
        #expect(mock.server.channelRequests().first?.auth == "certificate")
        try await mock.stop()
    }

    @Test func tlsIsAlwaysVerified() async throws {
        let mock = try await MockHarness.start()
        // Without the mock's CA, the mock's certificate is not trusted: no request is made.
        let untrusted = try client(mock, caFile: nil)
        let response = await untrusted.send(.listAll)
        #expect(response.answer == nil)
        #expect(response.transportFailure?.kind == .tls)
        #expect(mock.server.stats().channelRequests == 0)
        #expect(throws: PushTransportError.self) {
            try client(mock, baseURL: "http://127.0.0.1:\(mock.server.managementPort ?? 0)")
        }
        try await mock.stop()
    }

    @Test func pushPortIsNotTheManagementPort() async throws {
        let mock = try await MockHarness.start()
        // Sent to the push port, a management request is refused there (only POST is served).
        let misdirected = try client(mock, baseURL: mock.url)
        let response = await misdirected.send(.listAll)
        #expect(response.answer?.status == 405)
        #expect(response.outcome == .fail(.methodNotAllowed))
        #expect(mock.server.stats().channelRequests == 0)
        try await mock.stop()
    }
}
