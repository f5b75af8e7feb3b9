import Foundation
import Logging
import MockPush
import PushCore
import PushTestSupport
@testable import PushTransport
import Testing

/// A `PushSender` to FCM against the mock's FCM endpoints: real TLS, HTTP/2, OAuth exchange.
@Suite(.serialized) struct FCMSenderTests {
    static func registrationToken(_ i: Int) -> String { "fcm\(i):APA91b_" + String(repeating: "q", count: 140) }

    /// A request as the worker fills it: the whole body and the registration token.
    static func fcmRequest(_ i: Int, expiration: Int64? = nil) -> PushRequest {
        let token = registrationToken(i)
        let body = try! FCMMessageBody.build(payload: Array(#"{"notification":{"title":"n\#(i)"},"data":{"k":"v"}}"#.utf8), token: token).get()
        return PushRequest(tag: Int64(i), deviceToken: token, payload: body, expiration: expiration, fields: .fcm)
    }

    struct Setup {
        let harness: MockHarness
        let tokens: FCMAccessTokenProvider
        let sender: PushSender
        let collector: ResultCollector

        func stop() async throws {
            _ = await sender.shutdown(deadline: .seconds(5))
            try await harness.stop()
        }

        var exchanges: Int { harness.server.fcmRequests().filter { $0.endpoint == "token" }.count }
        var sends: [MockFCMRecordedRequest] { harness.server.fcmRequests().filter { $0.endpoint == "send" } }

        func byTag() -> [Int64: PushResponse] {
            Dictionary(collector.responses.map { ($0.tag, $0) }, uniquingKeysWith: { a, _ in a })
        }
    }

    static func setup(key: String = "fcm-key.pem", tokenPort: Int? = nil, streams: Int = 1000,
                      logger: Logger = testLogger) async throws -> Setup {
        let harness = try await MockHarness.start()
        let account = try FCMServiceAccount(file: FCMAccessTokenTests.serviceAccountFile(port: tokenPort ?? harness.port, key: key))
        let tokens = try FCMAccessTokenProvider(account: account, configuration: FCMTokenExchangeConfiguration(extraCAFile: Fixtures.caFile),
                                                logger: logger)
        let collector = ResultCollector()
        // The mock's URL with a trailing slash, which the sender drops.
        let fcm = FCMConfiguration(baseURL: harness.url + "/", streamsPerConnection: streams)
        let sender = try PushSender(configuration: harness.senderConfiguration(connections: 1), fcm: fcm, tokens: tokens,
                                    logger: logger, onResults: collector.onResults)
        try sender.start()
        return Setup(harness: harness, tokens: tokens, sender: sender, collector: collector)
    }

    @Test func sendsMultiplexedAndRecordsMessageNames() async throws {
        let logs = CollectedLogs()
        let s = try await Self.setup(logger: logs.logger)
        let batch = (1...200).map { Self.fcmRequest($0) }
        try s.sender.submit(batch)
        await s.collector.wait(for: 200)
        var names = Set<String>()
        for response in s.collector.responses {
            #expect(response.status == 200)
            #expect(response.outcome == .fcm(.sent))
            #expect(response.request.provider == .fcm && response.fcm != nil)
            let name = try #require(response.fcm?.messageName)
            #expect(name.hasPrefix("projects/\(MockTestFixtures.fcmProjectID)/messages/"))
            names.insert(name)
        }
        #expect(names.count == 200)
        let sends = s.sends
        #expect(sends.count == 200)
        for sent in sends {
            #expect(sent.path == "/v1/projects/\(MockTestFixtures.fcmProjectID)/messages:send")
            #expect(sent.status == 200)
            #expect(sent.accessTokenSerial == 1)
        }
        let bodies = Dictionary(uniqueKeysWithValues: sends.map { ($0.registrationToken!, $0.body!) })
        for request in batch { #expect(bodies[request.deviceToken] == request.payload) }
        #expect(s.exchanges == 1)
        let stats = s.sender.stats()
        #expect(stats.peakInFlight > 1)
        #expect(stats.connectionsOpened == 1)
        #expect(stats.answered == 200)
        // The bearer token never reaches the logs.
        let token = try await s.tokens.accessToken()
        #expect(token.serial == 1)
        #expect(logs.all.contains("FCM sender starting"))
        #expect(!logs.all.contains(token.value))
        #expect(!logs.all.contains(String(token.value.prefix(12))))
        try await s.stop()
    }

    /// (mock's answer, expected outcome) for each row of the issue's table answered by FCM.
    static let table: [(MockFCMAnswer, Outcome)] = [
        (.error(.unregistered), .fcm(.invalidateToken(.unregistered))),
        (.invalidRegistrationToken, .fcm(.invalidateToken(.invalidArgument))),
        (.error(.invalidArgument, message: "Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration)"),
         .fcm(.fail(.invalidArgument))),
        (.error(.senderIDMismatch), .fcm(.fail(.senderIDMismatch))),
        (.error(.quotaExceeded, retryAfter: "120"), .fcm(.backOffCredential(seconds: 120))),
        (.error(.quotaExceeded), .fcm(.backOffCredential(seconds: FCMVerdict.defaultQuotaBackoff))),
        (.error(.unavailable, retryAfter: "30"), .fcm(.retry(.serverError(.unavailable), retryAfter: 30))),
        (.error(.internalError, retryAfter: "7"), .fcm(.retry(.serverError(.internalError), retryAfter: 7))),
        (.error(.internalError), .fcm(.retry(.serverError(.internalError), retryAfter: nil))),
    ]

    @Test func everyAnswerOfTheTableIsClassified() async throws {
        let s = try await Self.setup()
        for (i, row) in Self.table.enumerated() {
            s.harness.server.setFCMRule(forToken: Self.registrationToken(i), .always(row.0))
        }
        // QUOTA_EXCEEDED with an HTTP-date 300 s ahead.
        let dateTag = Self.table.count
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let date = formatter.string(from: Date().addingTimeInterval(300))
        s.harness.server.setFCMRule(forToken: Self.registrationToken(dateTag), .always(.error(.quotaExceeded, retryAfter: date)))
        // The credential-wide refusals.
        let thirdParty = dateTag + 1, denied = dateTag + 2
        s.harness.server.setFCMRule(forToken: Self.registrationToken(thirdParty), .always(.error(.thirdPartyAuthError)))
        s.harness.server.setFCMRule(forToken: Self.registrationToken(denied), .always(.error(.permissionDenied)))
        try s.sender.submit((0...denied).map { Self.fcmRequest($0) })
        await s.collector.wait(for: denied + 1)
        let byTag = s.byTag()
        for (i, row) in Self.table.enumerated() {
            #expect(byTag[Int64(i)]?.outcome == row.1, "row \(i): \(row.0)")
            #expect(byTag[Int64(i)]?.status == row.0.httpStatus)
        }
        let quota = try #require(byTag[Int64(dateTag)])
        guard case .fcm(.backOffCredential(let seconds)) = quota.outcome else {
            Issue.record("an HTTP-date Retry-After gave \(quota.outcome)")
            return
        }
        #expect((295...300).contains(seconds))
        guard case .fcm(.pauseCredential(.thirdPartyAuthError, let message))? = byTag[Int64(thirdParty)]?.outcome else {
            Issue.record("THIRD_PARTY_AUTH_ERROR gave \(String(describing: byTag[Int64(thirdParty)]?.outcome))")
            return
        }
        #expect(message.contains("upload a valid APNs authentication key"))
        guard case .fcm(.pauseCredential(.permissionDenied, let denial))? = byTag[Int64(denied)]?.outcome else {
            Issue.record("PERMISSION_DENIED gave \(String(describing: byTag[Int64(denied)]?.outcome))")
            return
        }
        #expect(denial.contains("Firebase Cloud Messaging API Admin"))
        // Every request reached FCM once: none of these is resent by the sender.
        #expect(s.sends.count == denied + 1)
        #expect(s.exchanges == 1)
        try await s.stop()
    }

    @Test func refusedExchangePausesTheCredential() async throws {
        // A key the mock does not know for this account: the exchange is refused.
        let s = try await Self.setup(key: "fcm-other-key.pem")
        try s.sender.submit((1...3).map { Self.fcmRequest($0) })
        await s.collector.wait(for: 3)
        for response in s.collector.responses {
            guard case .fcm(.pauseCredential(.unauthenticated, let message)) = response.outcome else {
                Issue.record("a refused exchange gave \(response.outcome)")
                continue
            }
            #expect(message.contains("the service account key was rejected"))
        }
        #expect(s.sends.isEmpty)
        try await s.stop()
    }

    @Test func unreachableTokenEndpointIsAConnectionFailure() async throws {
        // A port nobody listens on: bind one, note it, close it.
        let closed = try await MockHarness.start()
        let port = closed.port
        try await closed.stop()
        let s = try await Self.setup(tokenPort: port)
        try s.sender.submit([Self.fcmRequest(1)])
        await s.collector.wait(for: 1)
        let response = try #require(s.collector.responses.first)
        #expect(response.outcome == .retry(.outcomeUnknown(.connect)))
        #expect(response.transportFailure?.message.contains("cannot reach the FCM token endpoint") == true)
        #expect(s.sends.isEmpty)
        try await s.stop()
    }

    @Test func expiredAccessTokenIsRefreshedOnceAndResent() async throws {
        let s = try await Self.setup()
        try s.sender.submit([Self.fcmRequest(0)])
        await s.collector.wait(for: 1)
        s.harness.server.expireFCMAccessTokens()
        // Many requests in flight with the expired token get 401 together: one refresh.
        try s.sender.submit((1...50).map { Self.fcmRequest($0) })
        await s.collector.wait(for: 51)
        #expect(s.collector.responses.count == 51)
        for response in s.collector.responses {
            #expect(response.outcome == .fcm(.sent), "\(response.tag): \(response.outcome)")
        }
        #expect(s.exchanges == 2)
        let sends = s.sends
        let refused = sends.filter { $0.status == 401 }
        #expect(refused.count == 50)
        #expect(refused.allSatisfy { $0.error == "UNAUTHENTICATED" })
        let resent = sends.filter { $0.status == 200 && $0.accessTokenSerial == 2 }
        #expect(resent.count == 50)
        #expect(s.sender.stats().answered == 51)
        try await s.stop()
    }

    @Test func freshTokenRefusedAgainPausesTheCredential() async throws {
        let s = try await Self.setup()
        s.harness.server.setFCMRule(forToken: Self.registrationToken(1), .always(.error(.unauthenticated)))
        try s.sender.submit([Self.fcmRequest(1)])
        await s.collector.wait(for: 1)
        let response = try #require(s.collector.responses.first)
        guard case .fcm(.pauseCredential(.unauthenticated, let message)) = response.outcome else {
            Issue.record("a second 401 gave \(response.outcome)")
            try await s.stop()
            return
        }
        #expect(message.contains("just granted"))
        #expect(message.contains(MockTestFixtures.fcmProjectID))
        #expect(s.exchanges == 2)
        #expect(s.sends.count == 2)
        #expect(s.sends.map(\.accessTokenSerial) == [1, 2])
        try await s.stop()
    }

    @Test func tokenAcceptedAfterA401IsRefreshedAgainWhenItExpires() async throws {
        let s = try await Self.setup()
        try s.sender.submit([Self.fcmRequest(0)])
        await s.collector.wait(for: 1)
        for round in 1...2 {
            // Round 1: token #1 expires; round 2: token #2, fetched after a 401 and accepted
            // since, expires too: both are refreshed, never a pause.
            s.harness.server.expireFCMAccessTokens()
            try s.sender.submit([Self.fcmRequest(round)])
            await s.collector.wait(for: round + 1)
        }
        for response in s.collector.responses { #expect(response.outcome == .fcm(.sent), "\(response.outcome)") }
        #expect(s.exchanges == 3)
        #expect(s.sends.map(\.status) == [200, 401, 200, 401, 200])
        #expect(s.sends.map(\.accessTokenSerial) == [1, nil, 2, nil, 3])  // the mock names no owner for an expired token
        try await s.stop()
    }

    @Test func expiredBeforeSendingIsNeverSent() async throws {
        let s = try await Self.setup()
        try s.sender.submit([Self.fcmRequest(1, expiration: 1_000_000_000), Self.fcmRequest(2, expiration: 4_000_000_000)])
        await s.collector.wait(for: 2)
        let byTag = s.byTag()
        #expect(byTag[1]?.outcome == .expiredBeforeSending)
        #expect(byTag[2]?.outcome == .fcm(.sent))
        #expect(s.sends.map(\.registrationToken) == [Self.registrationToken(2)])
        try await s.stop()
    }

    @Test func fcmURLMustBeHTTPS() async throws {
        let harness = try await MockHarness.start()
        let tokens = try FCMAccessTokenTests.provider(harness)
        let fcm = FCMConfiguration(baseURL: "http://127.0.0.1:\(harness.port)")
        let error = #expect(throws: PushTransportError.self) {
            _ = try PushSender(configuration: harness.senderConfiguration(), fcm: fcm, tokens: tokens, logger: testLogger, onResults: { _ in })
        }
        #expect("\(error!)".contains("PUSHQ_FCM_URL must be an https:// URL"))
        #expect(FCMConfiguration().effectiveBaseURL == "https://fcm.googleapis.com")
        try await harness.stop()
    }
}
