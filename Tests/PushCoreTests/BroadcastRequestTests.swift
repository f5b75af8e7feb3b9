import PushCore
import Testing

/// A row naming a broadcast channel: the request (`PushRequest(row:defaultTopic:sendBy:)`), its header
/// checks and what its answers mean.
@Suite struct BroadcastRequestTests {
    static let update = Array(#"{"aps":{"timestamp":1,"event":"update","content-state":{}}}"#.utf8)

    func make(pushType: PushType = .liveactivity, topic: String? = nil, defaultTopic: String? = "com.example.app",
              priority: Int? = nil, channelID: String = "c29tZUNoYW5uZWw=",
              storagePolicy: ChannelStoragePolicy = .mostRecentMessageStored) -> Result<PushRequest, PushRequest.Refusal> {
        let row = ClaimedNotification(id: 9, deviceToken: "", payload: Self.update, topic: topic, pushType: pushType, priority: priority,
                                      expiresAt: 1_900_000_000, collapseID: "c", apnsID: "00000000-0000-4000-8000-000000000009",
                                      lease: 2, channelID: channelID, channelStoragePolicy: storagePolicy.rawValue)
        return Result { () throws(PushRequest.Refusal) in try PushRequest(row: row, defaultTopic: defaultTopic, sendBy: nil) }
    }

    /// (row's topic, credential's bundle id) → the bundle id of the path.
    static let bundles: [(String?, String?, String)] = [
        (nil, "com.example.app", "com.example.app"),
        ("com.example.app.push-type.liveactivity", nil, "com.example.app"),
        ("com.other.app", "com.example.app", "com.other.app"),
    ]

    @Test(arguments: bundles)
    func bundleOfThePath(topic: String?, defaultTopic: String?, bundle: String) throws {
        let request = try make(topic: topic, defaultTopic: defaultTopic).get()
        #expect(request.fields == .apns(APNsHeaders(pushType: .liveactivity, topic: bundle, priority: 10, collapseID: nil,
                                                    apnsID: "00000000-0000-4000-8000-000000000009", channelID: "c29tZUNoYW5uZWw=")))
        #expect(request.expiration == 1_900_000_000)
        #expect(request.payload == Self.update)
    }

    /// A channel that stores no message takes only `apns-expiration: 0`: the row's `expires_at`
    /// is not sent (a request without an expiration carries 0); one that stores the newest keeps it.
    @Test func aChannelThatStoresNoMessageGetsNoExpiration() throws {
        #expect(try make(storagePolicy: .noMessageStored).get().expiration == nil)
        #expect(try make(storagePolicy: .mostRecentMessageStored).get().expiration == 1_900_000_000)
    }

    @Test func priorityIsTheRowsOrTen() throws {
        guard case .apns(let headers) = try make(priority: 5).get().fields else { Issue.record("not APNs"); return }
        #expect(headers.priority == 5)
        #expect(headers.isBroadcast)
    }

    @Test func refusals() {
        guard case .failure(let push) = make(pushType: .alert) else { Issue.record("an alert went to a channel"); return }
        #expect(push.reason == "InvalidPushType")
        guard case .failure(let topic) = make(defaultTopic: nil) else { Issue.record("no bundle id"); return }
        #expect(topic.reason == "MissingTopic")
    }

    /// Header problems of a broadcast: the channel id and the bundle id, not the device token.
    static let problems: [(String, String, Bool)] = [
        ("c29tZUNoYW5uZWw=", "com.example.app", false),
        ("", "com.example.app", true),
        ("a\r\nb", "com.example.app", true),
        (String(repeating: "c", count: 257), "com.example.app", true),
        ("c29tZUNoYW5uZWw=", "com.example/app", true),
        ("c29tZUNoYW5uZWw=", "com example", true),
    ]

    @Test(arguments: problems)
    func headerProblems(channelID: String, bundle: String, refused: Bool) {
        let headers = APNsHeaders(pushType: .liveactivity, topic: bundle, priority: 10, apnsID: "x", channelID: channelID)
        #expect((headers.problem(deviceToken: "") != nil) == refused)
    }

    @Test func answersOfABroadcast() throws {
        let request = try make().get()
        var gone = PushResponse(request: request, status: 410, answer: .apns(APNsAnswer(reason: .unregistered, timestamp: 5)))
        #expect(gone.outcome == .fail(.unregistered), "no token to invalidate")
        gone.answer = .apns(APNsAnswer(reason: .channelNotRegistered, requestID: "r"))
        gone.status = 400
        #expect(gone.outcome == .fail(.channelNotRegistered))
        #expect(gone.reasonText == "ChannelNotRegistered")
        let sent = PushResponse(request: request, status: 200, answer: .apns(APNsAnswer(uniqueID: "u", requestID: "r")))
        #expect(sent.outcome == .sent)
        #expect(sent.apns?.requestID == "r")
    }
}
