import NIOHPACK
@testable import MockAPNs
import PushCore
import Testing

/// The request checks as pure functions.
@Suite("RequestValidator")
struct RequestValidatorTests {
    let validator = RequestValidator(bundleIDs: ["com.example.app"])

    func head(_ pairs: [(String, String)]) -> RequestHead {
        RequestHead(HPACKHeaders([(":method", "POST"), (":path", "/3/device/" + Fixtures.token)] + pairs))
    }

    @Test("every push type accepts the bundle id plus its own suffix", arguments: PushType.allCases)
    func topicPerPushType(_ type: PushType) {
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
        ("/3/device", APNsReason.missingDeviceToken),
        ("/3/device/", .missingDeviceToken),
        ("/3/devices/" + Fixtures.token, .badPath),
        ("/3/device/" + Fixtures.token + "/x", .badPath),
        ("/3/device/abc", .badDeviceToken),
        ("/", .badPath),
    ] as [(String, APNsReason?)])
    func paths(_ path: String, _ expected: APNsReason?) {
        let result = RequestValidator.checkPath(RequestHead(HPACKHeaders([(":method", "POST"), (":path", path)])))
        switch result {
        case .success(let token): #expect(expected == nil && token == Fixtures.token[...])
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
        #expect(RequestValidator.isCanonicalLowercaseUUID("123e4567-e89b-12d3-a456-426614174000"))
        #expect(!RequestValidator.isCanonicalLowercaseUUID("123E4567-E89B-12D3-A456-426614174000"))
        #expect(!RequestValidator.isCanonicalLowercaseUUID("123e4567e89b12d3a456426614174000"))
        #expect(!RequestValidator.isCanonicalLowercaseUUID("123e4567-e89b-12d3-a456-42661417400g"))
        var rng = SplitMix64(seed: 5)
        var seen = Set<String>()
        for _ in 0..<100 {
            let id = rng.uuidString()
            #expect(RequestValidator.isCanonicalLowercaseUUID(id))
            let chars = Array(id)
            #expect(chars[14] == "4", "version 4: \(id)")
            #expect("89ab".contains(chars[19]), "RFC 4122 variant: \(id)")
            seen.insert(id)
        }
        #expect(seen.count == 100)
    }
}
