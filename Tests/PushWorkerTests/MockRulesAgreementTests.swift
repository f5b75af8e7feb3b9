import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// pushq's limits and rules against the mock's, which are written from Apple's and Google's
/// documentation and not from pushq: a wrong limit in PushCore or in the schema makes one of
/// these fail instead of agreeing with itself.
@Suite("pushq agrees with the mock's rules", .serialized)
struct MockRulesAgreementTests {
    @Test("push types, topic suffixes and default priorities are Apple's")
    func pushTypes() {
        #expect(Set(PushType.allCases.map(\.rawValue)) == Set(MockAPNsPushType.allCases.map(\.rawValue)))
        for type in PushType.allCases {
            let apple = MockAPNsPushType(rawValue: type.rawValue)
            #expect(type.topicSuffix == apple?.topicSuffix, "\(type)")
            #expect(apple?.allows(priority: type.defaultPriority) == true, "\(type) default priority \(type.defaultPriority)")
        }
    }

    @Test("every reason Apple lists is known to PushCore, and none is classified as an unknown one")
    func reasons() {
        // The mock's own reasons (MockInvalidLiveActivityPayload) are no Apple's.
        let apples = MockAPNsReason.allCases.filter { !$0.rawValue.hasPrefix("Mock") }
        #expect(Set(APNsReason.known.map(\.rawValue)) == Set(apples.map(\.rawValue)))
        for reason in apples {
            let outcome = Outcome.classify(status: reason.status, reason: APNsReason(reason.rawValue), timestamp: 1)
            if case .retry(.unknownReason) = outcome { Issue.record("\(reason.rawValue) classified as unknown") }
        }
    }

    @Test("FCM: error codes, registration tokens, OAuth scope and assertion lifetime are Google's")
    func fcm() {
        #expect(Set(FCMErrorCode.known.map(\.rawValue)) == Set(MockFCMErrorCode.allCases.map(\.rawValue)))
        var samples = ["", String(repeating: "a", count: 4096), String(repeating: "a", count: 4097), "é", "a:b", "a\u{0}b"]
        samples += (0..<128).map { "x" + String(UnicodeScalar(UInt8($0))) }
        for token in samples {
            #expect(FCMMessageBody.isValidToken(token) == MockFCMRules.isValidRegistrationToken(token), "\(token.debugDescription)")
        }
        #expect(FCMOAuthClaims.scope == MockFCMRules.oauthScope)
        #expect(FCMOAuthClaims.maxLifetimeSeconds <= MockFCMRules.maxAssertionLifetimeSeconds)
        let claims = FCMOAuthClaims(keyID: "k", clientEmail: "e", audience: "a", issuedAt: 0)
        #expect(claims.headerJSON.contains(#""alg":"\#(MockFCMRules.assertionAlgorithm)""#))
        #expect(ProviderTokenClaims(keyID: "k", teamID: "t", issuedAt: 0).headerJSON.contains(#""alg":"\#(MockAPNsRules.providerTokenAlgorithm)""#))
    }

    @Test("the schema takes exactly the payloads, priorities and collapse ids Apple and Google take, and only tokens they take")
    func schemaLimits() async throws {
        try await TestDatabase.withConnection { db in
            for type in MockAPNsPushType.allCases {
                #expect(try await Self.accepts(db, apns: type, payloadBytes: type.maxPayloadBytes), "\(type) at its limit")
                #expect(try await !Self.accepts(db, apns: type, payloadBytes: type.maxPayloadBytes + 1), "\(type) over its limit")
                for priority in [1, 5, 10] {
                    #expect(try await Self.accepts(db, apns: type, priority: priority) == type.allows(priority: priority), "\(type) \(priority)")
                }
            }
            #expect(try await Self.accepts(db, fcmPayloadBytes: MockFCMRules.maxPayloadBytes))
            #expect(try await !Self.accepts(db, fcmPayloadBytes: MockFCMRules.maxPayloadBytes + 1))
            let limit = MockAPNsRules.maxCollapseIDBytes
            #expect(try await Self.accepts(db, apns: .alert, collapseID: String(repeating: "c", count: limit)))
            #expect(try await !Self.accepts(db, apns: .alert, collapseID: String(repeating: "c", count: limit + 1)))
            // pushq is stricter than Apple about length (64 to 200 digits): whatever it stores, Apple takes.
            for token in ["ab", String(repeating: "a", count: 63), String(repeating: "aB", count: 32), String(repeating: "0F", count: 100),
                          String(repeating: "ab", count: 101), String(repeating: "zz", count: 32)] {
                if try await Self.accepts(db, apns: .alert, token: token) {
                    #expect(MockAPNsRules.isValidDeviceToken(token), "stored but Apple refuses: \(token)")
                }
            }
        }
    }

