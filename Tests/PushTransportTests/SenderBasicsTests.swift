import MockPush
import PushCore
import PushTestSupport
@testable import PushTransport
import Testing

@Suite(.serialized) struct SenderBasicsTests {
    @Test func sendsExactHeadersAndBodyAndMatchesAnswers() async throws {
        let mock = try await MockHarness.start { $0.environment = .development }
        let collector = ResultCollector()
        let sender = try PushSender(configuration: mock.senderConfiguration(), apns: mock.apns(), credential: .token(tokenManager()),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        let batch = [
            request(1),
            request(2, pushType: .background, priority: 5, expiration: 1_900_000_000, collapseID: "news"),
            request(3, pushType: .voip, expiration: 0, payload: #"{"aps":{},"k":"ü ✓"}"#),
        ]
        try sender.submit(batch)
        await collector.wait(for: 3)
        let byTag = Dictionary(uniqueKeysWithValues: collector.responses.map { ($0.tag, $0) })
        for sent in batch {
            let response = try #require(byTag[sent.tag])
            #expect(response.status == 200)
            #expect(response.outcome == .sent)
            #expect(response.apns?.apnsID == sent.apns.apnsID)
            #expect(response.apns?.uniqueID?.count == 36)
            #expect(response.transportFailure == nil)
        }
        let recorded = Dictionary(uniqueKeysWithValues: mock.server.requests().map { ($0.deviceToken!, $0) })
        for sent in batch {
            let r = try #require(recorded[sent.deviceToken])
            #expect(r.method == "POST")
            #expect(r.path == "/3/device/" + sent.deviceToken)
            #expect(r.body == sent.payload)
            #expect(r.header("apns-push-type") == sent.apns.pushType.rawValue)
            #expect(r.header("apns-topic") == sent.apns.topic)
            #expect(r.header("apns-priority") == String(sent.apns.priority))
            #expect(r.header("apns-id") == sent.apns.apnsID)
            #expect(r.header("apns-expiration") == sent.expiration.map(String.init))
            #expect(r.header("apns-collapse-id") == sent.apns.collapseID)
            #expect(r.auth == "token")
            #expect(r.jwtKeyID == MockTestFixtures.keyID && r.jwtIssuer == MockTestFixtures.teamID)
            // The reused header nodes that are empty or "name:" are not sent.
            #expect(r.header("accept") == nil && r.header("content-type") == nil && r.header("expect") == nil)
            #expect(!r.headers.contains { $0.first == "" })
        }
        #expect(await sender.shutdown(deadline: .seconds(5)).isEmpty)
        try await mock.stop()
    }

    @Test func errorAnswersAreParsedAndClassified() async throws {
        let mock = try await MockHarness.start()
        mock.server.setRule(forToken: deviceToken(1), .always(.unregistered(at: 1_700_000_000_123)))
        mock.server.setRule(forToken: deviceToken(2), .always(.error(.badDeviceToken)))
        mock.server.setRule(forToken: deviceToken(3), .always(.error(.tooManyRequests)))
        mock.server.setRule(forToken: deviceToken(4), .always(.status(400, reason: "BrandNewReason")))
        mock.server.setRule(forToken: deviceToken(5), .always(.error(.badTopic)))
        let collector = ResultCollector()
        let sender = try PushSender(configuration: mock.senderConfiguration(), apns: mock.apns(), credential: .token(tokenManager()),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        try sender.submit((1...6).map { request($0) })
        await collector.wait(for: 6)
        let byTag = Dictionary(uniqueKeysWithValues: collector.responses.map { ($0.tag, $0) })
        #expect(byTag[1]?.status == 410)
        #expect(byTag[1]?.apns?.timestamp == 1_700_000_000_123)
        #expect(byTag[1]?.outcome == .invalidateToken(reason: .unregistered, at: 1_700_000_000_123))
        #expect(byTag[2]?.outcome == .invalidateToken(reason: .badDeviceToken, at: nil))
        #expect(byTag[3]?.outcome == .retry(.tooManyRequests))
        #expect(byTag[4]?.outcome == .retry(.unknownReason("BrandNewReason")))
        #expect(byTag[5]?.outcome == .fail(.badTopic))
        #expect(byTag[6]?.outcome == .sent)
        #expect(sender.stats().reopens == 0)  // none of these condemn the connection
        _ = await sender.shutdown(deadline: .seconds(5))
        try await mock.stop()
    }

    @Test func serverErrorReopensTheConnection() async throws {
        let mock = try await MockHarness.start()
        mock.server.setRule(forToken: deviceToken(1), MockTokenRule(sequence: [.error(.internalServerError)]))
        let collector = ResultCollector()
        let sender = try PushSender(configuration: mock.senderConfiguration(), apns: mock.apns(), credential: .token(tokenManager()),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        try sender.submit([request(1)])
        await collector.wait(for: 1)
        #expect(collector.responses[0].outcome == .retry(.serverError(.internalServerError)))
        try sender.submit([request(1)])
        await collector.wait(for: 2)
        #expect(collector.responses[1].outcome == .sent)
        #expect(sender.stats().reopens == 1)
        #expect(mock.server.stats().connectionsOpened == 2)
        _ = await sender.shutdown(deadline: .seconds(5))
        try await mock.stop()
    }

    @Test func untrustedServerIsATLSFailure() async throws {
        let mock = try await MockHarness.start()
        var configuration = mock.senderConfiguration()
        configuration.extraCAFile = nil  // the mock's CA is not among the system roots
        let collector = ResultCollector()
        let sender = try PushSender(configuration: configuration, apns: mock.apns(), credential: .token(tokenManager()),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        try sender.submit([request(1)])
        await collector.wait(for: 1)
        let failure = try #require(collector.responses.first?.transportFailure)
        #expect(failure.kind == .tls)
        #expect(collector.responses[0].outcome == .retry(.outcomeUnknown(.tls)))
        #expect(mock.server.stats().requests == 0)
        _ = await sender.shutdown(deadline: .seconds(5))
        try await mock.stop()
    }

    @Test func configurationErrorsAreClear() throws {
        #expect(throws: PushTransportError.self) {
            try PushSender(configuration: PushSenderConfiguration(), apns: APNsConfiguration(baseURL: "http://127.0.0.1:1"),
                           credential: .token(tokenManager()), logger: testLogger, onResults: { _ in })
        }
        let missingCA = try #require(throws: PushTransportError.self) {
            try PushSender(configuration: PushSenderConfiguration(extraCAFile: "/nonexistent/ca.pem"), apns: APNsConfiguration(),
                           credential: .token(tokenManager()), logger: testLogger, onResults: { _ in })
        }
        #expect(missingCA.description.contains("/nonexistent/ca.pem"))
        #expect(APNsConfiguration(baseURL: "https://127.0.0.1:9/").effectiveBaseURL == "https://127.0.0.1:9")
        #expect(APNsConfiguration(environment: .production).effectiveBaseURL == "https://api.push.apple.com")
    }

    @Test func errorBodyParser() {
        func parse(_ s: String) -> (String?, Int64?) {
            Array(s.utf8).withUnsafeBytes { let r = APNsErrorBodyParser.parse($0); return (r.reason, r.timestamp) }
        }
        #expect(parse(#"{"reason":"Unregistered","timestamp":1700000000123}"#) == ("Unregistered", 1_700_000_000_123))
        #expect(parse(#"{ "timestamp" : 12 , "reason" : "ExpiredToken" }"#) == ("ExpiredToken", 12))
        #expect(parse(#"{"reason":"BadDeviceToken"}"#) == ("BadDeviceToken", nil))
        #expect(parse(#"{"other":"reason","reason":"X\"Y"}"#) == ("X\"Y", nil))
        #expect(parse("") == (nil, nil))
        #expect(parse(#"{"reason":"unterminated"#) == (nil, nil))
    }
}

@Suite(.serialized) struct SenderConnectionsTests {
    @Test func spreadsWorkOverSeveralConnectionsEachWithItsOwnToken() async throws {
        let mock = try await MockHarness.start { $0.recordRequests = false }
        let collector = ResultCollector()
        let sender = try PushSender(configuration: mock.senderConfiguration(connections: 3),
                                    apns: mock.apns(streams: 100), credential: .token(tokenManager()),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        #expect(sender.freeSlots == 300)
        try sender.submit((0..<3000).map { request($0) })
        await collector.wait(for: 3000)
        #expect(collector.responses.allSatisfy { $0.status == 200 })
        let stats = mock.server.stats()
        #expect(stats.connectionsOpened == 3)
        #expect(stats.requestsByConnection.count == 3)
        #expect(stats.requestsByConnection.values.allSatisfy { $0 > 0 })
        #expect(sender.stats().peakInFlight <= 300)
        #expect(sender.freeSlots == 300)  // exact as soon as the answers are delivered
        #expect(sender.stats().answered == 3000)
        _ = await sender.shutdown(deadline: .seconds(5))
        try await mock.stop()
    }

    @Test func extraCAIsAddedNotSubstituted() throws {
        let withPath = LibcurlInfo(version: "x", ssl: "x", nghttp2: "x", defaultCAInfo: "/etc/ssl/certs/ca-certificates.crt", defaultCAPath: "/etc/ssl/certs")
        let extra = try CurlTransferSettings.caBundle(adding: Fixtures.caFile, libcurl: withPath)
        // With a CA directory, the system roots keep coming from it: the blob is the extra CA alone.
        #expect(String(decoding: extra, as: UTF8.self).components(separatedBy: "BEGIN CERTIFICATE").count == 2)
        let onlyFile = LibcurlInfo(version: "x", ssl: "x", nghttp2: "x", defaultCAInfo: "/etc/ssl/certs/ca-certificates.crt", defaultCAPath: nil)
        let bundle = try CurlTransferSettings.caBundle(adding: Fixtures.caFile, libcurl: onlyFile)
        // Without one, the blob is the system bundle plus the extra CA.
        #expect(String(decoding: bundle, as: UTF8.self).components(separatedBy: "BEGIN CERTIFICATE").count > 10)
        #expect(bundle.suffix(extra.count) == extra[...])
        #expect(throws: PushTransportError.self) { try CurlTransferSettings.caBundle(adding: Fixtures.tokenKey, libcurl: withPath) }
    }

    @Test func libcurlCapabilitiesAreChecked() throws {
        let info = try LibcurlInfo.checked()
        #expect(info.version.hasPrefix("7.") || info.version.hasPrefix("8."))
        #expect(info.nghttp2 != "none")
    }
}
