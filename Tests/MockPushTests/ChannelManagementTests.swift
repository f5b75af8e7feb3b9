import Foundation
import MockPush
import Testing

/// APNs' channel-management API on the mock's management port, over real TLS + HTTP/2.
@Suite("Channel management")
struct ChannelManagementTests {
    static func request(_ method: String, _ path: String, jwt: String, channelID: String? = nil,
                        body: String? = nil, requestID: String? = nil) -> TestRequest {
        var headers = [("authorization", "bearer " + jwt)]
        if let channelID { headers.append(("apns-channel-id", channelID)) }
        if let requestID { headers.append(("apns-request-id", requestID)) }
        return TestRequest(method: method, path: path, headers: headers, body: body.map { Array($0.utf8) })
    }

    static var channels: String { "/1/apps/\(Fixtures.bundleID)/channels" }
    static let create = #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#

    @Test("create, read, list all, delete: Apple's statuses, headers and bodies")
    func lifeCycle() async throws {
        try await withMock { server, port async throws in
            let management = try #require(server.managementPort)
            #expect(management != port)
            let jwt = try Fixtures.jwt()
            let requestID = "0a9e1c66-7d1e-4b5c-9a43-1f0e2d3c4b5a"
            let created = try Curl.one(port: management, Self.request("POST", Self.channels, jwt: jwt, body: Self.create, requestID: requestID))
            #expect(created.status == 201)
            #expect(created.headers["apns-request-id"] == requestID)
            let id = try #require(created.headers["apns-channel-id"])
            #expect(Data(base64Encoded: id) != nil, "a channel id is base64")
            #expect(server.channels(bundleID: Fixtures.bundleID).map(\.id) == [id])

            let read = try Curl.one(port: management, Self.request("GET", Self.channels, jwt: jwt, channelID: id))
            #expect(read.status == 200)
            #expect(read.json?["message-storage-policy"] as? Int == 1)
            #expect(read.json?["push-type"] as? String == "LiveActivity")
            #expect(read.headers["apns-request-id"].map(MockAPNsRules.isValidApnsID) == true)

            let other = try #require(server.createChannel(bundleID: Fixtures.bundleID, storagePolicy: 0))
            let list = try Curl.one(port: management, Self.request("GET", "/1/apps/\(Fixtures.bundleID)/all-channels", jwt: jwt))
            #expect(list.status == 200)
            #expect(list.json?["channels"] as? [String] == [id, other.id])

            let deleted = try Curl.one(port: management, Self.request("DELETE", Self.channels, jwt: jwt, channelID: id))
            #expect(deleted.status == 204)
            #expect(server.channels().map(\.id) == [other.id])
            let again = try Curl.one(port: management, Self.request("DELETE", Self.channels, jwt: jwt, channelID: id))
            #expect(again.status == 400)
            #expect(again.reason == "ChannelNotRegistered")
            #expect(server.stats().channelRequests == 5)
            #expect(server.stats().requests == 0, "management requests are not pushes")
            #expect(server.channelRequests().map(\.method) == ["POST", "GET", "GET", "DELETE", "DELETE"])
            #expect(server.channelRequests().allSatisfy { $0.header("authorization") == "bearer <redacted>" })
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var method = "POST"
        var path = ChannelManagementTests.channels
        var channelID: String?
        var body: String? = ChannelManagementTests.create
        var jwt = true
        var status: Int
        var reason: String
        var testDescription: String { "\(name) → \(status) \(reason)" }
    }

    static let cases: [Case] = [
        Case(name: "no authorization", jwt: false, status: 403, reason: "MissingProviderToken"),
        Case(name: "unknown path", path: "/1/apps/\(Fixtures.bundleID)/channel", status: 404, reason: "BadPath"),
        Case(name: "the push path", path: "/3/device/" + Fixtures.token, status: 404, reason: "BadPath"),
        Case(name: "PUT", method: "PUT", status: 405, reason: "MethodNotAllowed"),
        Case(name: "POST all-channels", path: "/1/apps/\(Fixtures.bundleID)/all-channels", status: 405, reason: "MethodNotAllowed"),
        Case(name: "another app", path: "/1/apps/com.other.app/channels", status: 400, reason: "TopicDisallowed"),
        Case(name: "create without body", body: nil, status: 400, reason: "PayloadEmpty"),
        Case(name: "create without push-type", body: #"{"message-storage-policy":0}"#, status: 400, reason: "MissingPushType"),
        Case(name: "create for alerts", body: #"{"message-storage-policy":0,"push-type":"alert"}"#, status: 400, reason: "InvalidPushType"),
        Case(name: "storage policy 2", body: #"{"message-storage-policy":2,"push-type":"LiveActivity"}"#, status: 400, reason: "BadMessageStoragePolicy"),
        Case(name: "read without channel id", method: "GET", body: nil, status: 400, reason: "MissingChannelId"),
        Case(name: "delete of an unknown channel", method: "DELETE", channelID: "bm9uZQ==", body: nil, status: 400, reason: "ChannelNotRegistered"),
    ]

    @Test("invalid management request → status and reason", arguments: cases)
    func invalid(_ c: Case) async throws {
        try await withMock { server, _ async throws in
            let port = try #require(server.managementPort)
            var request = Self.request(c.method, c.path, jwt: try Fixtures.jwt(), channelID: c.channelID, body: c.body)
            if !c.jwt { request.set("authorization", nil) }
            let response = try Curl.one(port: port, request)
            #expect(response.status == c.status)
            #expect(response.reason == c.reason, "body: \(response.body)")
            #expect(server.channels().isEmpty)
            #expect(server.stats().byReason[c.reason] == 1)
        }
    }

    @Test("the 10 001st channel of an app is refused CannotCreateChannelConfig; deleting one makes room")
    func channelLimit() async throws {
        try await withMock { server, _ async throws in
            let port = try #require(server.managementPort)
            for _ in 0..<10_000 { try #require(server.createChannel(bundleID: Fixtures.bundleID) != nil) }
            #expect(server.createChannel(bundleID: Fixtures.bundleID) == nil)
            let jwt = try Fixtures.jwt()
            let refused = try Curl.one(port: port, Self.request("POST", Self.channels, jwt: jwt, body: Self.create))
            #expect(refused.status == 400)
            #expect(refused.reason == "CannotCreateChannelConfig")
            #expect(server.deleteChannel(id: server.channels()[0].id))
            #expect(try Curl.one(port: port, Self.request("POST", Self.channels, jwt: jwt, body: Self.create)).status == 201)
        }
    }

    @Test("an injected error answers the next management request only, and changes nothing")
    func injectedError() async throws {
        try await withMock { server, _ async throws in
            let port = try #require(server.managementPort)
            server.failNextChannelRequest(with: .status(500, reason: "InternalServerError"))
            let jwt = try Fixtures.jwt()
            let failed = try Curl.one(port: port, Self.request("POST", Self.channels, jwt: jwt, body: Self.create))
            #expect(failed.status == 500)
            #expect(failed.reason == "InternalServerError")
            #expect(server.channels().isEmpty)
            #expect(try Curl.one(port: port, Self.request("POST", Self.channels, jwt: jwt, body: Self.create)).status == 201)
            #expect(server.channels().count == 1)
        }
    }

    @Test("control endpoints: create, list, fail-next, delete")
    func controlEndpoints() async throws {
        try await withMock { server, port async throws in
            let create = TestRequest(method: "POST", path: "/_mock/channels/create", headers: [],
                                     body: Array(#"{"bundleID":"\#(Fixtures.bundleID)","storagePolicy":0}"#.utf8))
            let created = try Curl.one(port: port, create)
            #expect(created.status == 200)
            let id = try #require(created.json?["id"] as? String)
            #expect(server.channels().first?.storagePolicy == 0)
            let list = try Curl.one(port: port, TestRequest(method: "GET", path: "/_mock/channels", headers: [], body: nil))
            #expect(list.body.contains(id))
            let fail = TestRequest(method: "POST", path: "/_mock/channels/fail-next", headers: [],
                                   body: Array(#"{"kind":"status","status":429,"reason":"TooManyRequests"}"#.utf8))
            #expect(try Curl.one(port: port, fail).status == 200)
            let management = try #require(server.managementPort)
            let answered = try Curl.one(port: management, Self.request("GET", "/1/apps/\(Fixtures.bundleID)/all-channels", jwt: try Fixtures.jwt()))
            #expect(answered.status == 429)
            let delete = TestRequest(method: "POST", path: "/_mock/channels/delete", headers: [], body: Array(#"{"id":"\#(id)"}"#.utf8))
            #expect(try Curl.one(port: port, delete).status == 200)
            #expect(server.channels().isEmpty)
            #expect(try Curl.one(port: port, delete).reason == "ChannelNotRegistered")
        }
    }
}
