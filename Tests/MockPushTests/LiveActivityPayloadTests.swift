import MockPush
import Testing

/// What a Live Activity payload needs per event (``MockLiveActivityRules``), pure and over the wire.
@Suite("Live Activity payloads")
struct LiveActivityPayloadTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var aps: String
        var broadcast = false
        var valid: Bool
        var testDescription: String { "\(name): \(valid ? "valid" : "refused")" }
    }

    static let cases: [Case] = [
        Case(name: "start", aps: #""timestamp":1,"event":"start","attributes-type":"Match","attributes":{"home":"A"},"content-state":{"score":0},"alert":{"title":"t"}"#, valid: true),
        Case(name: "start with input-push-token", aps: #""timestamp":1,"event":"start","attributes-type":"M","attributes":{},"content-state":{},"input-push-token":1"#, valid: true),
        Case(name: "start without attributes-type", aps: #""timestamp":1,"event":"start","attributes":{},"content-state":{}"#, valid: false),
        Case(name: "start without attributes", aps: #""timestamp":1,"event":"start","attributes-type":"M","content-state":{}"#, valid: false),
        Case(name: "start without content-state", aps: #""timestamp":1,"event":"start","attributes-type":"M","attributes":{}"#, valid: false),
        Case(name: "update", aps: #""timestamp":1,"event":"update","content-state":{"s":1},"stale-date":2"#, valid: true),
        Case(name: "update without content-state", aps: #""timestamp":1,"event":"update""#, valid: false),
        Case(name: "update without timestamp", aps: #""event":"update","content-state":{}"#, valid: false),
        Case(name: "timestamp as text", aps: #""timestamp":"now","event":"update","content-state":{}"#, valid: false),
        Case(name: "stale-date as text", aps: #""timestamp":1,"event":"update","content-state":{},"stale-date":"later""#, valid: false),
        Case(name: "end alone", aps: #""timestamp":1,"event":"end""#, valid: true),
        Case(name: "end with a final state and dismissal-date", aps: #""timestamp":1,"event":"end","content-state":{"s":9},"dismissal-date":5"#, valid: true),
        Case(name: "end with content-state not a dictionary", aps: #""timestamp":1,"event":"end","content-state":3"#, valid: false),
        Case(name: "unknown event", aps: #""timestamp":1,"event":"pause","content-state":{}"#, valid: false),
        Case(name: "no event", aps: #""timestamp":1,"content-state":{}"#, valid: false),
        Case(name: "start on a channel", aps: #""timestamp":1,"event":"start","attributes-type":"M","attributes":{},"content-state":{}"#, broadcast: true, valid: false),
        Case(name: "update on a channel", aps: #""timestamp":1,"event":"update","content-state":{}"#, broadcast: true, valid: true),
    ]

    @Test("the keys Apple requires per event", arguments: cases)
    func rules(_ c: Case) {
        let body = Array(#"{"aps":{\#(c.aps)}}"#.utf8)
        #expect((MockLiveActivityRules.problem(body, broadcast: c.broadcast) == nil) == c.valid)
    }

    @Test("a liveactivity push to a device without its event's keys is refused; with them it is sent")
    func overTheWire() async throws {
        try await withMock { server, port async throws in
            var request = TestRequest.valid(jwt: try Fixtures.jwt())
            request.set("apns-push-type", "liveactivity")
            request.set("apns-topic", Fixtures.bundleID + ".push-type.liveactivity")
            request.body = Array(#"{"aps":{"timestamp":1,"event":"update"}}"#.utf8)
            let refused = try Curl.one(port: port, request)
            #expect(refused.status == 400)
            #expect(refused.reason == "MockInvalidLiveActivityPayload")
            request.body = Array(#"{"aps":{"timestamp":1,"event":"update","content-state":{"score":1}}}"#.utf8)
            #expect(try Curl.one(port: port, request).status == 200)
            #expect(server.stats().byStatus[200] == 1)
        }
    }
}
