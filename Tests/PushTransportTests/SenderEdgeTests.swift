import CCurl
import Foundation
import MockPush
import PushCore
@testable import PushTransport
import Testing

/// What stops at the C edge: header values checked before libcurl sees them, header nodes
/// that refuse what does not fit, setup problems reported at `init`, shutdown callers.
@Suite(.serialized) struct SenderEdgeTests {
    /// Requests whose header values cannot be sent, and what is wrong with each.
    static let invalid: [(String, @Sendable (inout PushRequest) -> Void)] = [
        ("CR LF in the topic", { $0.apns.topic += "\r\nx-injected: 1" }),
        ("LF in the topic", { $0.apns.topic += "\nx" }),
        ("NUL in the topic", { $0.apns.topic += "\u{0}x" }),
        ("a topic over the limit", { $0.apns.topic = String(repeating: "t", count: APNsHeaders.Limit.topic + 1) }),
        ("CR in the collapse id", { $0.apns.collapseID = "a\rb" }),
        ("NUL in the collapse id", { $0.apns.collapseID = "a\u{0}b" }),
        ("a collapse id over the limit", { $0.apns.collapseID = String(repeating: "c", count: APNsHeaders.Limit.collapseID + 1) }),
        ("LF in the apns-id", { $0.apns.apnsID += "\n" }),
        ("a priority of 11 digits", { $0.apns.priority = 10_000_000_000 }),
        ("a priority of Int.min", { $0.apns.priority = Int.min }),
        ("a space in the device token", { $0.deviceToken = "ab cd" }),
        ("a device token over the limit", { $0.deviceToken = String(repeating: "a", count: APNsHeaders.Limit.deviceToken + 1) }),
        ("an empty device token", { $0.deviceToken = "" }),
    ]

    @Test func headerProblemNamesWhatIsWrong() {
        #expect(request(1).headerProblem == nil)
        #expect(request(1, collapseID: String(repeating: "c", count: 64)).headerProblem == nil)
        for (label, change) in Self.invalid {
            var r = request(1)
            change(&r)
            #expect(r.headerProblem != nil, "\(label)")
        }
        var r = request(1)
        r.apns.topic += "\r\n"
        #expect(r.headerProblem?.contains("apns-topic") == true)
    }

