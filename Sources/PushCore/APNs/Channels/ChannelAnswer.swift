/// What APNs' channel-management API answered to one ``ChannelOperation``: its headers and
/// the parts of its JSON body pushq reads.
public struct ChannelAnswer: Sendable, Hashable {
    /// `:status`.
    public var status: Int
    /// The `apns-request-id` response header (the request's own, echoed, or one APNs made).
    public var requestID: String?
    /// The `apns-channel-id` response header: a create's new channel id.
    public var channelID: String?
    /// `reason` of an error body.
    public var reason: APNsReason?
    /// A read's `message-storage-policy`.
    public var storagePolicy: ChannelStoragePolicy?
    /// A read's `push-type` (Apple: `LiveActivity`).
    public var pushType: String?
    /// A list's `channels`: the ids of the app's channels in the environment.
    public var channels: [String]?

    public init(status: Int, requestID: String? = nil, channelID: String? = nil, reason: APNsReason? = nil,
                storagePolicy: ChannelStoragePolicy? = nil, pushType: String? = nil, channels: [String]? = nil) {
        self.status = status
        self.requestID = requestID
        self.channelID = channelID
        self.reason = reason
        self.storagePolicy = storagePolicy
        self.pushType = pushType
        self.channels = channels
    }

    /// The answer from its status, the two `apns-*` headers (nil when absent or empty) and its
    /// body: `reason` of an error body; `message-storage-policy` and `push-type` of a read;
    /// `channels` of a list. A body that is not JSON, or lacks what its operation reads, leaves
    /// those fields nil (``ChannelOutcome/classify(_:operation:)`` then decides).
    public static func parse(status: Int, requestID: String?, channelID: String?, body: [UInt8]) -> ChannelAnswer {
        var answer = ChannelAnswer(status: status, requestID: requestID?.nonEmpty, channelID: channelID?.nonEmpty)
        guard !body.isEmpty, let json = JSONValue.parse(body) else { return answer }
        if (200...299).contains(status) {
            answer.storagePolicy = json["message-storage-policy"]?.int64Value.flatMap { ChannelStoragePolicy(rawValue: Int($0)) }
            answer.pushType = json["push-type"]?.stringValue
            answer.channels = json["channels"]?.arrayValue.map { $0.compactMap(\.stringValue) }
        } else {
            answer.reason = json["reason"]?.stringValue.map(APNsReason.init)
        }
        return answer
    }
}

private extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