    @Test("one row of every push type at its payload limit, a 200-digit token and an FCM message at 4096 bytes: all sent")
    func rowsAtTheLimitsAreSent() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, mockURL in
                for (i, type) in MockAPNsPushType.allCases.enumerated() {
                    try await db.query("INSERT INTO pushq.notifications (device_token, payload, push_type) VALUES ($1, $2, $3)",
                                       [Fixtures.token(i, prefix: "e"), Self.apnsPayload(bytes: type.maxPayloadBytes, type: type), type.rawValue])
                }
                let longToken = String(repeating: "aB", count: 100)
                try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\":{}}')", [longToken])
                _ = try await FCMEndToEndTests.insertFCM(db, FCMEndToEndTests.token(0, "limit"), payload: Self.fcmPayload(bytes: MockFCMRules.maxPayloadBytes))
                let configuration = try await FCMEndToEndTests.configuration(db, mockURL: mockURL)
                _ = try await withWorker(configuration) { _ in
                    try await waitUntilAllFinal(db)
                }
                #expect(try await statusCounts(db) == ["sent": MockAPNsPushType.allCases.count + 2])
                let requests = mock.requests()
                #expect(requests.allSatisfy { $0.status == 200 }, "\(requests.map { ($0.header("apns-push-type"), $0.reason) })")
                #expect(Set(requests.compactMap { $0.header("apns-push-type") }) == Set(MockAPNsPushType.allCases.map(\.rawValue)))
                #expect(requests.contains { $0.deviceToken == longToken })
                #expect(mock.fcmRequests().filter { $0.endpoint == "send" }.map(\.status) == [200])
            }
        }
    }

    /// An APNs payload of exactly `bytes` bytes.
    static func apnsPayload(bytes: Int, type: MockAPNsPushType = .alert) -> String {
        // A Live Activity update carries the keys its event needs (notifications_liveactivity_*).
        let (head, tail) = type == .liveactivity
            ? (#"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"s":""#, #""}}}"#)
            : (#"{"aps":{"alert":""#, #""}}"#)
        return head + String(repeating: "a", count: bytes - head.utf8.count - tail.utf8.count) + tail
    }

    /// An FCM payload (data only, compact) of exactly `bytes` bytes.
    static func fcmPayload(bytes: Int) -> String {
        let frame = #"{"data":{"k":""}}"#.utf8.count
        return #"{"data":{"k":""# + String(repeating: "f", count: bytes - frame) + #""}}"#
    }

    /// Whether the schema stores an APNs row like this (a CHECK violation is a no; anything else throws).
    static func accepts(_ db: PGConnection, apns type: MockAPNsPushType, payloadBytes: Int = 100, priority: Int? = nil,
                        collapseID: String? = nil, token: String = Fixtures.token(1, prefix: "d")) async throws -> Bool {
        try await accepts(db, "INSERT INTO pushq.notifications (device_token, payload, push_type, priority, collapse_id) VALUES ($1, $2, $3, $4, $5)",
                          [token, apnsPayload(bytes: payloadBytes, type: type), type.rawValue, priority, collapseID])
    }

    static func accepts(_ db: PGConnection, fcmPayloadBytes: Int) async throws -> Bool {
        try await accepts(db, "INSERT INTO pushq.notifications (provider, device_token, payload) VALUES ('fcm', $1, $2)",
                          [FCMEndToEndTests.token(1, "schema"), fcmPayload(bytes: fcmPayloadBytes)])
    }

    private static func accepts(_ db: PGConnection, _ sql: String, _ values: [(any PGParameter)?]) async throws -> Bool {
        do {
            try await db.query(sql, values)
            return true
        } catch {
            if ((error as any Error) as? PGError)?.sqlState == "23514" { return false }
            throw error
        }
    }
}
