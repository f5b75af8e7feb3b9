import NIOHPACK
// Internals: the request checks are pure functions over a parsed head (RequestHead), tested here
// without a socket; the same checks over TLS + HTTP/2 are ValidationTests.
@testable import MockPush
import Testing

/// The request checks as pure functions.
@Suite("RequestValidator")
struct RequestValidatorTests {
    let validator = RequestValidator(bundleIDs: ["com.example.app"])

    func head(_ pairs: [(String, String)]) -> RequestHead {
        RequestHead(HPACKHeaders([(":method", "POST"), (":path", "/3/device/" + Fixtures.token)] + pairs))
    }

    @Test("every push type accepts the bundle id plus its own suffix", arguments: MockAPNsPushType.allCases)
    func topicPerPushType(_ type: MockAPNsPushType) {
        let priority = type == .background ? "5" : "10"
        let ok = head([("apns-push-type", type.rawValue), ("apns-topic", "com.example.app" + type.topicSuffix), ("apns-priority", priority)])
        #expect(validator.checkHeaders(ok, certificateAuth: false) == .success(type))
        if !type.topicSuffix.isEmpty {
            let bare = head([("apns-push-type", type.rawValue), ("apns-topic", "com.example.app"), ("apns-priority", priority)])
            #expect(validator.checkHeaders(bare, certificateAuth: false) == .failure(.badTopic))
        }
    }

    @Test("a topic that merely starts with a bundle id is not under it")
    func topicPrefixIsNotBundle() {
        #expect(validator.checkTopic("com.example.apple", pushType: .alert) == .topicDisallowed)
        #expect(validator.checkTopic("com.example.app.voip", pushType: .alert) == .badTopic)
    }

    @Test("certificate auth may omit the topic, token auth may not")
    func topicOptionalWithCertificate() {
        let noTopic = head([("apns-push-type", "alert")])
        #expect(validator.checkHeaders(noTopic, certificateAuth: true) == .success(.alert))
        #expect(validator.checkHeaders(noTopic, certificateAuth: false) == .failure(.missingTopic))
    }

    @Test("paths", arguments: [
        ("/3/device/" + Fixtures.token, nil),
        ("/3/device/" + Fixtures.token + "?x=1", nil),
        ("/3/device", MockAPNsReason.missingDeviceToken),
        ("/3/device/", .missingDeviceToken),
        ("/3/devices/" + Fixtures.token, .badPath),
        ("/3/device/" + Fixtures.token + "/x", .badPath),
        ("/3/device/abc", .badDeviceToken),
        ("/", .badPath),
        ("/3/device/ab", nil),  // Apple documents no length: whole hex bytes are a token
    ] as [(String, MockAPNsReason?)])
    func paths(_ path: String, _ expected: MockAPNsReason?) {
        let result = RequestValidator.checkPath(RequestHead(HPACKHeaders([(":method", "POST"), (":path", path)])))
        switch result {
        case .success(let token): #expect(expected == nil && path.hasPrefix("/3/device/" + token))
        case .failure(let reason): #expect(reason == expected)
        }
    }

    @Test("body checks: empty, limit, not an object, whitespace around an object")
    func bodies() {
        #expect(RequestValidator.checkBody([UInt8](), pushType: .alert) == .payloadEmpty)
        #expect(RequestValidator.checkBody(Array("  ".utf8), pushType: .alert) == .payloadEmpty)
        #expect(RequestValidator.checkBody(Array("\"text\"".utf8), pushType: .alert) == .payloadEmpty)
        #expect(RequestValidator.checkBody(Array(" {\"aps\":{}}\n".utf8), pushType: .alert) == nil)
        #expect(RequestValidator.checkBody(payload(bytes: 4097), pushType: .alert) == .payloadTooLarge)
        #expect(RequestValidator.checkBody(payload(bytes: 5120), pushType: .voip) == nil)
        #expect(RequestValidator.checkBody(payload(bytes: 5121), pushType: .voip) == .payloadTooLarge)
    }

    @Test("apns-id must be a lowercase canonical UUID")
    func uuids() {
        #expect(MockAPNsRules.isValidApnsID("123e4567-e89b-12d3-a456-426614174000"))
        #expect(!MockAPNsRules.isValidApnsID("123E4567-E89B-12D3-A456-426614174000"))
        #expect(!MockAPNsRules.isValidApnsID("123e4567e89b12d3a456426614174000"))
        #expect(!MockAPNsRules.isValidApnsID("123e4567-e89b-12d3-a456-42661417400g"))
        var rng = SplitMix64(seed: 5)
        var seen = Set<String>()
        for _ in 0..<100 {
            let id = rng.uuidString()
            #expect(MockAPNsRules.isValidApnsID(id))
            let chars = Array(id)
            #expect(chars[14] == "4", "version 4: \(id)")
            #expect("89ab".contains(chars[19]), "RFC 4122 variant: \(id)")
            seen.insert(id)
        }
        #expect(seen.count == 100)
    }

    @Test("priorities: 10, 5 and 1, not 10 for background, digits only", arguments: [
        ("10", MockAPNsPushType.alert, true), ("5", .alert, true), ("1", .alert, true), ("10", .background, false),
        ("5", .background, true), ("7", .alert, false), ("+5", .alert, false), ("", .alert, false), ("100", .alert, false),
    ])
    func priorities(_ value: String, _ type: MockAPNsPushType, _ allowed: Bool) {
        let request = head([("apns-push-type", type.rawValue), ("apns-topic", "com.example.app" + type.topicSuffix), ("apns-priority", value)])
        #expect(validator.checkHeaders(request, certificateAuth: false) == (allowed ? .success(type) : .failure(.badPriority)))
    }
}

