import Foundation
import MockPush
import Testing

/// Each of Apple's request checks, over real TLS + HTTP/2.
@Suite("Request validation")
struct ValidationTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var method = "POST"
        var path: String?
        var set: [String: String] = [:]
        var remove: [String] = []
        var duplicate: (String, String)?
        var body: [UInt8]? = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
        var status: Int
        var reason: String
        var testDescription: String { "\(name) → \(status) \(reason)" }
    }

    static let cases: [Case] = [
        Case(name: "GET", method: "GET", body: nil, status: 405, reason: "MethodNotAllowed"),
        Case(name: "wrong path", path: "/2/device/" + Fixtures.token, status: 404, reason: "BadPath"),
        Case(name: "no token", path: "/3/device/", status: 400, reason: "MissingDeviceToken"),
        Case(name: "non-hex token", path: "/3/device/" + String(repeating: "zz", count: 32), status: 400, reason: "BadDeviceToken"),
        Case(name: "odd-length token", path: "/3/device/" + String(repeating: "a", count: 65), status: 400, reason: "BadDeviceToken"),
        Case(name: "no authorization", remove: ["authorization"], status: 403, reason: "MissingProviderToken"),
        Case(name: "garbage JWT", set: ["authorization": "bearer not.a.jwt"], status: 403, reason: "InvalidProviderToken"),
        Case(name: "no topic", remove: ["apns-topic"], status: 400, reason: "MissingTopic"),
        Case(name: "foreign topic", set: ["apns-topic": "com.other.app"], status: 400, reason: "TopicDisallowed"),
        Case(name: "voip without .voip suffix", set: ["apns-push-type": "voip"], status: 400, reason: "BadTopic"),
        Case(name: "suffix on alert", set: ["apns-topic": Fixtures.bundleID + ".voip"], status: 400, reason: "BadTopic"),
        Case(name: "unknown push type", set: ["apns-push-type": "banner"], status: 400, reason: "InvalidPushType"),
        Case(name: "priority 7", set: ["apns-priority": "7"], status: 400, reason: "BadPriority"),
        Case(name: "background at priority 10", set: ["apns-push-type": "background", "apns-priority": "10"], status: 400, reason: "BadPriority"),
        Case(name: "expiration not an integer", set: ["apns-expiration": "soon"], status: 400, reason: "BadExpirationDate"),
        Case(name: "collapse id of 65 bytes", set: ["apns-collapse-id": String(repeating: "c", count: 65)], status: 400, reason: "BadCollapseId"),
        Case(name: "uppercase apns-id", set: ["apns-id": "123E4567-E89B-12D3-A456-426614174000"], status: 400, reason: "BadMessageId"),
        Case(name: "apns-id not a UUID", set: ["apns-id": "42"], status: 400, reason: "BadMessageId"),
        Case(name: "duplicate apns-priority", set: ["apns-priority": "10"], duplicate: ("apns-priority", "5"), status: 400, reason: "DuplicateHeaders"),
        Case(name: "no body", body: nil, status: 400, reason: "PayloadEmpty"),
        Case(name: "JSON array body", body: Array("[1,2,3]".utf8), status: 400, reason: "PayloadEmpty"),
        Case(name: "4097-byte payload", body: payload(bytes: 4097), status: 413, reason: "PayloadTooLarge"),
    ]

    @Test("invalid request → Apple's status and reason", arguments: cases)
    func invalidRequest(_ c: Case) async throws {
        try await withMock { server, port async throws in
            var request = TestRequest.valid(jwt: try Fixtures.jwt())
            request.method = c.method
            if let path = c.path { request.path = path }
            for (name, value) in c.set { request.set(name, value) }
            for name in c.remove { request.set(name, nil) }
            if let (name, value) = c.duplicate { request.headers.append((name, value)) }
            request.body = c.body
            let response = try Curl.one(port: port, request)
            #expect(response.status == c.status)
            #expect(response.reason == c.reason, "body: \(response.body)")
            let apnsID = try #require(response.headers["apns-id"])
            #expect(MockAPNsRules.isValidApnsID(apnsID))
            #expect(server.stats().byReason[c.reason] == 1)
        }
    }

    @Test("4096 bytes is still accepted for alert")
    func payloadAtLimit() async throws {
        try await withMock { _, port async throws in
            var request = TestRequest.valid(jwt: try Fixtures.jwt())
            request.body = payload(bytes: 4096)
            #expect(try Curl.one(port: port, request).status == 200)
        }
    }

    @Test("a large oversize body is read in full before the 413 (flow control)")
    func largeBodyReadBeforeAnswer() async throws {
        try await withMock { server, port async throws in
            var request = TestRequest.valid(jwt: try Fixtures.jwt())
            request.body = payload(bytes: 300_000)
            let response = try Curl.one(port: port, request)
            #expect(response.status == 413)
            #expect(response.reason == "PayloadTooLarge")
            #expect(server.requests().first?.bodyLength == 300_000)
        }
    }

    @Test("an error answer echoes a valid apns-id")
    func errorEchoesApnsID() async throws {
        try await withMock { _, port async throws in
            let id = "0a9e1c66-7d1e-4b5c-9a43-1f0e2d3c4b5a"
            var request = TestRequest.valid(jwt: try Fixtures.jwt(), apnsID: id)
            request.set("apns-priority", "3")
            let response = try Curl.one(port: port, request)
            #expect(response.status == 400)
            #expect(response.headers["apns-id"] == id)
        }
    }
}
