extension PushRequest {
    /// Why a claimed row cannot become a request: the worker ends it `failed` with ``reason``
    /// (`MissingTopic`, `InvalidPayload`) without sending anything.
    public struct Refusal: Error, Sendable, Hashable {
        /// The row's `last_reason`.
        public var reason: String
        /// What is wrong, for the log (never the payload or the token).
        public var message: String

        public init(reason: String, message: String) {
            self.reason = reason
            self.message = message
        }
    }

    /// The request for one claimed row, from its columns: pure, so that what goes on the wire
    /// for a row is decided (and table-tested) here, not in the worker's I/O.
    ///
    /// - APNs: `apns-topic` is the row's `topic`, else `defaultTopic` plus the push type's
    ///   suffix (``PushType/topic(explicit:defaultTopic:)``), else the row is refused
    ///   `MissingTopic`; `apns-priority` is the row's `priority`, else the push type's
    ///   ``PushType/defaultPriority``; the payload is sent byte for byte.
    /// - FCM: the body is the producer's message with the registration token spliced in
    ///   (``FCMMessageBody/build(payload:token:)``); a payload or token FCM cannot take is refused
    ///   `InvalidPayload` (the table's constraints keep such rows out; this guards rows written
    ///   around them). `push_type`, `topic`, `priority`, `collapse_id` and `apns_id` are APNs'.
    /// - APNs broadcast (`channelID` set): the request goes to the channel
    ///   (``APNsHeaders/channelID``); its bundle id is the row's `topic` without the
    ///   `.push-type.liveactivity` suffix, else `defaultTopic`, else the row is refused
    ///   `MissingTopic`; a push type other than `liveactivity` is refused `InvalidPushType`
    ///   (Apple takes no other on a channel); `collapse_id` is not sent (Apple lists no
    ///   `apns-collapse-id` for broadcasts).
    ///
    /// - Parameters:
    ///   - tag: the row id; `claim`: its lease; `startDeadline`: the claim's send-by time (monotonic).
    ///   - defaultTopic: the bundle id of the row's credential (its own topic, else the worker's); nil for none.
    ///   - expiration: `expires_at` in UNIX seconds.
    ///   - channelID: the `apns-channel-id` of the row's broadcast channel; nil for a row to a device.
    public static func make(tag: Int64, claim: Int64, startDeadline: Int64?, provider: Provider, deviceToken: String,
                            payload: [UInt8], pushType: PushType, topic: String?, defaultTopic: String?, priority: Int?,
                            collapseID: String?, apnsID: String, expiration: Int64?,
                            channelID: String? = nil) -> Result<PushRequest, Refusal> {
        switch provider {
        case .fcm:
            switch FCMMessageBody.build(payload: payload, token: deviceToken) {
            case .success(let body):
                return .success(PushRequest(tag: tag, deviceToken: deviceToken, payload: body, expiration: expiration,
                                            fields: .fcm, claim: claim, startDeadline: startDeadline))
            case .failure(let problem):
                return .failure(Refusal(reason: "InvalidPayload", message: "\(problem)"))
            }
        case .apns where channelID != nil:
            guard pushType == .liveactivity else {
                return .failure(Refusal(reason: "InvalidPushType", message: "a broadcast channel takes only push type liveactivity, not \(pushType.rawValue)"))
            }
            let explicit = topic.map { $0.hasSuffix(pushType.topicSuffix) ? String($0.dropLast(pushType.topicSuffix.count)) : $0 }
            guard let bundleID = explicit ?? defaultTopic else {
                return .failure(Refusal(reason: "MissingTopic",
                                        message: "no bundle id for the broadcast path: set PUSHQ_APNS_TOPIC, the credential's topic or the row's topic column"))
            }
            let headers = APNsHeaders(pushType: pushType, topic: bundleID, priority: priority ?? pushType.defaultPriority,
                                      collapseID: nil, apnsID: apnsID, channelID: channelID)
            return .success(PushRequest(tag: tag, deviceToken: deviceToken, payload: payload, expiration: expiration,
                                        fields: .apns(headers), claim: claim, startDeadline: startDeadline))
        case .apns:
            guard let topic = pushType.topic(explicit: topic, defaultTopic: defaultTopic) else {
                return .failure(Refusal(reason: "MissingTopic",
                                        message: "no topic: set PUSHQ_APNS_TOPIC, the credential's topic or the row's topic column"))
            }
            let headers = APNsHeaders(pushType: pushType, topic: topic, priority: priority ?? pushType.defaultPriority,
                                      collapseID: collapseID, apnsID: apnsID)
            return .success(PushRequest(tag: tag, deviceToken: deviceToken, payload: payload, expiration: expiration,
                                        fields: .apns(headers), claim: claim, startDeadline: startDeadline))
        }
    }
}