/// The FCM message checks as a pure function.
@Suite("FCMMessageValidator")
struct FCMMessageValidatorTests {
    static let token = "dQw4w9WgXcQ:APA91b" + String(repeating: "Z", count: 140)

    func check(_ json: String) -> Result<String?, FCMMessageValidator.Problem> {
        FCMMessageValidator.check(Array(json.utf8))
    }

    @Test("every Message field HTTP v1 takes, in either spelling, and each target")
    func acceptedMessages() {
        let full = #"{"validate_only":false,"message":{"token":"\#(Self.token)","name":"n","data":{"k":"v"},"notification":{"title":"t"},"#
            + #""android":{"priority":"high"},"webpush":{},"apns":{"payload":{"aps":{}}},"fcm_options":{"analytics_label":"x"}}}"#
        #expect(check(full) == .success(Self.token))
        #expect(check(#"{"validateOnly":true,"message":{"token":"\#(Self.token)","fcmOptions":{}}}"#) == .success(Self.token))
        #expect(check(#"{"message":{"topic":"news"}}"#) == .success(nil))
        #expect(check(#"{"message":{"condition":"'a' in topics"}}"#) == .success(nil))
    }

    @Test("what Google refuses", arguments: [
        (#"{"message":{"token":"T","data":{"google.x":"v"}}}"#, "reserved"),
        (#"{"message":{"token":"T","data":{"gcm.notification.x":"v"}}}"#, "reserved"),
        (#"{"message":{"token":"T","data":{"message_type":"v"}}}"#, "reserved"),
        (#"{"message":{"token":"T","data":["v"]}}"#, "data must be an object"),
        (#"{"message":{"token":"T","android":[]}}"#, "message.android"),
        (#"{"message":{"token":1}}"#, "message.token"),
        (#"{"message":{"token":"T","topic":"x"}}"#, "exactly one"),
        (#"{"message":{"token":"T","priority":"high"}}"#, #"Unknown name "priority" at 'message'"#),
        (#"{"message":{"token":"T"},"dry_run":true}"#, #"Unknown name "dry_run""#),
        (#"[]"#, "Expected an object"),
        (#"{"message":"#, "Invalid JSON"),
        (#"{"message":{"token":"has space"}}"#, "not a valid FCM registration token"),
    ])
    func refused(_ json: String, _ words: String) {
        let json = json.replacingOccurrences(of: #""T""#, with: #""\#(Self.token)""#)
        guard case .failure(let problem) = check(json) else {
            Issue.record("accepted: \(json)")
            return
        }
        #expect(problem.message.contains(words), "\(json): \(problem.message)")
    }
}

/// The rules the mock publishes, against Apple's and Google's numbers.
@Suite("Published rules")
struct PublishedRulesTests {
    @Test("device tokens: whole hex bytes of any length, either case")
    func deviceTokens() {
        #expect(MockAPNsRules.isValidDeviceToken("ab"))
        #expect(MockAPNsRules.isValidDeviceToken(String(repeating: "Ab", count: 100)))
        #expect(MockAPNsRules.isValidDeviceToken(String(repeating: "0f", count: 300)))
        #expect(!MockAPNsRules.isValidDeviceToken(""))
        #expect(!MockAPNsRules.isValidDeviceToken("abc"))
        #expect(!MockAPNsRules.isValidDeviceToken("zz"))
    }

    @Test("payload limits: 5120 for voip, 4096 for every other type")
    func payloadLimits() {
        for type in MockAPNsPushType.allCases {
            #expect(type.maxPayloadBytes == (type == .voip ? 5120 : 4096), "\(type)")
        }
        #expect(MockFCMRules.maxPayloadBytes == 4096)
    }

    @Test("registration tokens: 1 to 4096 of A-Z a-z 0-9 - _ :")
    func registrationTokens() {
        #expect(MockFCMRules.isValidRegistrationToken(FCMMessageValidatorTests.token))
        #expect(MockFCMRules.isValidRegistrationToken(String(repeating: "a", count: 4096)))
        #expect(!MockFCMRules.isValidRegistrationToken(String(repeating: "a", count: 4097)))
        #expect(!MockFCMRules.isValidRegistrationToken(""))
        for bad in ["a b", "a/b", "a+b", "a=b", "a.b", "é"] {
            #expect(!MockFCMRules.isValidRegistrationToken(bad), "\(bad)")
        }
    }

    @Test("every reason carries the status of Apple's table")
    func reasonStatuses() {
        let byStatus = Dictionary(grouping: MockAPNsReason.allCases, by: \.status).mapValues { Set($0.map(\.rawValue)) }
        #expect(byStatus[410] == ["Unregistered", "ExpiredToken"])
        #expect(byStatus[413] == ["PayloadTooLarge"])
        #expect(byStatus[429] == ["TooManyRequests", "TooManyProviderTokenUpdates"])
        #expect(byStatus[503] == ["ServiceUnavailable", "Shutdown"])
        // 14 of pushes to devices, 6 of broadcasts and channel management, and the mock's own
        // MockInvalidLiveActivityPayload. 403: 8 of Apple's table and BadEnvironmentKeyInToken, the
        // spelling APNs also sends for BadEnvironmentKeyIdInToken.
        #expect(byStatus[400]?.count == 21 && byStatus[403]?.count == 9)
        #expect(byStatus[403]?.isSuperset(of: ["BadEnvironmentKeyIdInToken", "BadEnvironmentKeyInToken"]) == true)
        #expect(byStatus[400]?.isSuperset(of: ["MissingChannelId", "BadChannelId", "ChannelNotRegistered", "MissingPushType",
                                               "CannotCreateChannelConfig", "FeatureNotEnabled", "MockInvalidLiveActivityPayload"]) == true)
    }
}
