import MockPush
import PushCore
@testable import PushTransport
import Testing

@Suite(.serialized) struct SenderFaultTests {
    @Test func twentyThousandWithAThousandInFlightOnOneConnection() async throws {
        let mock = try await MockHarness.start { $0.recordRequests = false }
        let collector = ResultCollector()
        // A request timeout no busy machine reaches: every request must be answered by the mock,
        // not ended by a queue on a loaded machine (with 10 s, 989 of 20 000 ended so while a
        // build and other suites shared the two cores).
        let configuration = mock.senderConfiguration(connections: 1).with { $0.requestTimeout = 110 }
        let sender = try PushSender(configuration: configuration,
                                    apns: mock.apns(streams: 1000), credential: .token(tokenManager()),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        let requests = (0..<20_000).map { request($0) }
        for chunk in stride(from: 0, to: requests.count, by: 2_500) {
            try sender.submit(Array(requests[chunk..<chunk + 2_500]))
        }
        await collector.wait(for: 20_000, timeout: .seconds(120))
        let responses = collector.responses
        // Every request answered exactly once, with its own apns-id.
        #expect(responses.count == 20_000)
        #expect(Set(responses.map(\.tag)).count == 20_000)
        var mismatched = 0
        var seen: Set<String> = []
        for response in responses {
            let sent = requests[Int(response.tag)]
            if response.status != 200 || response.apns?.apnsID != sent.apns.apnsID || response.request.apns.apnsID != sent.apns.apnsID {
                mismatched += 1
                seen.insert("\(response.status.map(String.init) ?? "no status") \(response.transportFailure.map { "\($0.kind)" } ?? "")")
            }
        }
        #expect(mismatched == 0, "\(seen)")
        let stats = sender.stats()
        #expect(stats.peakInFlight == 1000)
        #expect(stats.connectionsOpened == 1)
        #expect(collector.batches < 20_000 / 10)  // answers come back in batches, not one by one
        let mockStats = mock.server.stats()
        #expect(mockStats.connectionsOpened == 1)
        #expect(mockStats.count(status: 200) == 20_000)
        _ = await sender.shutdown(deadline: .seconds(5))
        try await mock.stop()
    }

    @Test func goawayMidFlightThenANewConnection() async throws {
        let mock = try await MockHarness.start {
            $0.faults = MockConnectionFaults(goawayAfterStreams: 100, goawayReason: "Shutdown")
            $0.recordRequests = false
        }
        let collector = ResultCollector()
        let sender = try PushSender(configuration: mock.senderConfiguration(connections: 1),
                                    apns: mock.apns(streams: 500), credential: .token(tokenManager()),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        try sender.submit((0..<500).map { request($0) })
        await collector.wait(for: 500)
        let first = collector.responses
        let ok = first.filter { $0.status == 200 }
        let unknown = first.filter { $0.transportFailure != nil }
        #expect(ok.count + unknown.count == 500)  // every request accounted for, nothing silently lost
        for response in unknown {
            #expect(response.outcome == .retry(.outcomeUnknown(response.transportFailure!.kind)))
        }
        #expect(mock.server.stats().goawaysSent >= 1)
        #expect(mock.server.stats().connectionsOpened >= 2)
        // The next requests succeed on a new connection.
        let before = mock.server.stats().connectionsOpened
        mock.server.setFaults(MockConnectionFaults())
        try sender.submit((500..<510).map { request($0) })
        await collector.wait(for: 510)
        #expect(collector.responses.suffix(10).allSatisfy { $0.status == 200 })
        // At most one new connection for them: the sender does not reopen per request.
        #expect(mock.server.stats().connectionsOpened <= before + 1)
        _ = await sender.shutdown(deadline: .seconds(5))
        try await mock.stop()
    }

    @Test func connectionDropMidFlightIsOutcomeUnknown() async throws {
        let mock = try await MockHarness.start {
            $0.faults = MockConnectionFaults(closeAfterRequests: 50)
            $0.recordRequests = false
        }
        // Streams beyond the 50th on that connection are in flight when it drops.
        mock.server.setRule(forToken: deviceToken(60), .always(MockAnswer.normal.delayed(by: 2000)))
        let collector = ResultCollector()
        // A request timeout no busy machine reaches: the requests lost here must be lost to the
        // drop, not to a queue on a loaded machine (a timeout is a failure of another kind).
        var configuration = mock.senderConfiguration(connections: 1)
        configuration.requestTimeout = 120
        let sender = try PushSender(configuration: configuration,
                                    apns: mock.apns(streams: 200), credential: .token(tokenManager()),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        try sender.submit((0..<200).map { request($0) })
        await collector.wait(for: 200, timeout: .seconds(150))
        let responses = collector.responses
        let lost = responses.filter { $0.transportFailure != nil }
        #expect(!lost.isEmpty)
        #expect(lost.allSatisfy { $0.transportFailure!.kind == .connectionLost || $0.transportFailure!.kind == .other },
                "\(Set(lost.map { "\($0.transportFailure!.kind): \($0.transportFailure!.message)" }))")
        #expect(lost.allSatisfy { if case .retry(.outcomeUnknown) = $0.outcome { true } else { false } })
        #expect(responses.filter { $0.status == 200 }.count + lost.count == 200)
        mock.server.setFaults(MockConnectionFaults())
        try sender.submit((1000..<1010).map { request($0) })
        await collector.wait(for: 210)
        #expect(collector.responses.suffix(10).allSatisfy { $0.status == 200 })
        #expect(mock.server.stats().connectionsOpened >= 2)
        _ = await sender.shutdown(deadline: .seconds(5))
        try await mock.stop()
    }

    @Test func connectionKilledWhileIdleIsReplacedOnNextUse() async throws {
        let mock = try await MockHarness.start { $0.faults = MockConnectionFaults(idleTimeoutMilliseconds: 300) }
        let collector = ResultCollector()
        let sender = try PushSender(configuration: mock.senderConfiguration(), apns: mock.apns(), credential: .token(tokenManager()),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        try sender.submit([request(1)])
        await collector.wait(for: 1)
        #expect(collector.responses[0].status == 200)
        // The mock closes the idle connection; wait for that, not for a fixed time.
        try await mock.server.waitUntil(timeout: .seconds(10), "the idle kill") { $0.connectionsClosedByMock >= 1 }
        try sender.submit([request(2)])
        await collector.wait(for: 2)
        let second = collector.responses[1]
        // libcurl notices the dead connection and reconnects; the request is answered on the new
        // one, or, if it was written to the dead one first, comes back unanswered (connection
        // lost; on a busy machine a timeout) and is answered when sent again.
        #expect(second.status == 200 || second.transportFailure != nil, "\(second.status.map(String.init) ?? "no status"), \(String(describing: second.transportFailure))")
        if second.status != 200 {
            try sender.submit([second.request])
            await collector.wait(for: 3)
            #expect(collector.responses[2].status == 200)
        }
        #expect(mock.server.stats().connectionsOpened >= 2, "the killed connection was replaced")
        _ = await sender.shutdown(deadline: .seconds(5))
        try await mock.stop()
    }

    @Test func requestTimeoutFiresAndTheConnectionCarriesOn() async throws {
        let mock = try await MockHarness.start()
        mock.server.setRule(forToken: deviceToken(1), .always(.noAnswer))
        let collector = ResultCollector()
        let configuration = mock.senderConfiguration().with { $0.requestTimeout = 2 }
        let sender = try PushSender(configuration: configuration, apns: mock.apns(), credential: .token(tokenManager()),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        // A first answered request lifts the mock's one-stream limit of a new token connection
        // (as APNs does); otherwise request 2 would queue behind the unanswered one and share its deadline.
        try sender.submit([request(0)])
        await collector.wait(for: 1)
        #expect(collector.responses[0].status == 200)
        try sender.submit([request(1), request(2)])
        await collector.wait(for: 3)
        let byTag = Dictionary(uniqueKeysWithValues: collector.responses.map { ($0.tag, $0) })
        #expect(byTag[2]?.status == 200)
        #expect(byTag[1]?.transportFailure?.kind == .timeout)
        #expect(byTag[1]?.outcome == .retry(.outcomeUnknown(.timeout)))
        try sender.submit([request(3)])
        await collector.wait(for: 4)
        #expect(collector.responses.last?.status == 200)
        #expect(mock.server.stats().connectionsOpened == 1)
        _ = await sender.shutdown(deadline: .seconds(5))
        try await mock.stop()
    }

    @Test func shutdownReturnsUnsentAndCancelsInFlightAtTheDeadline() async throws {
        let mock = try await MockHarness.start()
        mock.server.setRule(forToken: deviceToken(1), .always(.noAnswer))
        let collector = ResultCollector()
        let sender = try PushSender(configuration: mock.senderConfiguration(connections: 1),
                                    apns: mock.apns(streams: 1), credential: .token(tokenManager()),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        try sender.submit([request(1), request(2), request(3)])
        try await mock.server.waitForRequests(count: 1, timeout: .seconds(10))
        #expect(sender.freeSlots == -2)
        let unsent = await sender.shutdown(deadline: .milliseconds(200))
        #expect(unsent.map(\.tag) == [2, 3])
        #expect(collector.responses.count == 1)
        #expect(collector.responses.first?.transportFailure?.kind == .cancelled)
        #expect(throws: PushTransportError.self) { try sender.submit([request(4)]) }
        try await mock.stop()
    }
}

@Suite(.serialized) struct SenderAuthTests {
    @Test func expiredProviderTokenRenewsOnceAndReopens() async throws {
        let mock = try await MockHarness.start()
        // Ten streams fail with ExpiredProviderToken at once; then everything succeeds.
        for i in 0..<10 { mock.server.setRule(forToken: deviceToken(i), MockTokenRule(sequence: [.error(.expiredProviderToken)])) }
        let manager = try tokenManager()
        let collector = ResultCollector()
        let sender = try PushSender(configuration: mock.senderConfiguration(), apns: mock.apns(), credential: .token(manager),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        try sender.submit([request(100)])  // first request lifts the 1-stream limit
        await collector.wait(for: 1)
        try sender.submit((0..<10).map { request($0) })
        await collector.wait(for: 11)
        let expired = collector.responses.filter { $0.apns?.reason == .expiredProviderToken }
        #expect(expired.count == 10)
        #expect(expired.allSatisfy { $0.outcome == .retryNow(.renewProviderToken) })
        #expect(manager.mintedCount == 2)  // renewed once for ten failures
        #expect(sender.stats().reopens == 1)
        try sender.submit(expired.map(\.request))  // the worker resends retryNow at once
        await collector.wait(for: 21)
        #expect(collector.responses.suffix(10).allSatisfy { $0.status == 200 })
        #expect(mock.server.stats().connectionsOpened == 2)
        _ = await sender.shutdown(deadline: .seconds(5))
        try await mock.stop()
    }

    /// Three hours of fake time, one request a minute on each of two connections: the mock
    /// (sharing the clock) sees tokens rotate but no connection switch within 20 minutes,
    /// and no expired token.
    @Test func noConnectionSwitchesTokensWithin20Minutes() async throws {
        let clock = FakeClock(1_800_000_000)
        let mock = try await MockHarness.start { $0.clock = clock.now; $0.recordRequests = false }
        let manager = try tokenManager(clock: clock.now)
        let collector = ResultCollector()
        let sender = try PushSender(configuration: mock.senderConfiguration(connections: 2),
                                    apns: mock.apns(streams: 10), credential: .token(manager),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        var expected = 0
        var unknown = 0
        for minute in 0..<180 {
            var batch = (0..<4).map { request(minute * 4 + $0) }
            for _ in 0..<3 where !batch.isEmpty {
                try sender.submit(batch)
                expected += batch.count
                await collector.wait(for: expected)
                // Outcome unknown → resend, as the worker does (none expected).
                batch = collector.responses.suffix(batch.count).filter { $0.transportFailure != nil }.map(\.request)
                unknown += batch.count
            }
            #expect(batch.isEmpty)
            clock.advance(60)
        }
        let stats = mock.server.stats()
        #expect(collector.responses.allSatisfy { $0.status == 200 })
        #expect(unknown == 0)
        #expect(stats.tokenSwitchViolations == 0)
        #expect(stats.byReason["ExpiredProviderToken"] == nil)
        #expect(stats.tokenSwitches >= 4)  // both connections did rotate, at least twice each
        #expect(sender.stats().tokenSwitches == stats.tokenSwitches)
        // Tokens are minted only when a connection needs one: at 0, 50, 100 and 150 minutes
        // (plus one per reopen after a connection loss, each at most one per 25 minutes).
        #expect(manager.mintedCount >= 4 && manager.mintedCount <= 180 / 25 + 1)
        _ = await sender.shutdown(deadline: .seconds(5))
        try await mock.stop()
    }

    @Test func certificateAuthWithPKCS12AndPEM() async throws {
        let mock = try await MockHarness.start()
        for (i, certificate) in [
            APNsClientCertificate(file: Fixtures.p12, format: .pkcs12, password: Fixtures.p12Password),
            APNsClientCertificate(file: Fixtures.directory + "/client.pem", format: .pem(keyFile: Fixtures.directory + "/client.key")),
        ].enumerated() {
            let collector = ResultCollector()
            let sender = try PushSender(configuration: mock.senderConfiguration(), apns: mock.apns(), credential: .certificate(certificate),
                                        logger: testLogger, onResults: collector.onResults)
            try sender.start()
            try sender.submit((0..<5).map { request(i * 10 + $0) })
            await collector.wait(for: 5)
            #expect(collector.responses.allSatisfy { $0.status == 200 })
            _ = await sender.shutdown(deadline: .seconds(5))
        }
        let stats = mock.server.stats()
        #expect(stats.certificateAuthRequests == 10)
        #expect(stats.tokenAuthRequests == 0)
        #expect(mock.server.requests().allSatisfy { $0.auth == "certificate" && $0.header("authorization") == nil })
        try await mock.stop()
    }

    @Test func wrongCertificatePasswordFailsAtInit() throws {
        let error = try #require(throws: PushTransportError.self) {
            try PushSender(configuration: PushSenderConfiguration(), apns: APNsConfiguration(),
                           credential: .certificate(APNsClientCertificate(file: Fixtures.p12, format: .pkcs12, password: "s3cr3t-guess")),
                           logger: testLogger, onResults: { _ in })
        }
        #expect(error.code == .invalidCertificate)
        #expect(error.description.contains("client.p12"))
        #expect(!error.description.contains("s3cr3t-guess"))
    }
}
