import PushCore
import Testing

/// The pure row → request mapping (`PushRequest(row:defaultTopic:sendBy:)`): what goes on the wire for a claimed row.
@Suite struct PushRequestMappingTests {
    /// A claimed row's columns, with the defaults of an APNs alert row.
    struct Row: Sendable, CustomStringConvertible {
        var label: String
        var provider: Provider = .apns
        var deviceToken = String(repeating: "a", count: 64)
        var payload = #"{"aps":{"alert":"hi"}}"#
        var pushType: PushType = .alert
        var topic: String? = nil
        var defaultTopic: String? = "com.example.app"
        var priority: Int? = nil
        var collapseID: String? = nil
        var expiration: Int64? = nil
        var description: String { label }

        var claimed: ClaimedNotification {
            ClaimedNotification(id: 7, provider: provider, deviceToken: deviceToken, payload: Array(payload.utf8), topic: topic,
                                pushType: pushType, priority: priority, expiresAt: expiration, collapseID: collapseID,
                                apnsID: "00000000-0000-4000-8000-000000000007", lease: 1_700_000_000_000_001)
        }

        func request() -> Result<PushRequest, PushRequest.Refusal> {
            Result { () throws(PushRequest.Refusal) in try PushRequest(row: claimed, defaultTopic: defaultTopic, sendBy: 123_456) }
        }
    }

    /// APNs rows → (apns-topic, apns-priority) sent.
    static let apnsRows: [(Row, String, Int)] = [
        (Row(label: "alert, no topic: the credential's bundle id"), "com.example.app", 10),
        (Row(label: "background, no priority: 5", pushType: .background), "com.example.app", 5),
        (Row(label: "background with priority 1", pushType: .background, priority: 1), "com.example.app", 1),
        (Row(label: "voip: suffix .voip", pushType: .voip), "com.example.app.voip", 10),
        (Row(label: "liveactivity: its suffix", pushType: .liveactivity), "com.example.app.push-type.liveactivity", 10),
        (Row(label: "complication: its suffix", pushType: .complication), "com.example.app.complication", 10),
        (Row(label: "mdm: no suffix", pushType: .mdm), "com.example.app", 10),
        (Row(label: "the row's topic, verbatim, without suffix", pushType: .voip, topic: "com.other.voip-own"), "com.other.voip-own", 10),
        (Row(label: "the row's topic without any default", topic: "com.other", defaultTopic: nil), "com.other", 10),
        (Row(label: "explicit priority 5 on an alert", priority: 5), "com.example.app", 5),
    ]

    @Test(arguments: apnsRows)
    func apnsTopicAndPriority(row: Row, topic: String, priority: Int) throws {
        let request = try row.request().get()
        guard case .apns(let headers) = request.fields else {
            Issue.record("not an APNs request: \(request.fields)")
            return
        }
        #expect(headers.topic == topic)
        #expect(headers.priority == priority)
        #expect(headers.pushType == row.pushType)
        #expect(request.payload == Array(row.payload.utf8))  // byte for byte
    }

    @Test func apnsCarriesTheRowAndTheClaim() throws {
        var row = Row(label: "all columns")
        row.collapseID = "news"
        row.expiration = 1_900_000_000
        let request = try row.request().get()
        #expect(request.tag == 7 && request.claim == 1_700_000_000_000_001 && request.startDeadline == 123_456)
        #expect(request.deviceToken == row.deviceToken && request.expiration == 1_900_000_000 && request.provider == .apns)
        #expect(request.fields == .apns(APNsHeaders(pushType: .alert, topic: "com.example.app", priority: 10, collapseID: "news",
                                                    apnsID: "00000000-0000-4000-8000-000000000007")))
    }

    @Test func apnsWithoutAnyTopicIsRefusedMissingTopic() {
        let refused = Row(label: "no topic anywhere", defaultTopic: nil).request()
        guard case .failure(let refusal) = refused else {
            Issue.record("sent: \(refused)")
            return
        }
        #expect(refusal.reason == "MissingTopic")
        #expect(refusal.message.contains("PUSHQ_APNS_TOPIC"))
    }

    @Test func theRequestCarriesTheRowsLaneAndRank() throws {
        var row = Row(label: "a campaign row").claimed
        row.lane = "campaign"
        row.rank = 200
        let request = try PushRequest(row: row, defaultTopic: "com.example.app", sendBy: nil)
        #expect(request.lane == "campaign" && request.rank == 200 && request.startDeadline == nil)
        // A rank beyond Int32 (the column is an integer, the sender's field 32 bits) is clamped, not trapped on.
        row.rank = Int.max
        #expect(try PushRequest(row: row, defaultTopic: "com.example.app", sendBy: nil).rank == Int32.max)
    }

    static let fcmToken = "fcm:APA91b_" + String(repeating: "z", count: 100)

    @Test func fcmBodyIsTheMessageWithTheTokenSplicedIn() throws {
        var row = Row(label: "fcm", provider: .fcm, deviceToken: Self.fcmToken, payload: #"{"data":{"k":"v"}}"#)
        // APNs' columns are placeholders on an FCM row: none of them reaches the request.
        row.topic = "ignored"
        row.priority = 5
        row.collapseID = "ignored"
        row.expiration = 1_900_000_000
        let request = try row.request().get()
        #expect(request.fields == .fcm && request.provider == .fcm)
        #expect(String(decoding: request.payload, as: UTF8.self) == #"{"message":{"token":""# + Self.fcmToken + #"","data":{"k":"v"}}}"#)
        #expect(request.deviceToken == Self.fcmToken && request.expiration == 1_900_000_000 && request.tag == 7)
    }

    /// FCM rows the mapping refuses (the table's constraints keep them out; rows written around them end failed).
    static let fcmRefused: [Row] = [
        Row(label: "a token FCM cannot take", provider: .fcm, deviceToken: "has space", payload: #"{"data":{}}"#),
        Row(label: "a payload that is not JSON", provider: .fcm, deviceToken: fcmToken, payload: #"{"data":"#),
        Row(label: "a payload naming its own target", provider: .fcm, deviceToken: fcmToken, payload: #"{"topic":"news"}"#),
    ]

    @Test(arguments: fcmRefused)
    func fcmRefusalsAreInvalidPayload(row: Row) {
        guard case .failure(let refusal) = row.request() else {
            Issue.record("sent")
            return
        }
        #expect(refusal.reason == "InvalidPayload")
        #expect(!refusal.message.isEmpty)
    }
}