    @Test(.timeLimit(.minutes(1)))
    func invalidHeadersFailLocallyAndNothingIsSent() async throws {
        let mock = try await MockHarness.start()
        let collector = ResultCollector()
        let sender = try PushSender(configuration: mock.senderConfiguration(), apns: mock.apns(), credential: .token(tokenManager()),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        var batch: [PushRequest] = []
        for (i, (_, change)) in Self.invalid.enumerated() {
            var r = request(i + 1)
            change(&r)
            batch.append(r)
        }
        let good = request(100)
        batch.append(good)
        try sender.submit(batch)
        await collector.wait(for: batch.count)
        let byTag = Dictionary(uniqueKeysWithValues: collector.responses.map { ($0.tag, $0) })
        for (i, (label, _)) in Self.invalid.enumerated() {
            let response = try #require(byTag[Int64(i + 1)])
            #expect(response.status == nil, "\(label)")
            #expect(response.transportFailure?.kind == .invalidHeader, "\(label)")
            #expect(response.outcome == .failLocally("InvalidHeader"), "\(label)")
            #expect(response.outcome.healthSignal == .none, "\(label)")
        }
        #expect(byTag[100]?.status == 200)
        // Only the good request reached APNs, on a connection nothing else disturbed.
        let recorded = mock.server.requests()
        #expect(recorded.map(\.deviceToken) == [good.deviceToken])
        #expect(mock.server.stats().requests == 1)
        #expect(sender.stats().reopens == 0)
        _ = await sender.shutdown(deadline: .seconds(5))
        try await mock.stop()
    }

    @Test func valuesAtTheLimitsAreSentWhole() async throws {
        let mock = try await MockHarness.start()
        let collector = ResultCollector()
        let sender = try PushSender(configuration: mock.senderConfiguration(), apns: mock.apns(), credential: .token(tokenManager()),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        var r = request(1, expiration: Int64.max, collapseID: String(repeating: "c", count: APNsHeaders.Limit.collapseID))
        r.apns.priority = APNsHeaders.Limit.priority.upperBound
        r.apns.topic = String(repeating: "t", count: APNsHeaders.Limit.topic)
        r.deviceToken = String(repeating: "b", count: APNsHeaders.Limit.deviceToken)
        var low = request(2)
        low.apns.priority = APNsHeaders.Limit.priority.lowerBound
        try sender.submit([r, low])
        await collector.wait(for: 2)
        #expect(collector.responses.allSatisfy { $0.status != nil && $0.transportFailure == nil })
        let recorded = Dictionary(uniqueKeysWithValues: mock.server.requests().map { ($0.deviceToken!, $0) })
        let big = try #require(recorded[r.deviceToken])
        #expect(big.header("apns-topic") == r.apns.topic)
        #expect(big.header("apns-collapse-id") == r.apns.collapseID)
        #expect(big.header("apns-priority") == "9999999999")
        #expect(big.header("apns-expiration") == String(Int64.max))
        #expect(recorded[low.deviceToken]?.header("apns-priority") == "-999999999")
        _ = await sender.shutdown(deadline: .seconds(5))
        try await mock.stop()
    }

    @Test func curlHeaderListRefusesWhatDoesNotFit() throws {
        let list = CurlHeaderList(limits: [8, 8, 4])
        func node(_ i: Int) -> String {
            var n = list.list
            for _ in 0..<i { n = n.pointee.next }
            return String(cString: n.pointee.data)
        }
        #expect(list.set(0, prefix: "ab: ", value: "xyz"))  // 7 bytes and the NUL: fits exactly
        #expect(node(0) == "ab: xyz")
        #expect(!list.set(0, prefix: "ab: ", value: "wxyz"))
        #expect(node(0) == "")  // left out of the request rather than cut
        #expect(list.set(0, prefix: "a: ", value: "b"))  // a node grows to its limit, then takes shorter values
        #expect(node(0) == "a: b")
        #expect(list.set(1, prefix: "p: ", integer: 1234))
        #expect(node(1) == "p: 1234")
        #expect(!list.set(1, prefix: "p: ", integer: 12345))
        #expect(node(1) == "")
        #expect(!list.set(1, prefix: "p: ", integer: Int64.min))
        #expect(list.set(2, prefix: "", integer: -12))
        #expect(node(2) == "-12")
        #expect(!list.set(2, prefix: "", integer: -123))
    }

    @Test func everyHeaderWithinItsLimitFitsItsSlot() {
        let c = APNsProvider.Header.capacities
        #expect("apns-topic: ".utf8.count + APNsHeaders.Limit.topic < c[APNsProvider.Header.topic])
        #expect("apns-collapse-id: ".utf8.count + APNsHeaders.Limit.collapseID < c[APNsProvider.Header.collapseID])
        #expect("apns-id: ".utf8.count + APNsHeaders.Limit.apnsID < c[APNsProvider.Header.apnsID])
        #expect("apns-priority: ".utf8.count + APNsHeaders.Limit.priorityDigits < c[APNsProvider.Header.priority])
        #expect(String(APNsHeaders.Limit.priority.lowerBound).count <= APNsHeaders.Limit.priorityDigits)
        #expect(String(APNsHeaders.Limit.priority.upperBound).count <= APNsHeaders.Limit.priorityDigits)
        #expect("apns-expiration: ".utf8.count + String(Int64.min).count < c[APNsProvider.Header.expiration])
    }

    @Test func aBrokenCAFileFailsAtInitNamingTheFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pushq-broken-ca-\(getpid()).pem").path
        try "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n".write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let error = try #require(throws: PushTransportError.self) {
            try PushSender(configuration: PushSenderConfiguration(extraCAFile: file), apns: APNsConfiguration(baseURL: "https://127.0.0.1:1"),
                           credential: .token(tokenManager()), logger: testLogger, onResults: { _ in })
        }
        #expect(error.code == .configuration)
        #expect(error.description.contains(file))
        #expect(error.description.contains("PUSHQ_CA_FILE"))
    }

    @Test func theLibcurlFloorCoversTheOptionsUsed() throws {
        // CURLOPT_CAINFO_BLOB is the newest option the sender sets (7.77.0).
        #expect(CurlRuntime.minimumVersion == 0x07_4D_00)
        let info = try LibcurlInfo.checked()
        #expect(!info.version.isEmpty)
    }

    @Test(.timeLimit(.minutes(1)))
    func concurrentShutdownCallersAllReturn() async throws {
        let mock = try await MockHarness.start()
        mock.server.setRule(forToken: deviceToken(1), .always(.noAnswer))
        let collector = ResultCollector()
        let sender = try PushSender(configuration: mock.senderConfiguration(connections: 2),
                                    apns: mock.apns(streams: 1), credential: .token(tokenManager()),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        try sender.submit([request(1), request(2), request(3), request(4)])
        try await mock.server.waitForRequests(count: 1, timeout: .seconds(10))
        let unsent = await withTaskGroup(of: [PushRequest].self) { group in
            for _ in 0..<3 { group.addTask { await sender.shutdown(deadline: .milliseconds(300)) } }
            var all: [PushRequest] = []
            for await batch in group { all += batch }
            return all
        }
        // Every caller returned; the queue was handed back once, whoever took it.
        #expect(Set(unsent.map(\.tag)).count == unsent.count)
        #expect(unsent.count + collector.responses.count == 4)
        #expect(throws: PushTransportError.self) { try sender.submit([request(5)]) }
        try await mock.stop()
    }
}
