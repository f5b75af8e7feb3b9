import Foundation
import MockPush
import Testing

/// Broadcasts (`POST /4/broadcasts/apps/<bundle>`) on the push port, checked in Apple's order.
@Suite("Broadcasts")
struct BroadcastTests {
    static let update = #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":2}}}"#

    /// A valid broadcast to `channelID`.
    static func request(jwt: String, channelID: String?, body: String = update) -> TestRequest {
        var headers = [("authorization", "bearer " + jwt), ("apns-push-type", "liveactivity"),
                       ("apns-expiration", "0"), ("apns-priority", "10")]
        if let channelID { headers.append(("apns-channel-id", channelID)) }
        return TestRequest(path: "/4/broadcasts/apps/" + Fixtures.bundleID, headers: headers, body: Array(body.utf8))
    }

    @Test("a valid broadcast is answered 200 with apns-request-id and recorded like any request")
    func valid() async throws {
        try await withMock { server, port async throws in
            let channel = try #require(server.createChannel(bundleID: Fixtures.bundleID, storagePolicy: 1))
            var request = Self.request(jwt: try Fixtures.jwt(), channelID: channel.id)
            let requestID = "0a9e1c66-7d1e-4b5c-9a43-1f0e2d3c4b5a"
            request.set("apns-request-id", requestID)
            request.set("apns-expiration", "1900000000")
            let response = try Curl.one(port: port, request)
            #expect(response.status == 200)
            #expect(response.headers["apns-request-id"] == requestID)
            #expect(response.headers["apns-id"] == nil)
            let recorded = try #require(server.requests().first)
            #expect(recorded.path == "/4/broadcasts/apps/" + Fixtures.bundleID)
            #expect(recorded.header("apns-channel-id") == channel.id)
            #expect(recorded.deviceToken == nil)
            #expect(recorded.bodyString == Self.update)
            #expect(server.stats().broadcasts == 1)
            #expect(server.stats().requests == 1)
        }
    }

    @Test("a rule set for a channel id answers its broadcasts")
    func ruleForChannel() async throws {
        try await withMock { server, port async throws in
            let channel = try #require(server.createChannel(bundleID: Fixtures.bundleID))
            server.setRule(forToken: channel.id, .always(.status(429, reason: "TooManyRequests")))
            let response = try Curl.one(port: port, Self.request(jwt: try Fixtures.jwt(), channelID: channel.id))
            #expect(response.status == 429)
            #expect(response.reason == "TooManyRequests")
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var remove: [String] = []
        var set: [String: String] = [:]
        var unknownChannel = false
        var noStorage = false
        var body: String = BroadcastTests.update
        var status: Int
        var reason: String
        var testDescription: String { "\(name) → \(status) \(reason)" }
    }

    /// One case per reason in Apple's order, each breaking that rule *and every later one*, so
    /// that the reason answered shows the order.
    static let cases: [Case] = [
        Case(name: "no channel id, nothing else right", remove: ["apns-channel-id", "apns-push-type", "apns-expiration"],
             set: ["apns-priority": "7"], unknownChannel: true, body: "", status: 400, reason: "MissingChannelId"),
        Case(name: "no push type", remove: ["apns-push-type", "apns-expiration"], set: ["apns-priority": "7"],
             unknownChannel: true, body: "", status: 400, reason: "MissingPushType"),
        Case(name: "push type alert", remove: ["apns-expiration"], set: ["apns-push-type": "alert", "apns-priority": "7"],
             unknownChannel: true, body: "", status: 400, reason: "InvalidPushType"),
        Case(name: "no expiration", remove: ["apns-expiration"], set: ["apns-priority": "7"], unknownChannel: true, body: "",
             status: 400, reason: "BadExpirationDate"),
        Case(name: "expiration not digits", set: ["apns-expiration": "soon"], status: 400, reason: "BadExpirationDate"),
        Case(name: "a stored expiration on a no-storage channel", set: ["apns-expiration": "1900000000"], noStorage: true,
             status: 400, reason: "BadExpirationDate"),
        Case(name: "priority 7", set: ["apns-priority": "7"], unknownChannel: true, body: "", status: 400, reason: "BadPriority"),
        Case(name: "unknown channel", unknownChannel: true, body: "", status: 400, reason: "ChannelNotRegistered"),
        Case(name: "empty payload", body: "", status: 400, reason: "PayloadEmpty"),
        Case(name: "5121-byte payload", body: #"{"aps":{},"x":""# + String(repeating: "v", count: 5121 - 17) + #""}"#,
             status: 413, reason: "PayloadTooLarge"),
        Case(name: "a start on a channel", body: #"{"aps":{"timestamp":1,"event":"start","attributes-type":"A","attributes":{},"content-state":{}}}"#,
             status: 400, reason: "MockInvalidLiveActivityPayload"),
        Case(name: "duplicated apns-priority", set: ["apns-priority": "10"], status: 400, reason: "DuplicateHeaders"),
        Case(name: "wrong bundle", set: [":path": "/4/broadcasts/apps/com.other.app"], status: 400, reason: "TopicDisallowed"),
    ]

    @Test("invalid broadcast → the first of Apple's reasons it breaks", arguments: cases)
    func invalid(_ c: Case) async throws {
        try await withMock { server, port async throws in
            let channel = try #require(server.createChannel(bundleID: Fixtures.bundleID, storagePolicy: c.noStorage ? 0 : 1))
            var request = Self.request(jwt: try Fixtures.jwt(), channelID: c.unknownChannel ? "bm9uZQ==" : channel.id, body: c.body)
            for (name, value) in c.set where name != ":path" { request.set(name, value) }
            if let path = c.set[":path"] { request.path = path }
            for name in c.remove { request.set(name, nil) }
            if c.reason == "DuplicateHeaders" { request.headers.append(("apns-priority", "5")) }
            if c.body.isEmpty { request.body = nil }
            let response = try Curl.one(port: port, request)
            #expect(response.status == c.status)
            #expect(response.reason == c.reason, "body: \(response.body)")
            #expect(response.headers["apns-request-id"].map(MockAPNsRules.isValidApnsID) == true)
            #expect(server.stats().byReason[c.reason] == 1)
        }
    }

    @Test("5120 bytes is the largest broadcast payload")
    func payloadAtLimit() async throws {
        try await withMock { server, port async throws in
            let channel = try #require(server.createChannel(bundleID: Fixtures.bundleID))
            let prefix = #"{"aps":{"timestamp":1,"event":"end"},"x":""#
            let body = prefix + String(repeating: "v", count: 5120 - prefix.utf8.count - 2) + #""}"#
            #expect(body.utf8.count == 5120)
            #expect(try Curl.one(port: port, Self.request(jwt: try Fixtures.jwt(), channelID: channel.id, body: body)).status == 200)
        }
    }
}
