import NIOCore

/// Broadcasts on the push port: `POST /4/broadcasts/apps/<bundle id>` with `apns-channel-id`.
///
/// Apple, "Sending broadcast push notification requests to APNs": a broadcast goes to the same
/// host as a push to a device, authenticates the same way, and names its channel in
/// `apns-channel-id`; its push type is `liveactivity` only; its payload is at most 5 KB; the
/// answer carries `apns-request-id`. The checks run in the order Apple's error table lists
/// them (``MockBroadcastRules``).
extension MockConnectionHandler {
    static func isBroadcastPath(_ head: RequestHead) -> Bool {
        head.pathOnly.utf8.starts(with: "/4/broadcasts/".utf8)
    }

    /// Path, authentication, then ``MockBroadcastRules/check(_:body:channel:)`` against the
    /// channel store. The verdict's token is the channel id: token rules
    /// (``MockPushServer/setRule(forToken:_:)``) apply to it.
    func validateBroadcast(head: RequestHead, body: ByteBuffer?, context: ChannelHandlerContext) -> Verdict {
        var verdict = Verdict()
        guard head.method == "POST" else { verdict.reason = .methodNotAllowed; return verdict }
        let path = head.pathOnly.utf8
        let prefix = "/4/broadcasts/apps/".utf8
        let bundle = path.starts(with: prefix) ? Substring(path.dropFirst(prefix.count)) : ""
        guard !bundle.isEmpty, !bundle.contains("/") else { verdict.reason = .badPath; return verdict }
        guard authenticate(head: head, context: context, into: &verdict) else { return verdict }
        guard core.configuration.bundleIDs.contains(String(bundle)) else { verdict.reason = .topicDisallowed; return verdict }
        let bytes = body.map { Array($0.readableBytesView) } ?? []
        let channel = head.channelID.flatMap { id in core.state.withLock { $0.channels.channel(id: id, bundleID: String(bundle)) } }
        verdict.reason = MockBroadcastRules.check(head, body: bytes, channel: channel)
        verdict.deviceToken = Substring(head.channelID ?? "")
        return verdict
    }
}

/// Apple's checks on a broadcast, in the order of its error table for broadcasts:
/// `MissingChannelId`, `MissingPushType`, `InvalidPushType`, `BadExpirationDate`,
/// `BadPriority`, `ChannelNotRegistered`, `PayloadEmpty`, then 413 `PayloadTooLarge` over
/// 5 KB, then (the mock's own) the Live Activity payload (``MockLiveActivityRules``).
///
/// Where Apple's documentation is silent, the mock's reading: `apns-expiration` is required
/// (Apple lists it among a broadcast's headers) and must be `0` on a channel that stores no
/// message (checked at `BadExpirationDate`'s place when the channel exists); `apns-priority`
/// may be absent, else 1, 5 or 10; a body that is not a JSON object is `PayloadEmpty`, as for
/// pushes; duplicated headers are `DuplicateHeaders`, checked first.
public enum MockBroadcastRules {
    /// The largest broadcast payload, bytes: 5 KB.
    public static let maxPayloadBytes = 5120

    static func check(_ head: RequestHead, body: [UInt8], channel: MockChannel?) -> MockAPNsReason? {
        if head.hasDuplicates { return .duplicateHeaders }
        guard let channelID = head.channelID, !channelID.isEmpty else { return .missingChannelId }
        guard let pushType = head.pushType else { return .missingPushType }
        guard pushType == MockAPNsPushType.liveactivity.rawValue else { return .invalidPushType }
        guard let expiration = head.expiration, MockAPNsRules.isValidExpiration(expiration) else { return .badExpirationDate }
        if channel?.storagePolicy == 0, expiration != "0" { return .badExpirationDate }
        if let priority = head.priority, !["1", "5", "10"].contains(priority) { return .badPriority }
        guard channel != nil else { return .channelNotRegistered }
        if let problem = RequestValidator.checkBody(body, maxBytes: maxPayloadBytes) { return problem }
        if MockLiveActivityRules.problem(body, broadcast: true) != nil { return .invalidLiveActivityPayload }
        return nil
    }
}
