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

    /// The request for one claimed row: pure, so that what goes on the wire for a row is decided
    /// (and table-tested) here, not in the worker's I/O.
    ///
    /// - APNs: `apns-topic` is the row's `topic`, else `defaultTopic` plus the push type's
    ///   suffix (``PushType/topic(explicit:defaultTopic:)``), else the row is refused
    ///   `MissingTopic`; `apns-priority` is the row's `priority`, else the push type's
    ///   ``PushType/defaultPriority``; the payload is sent byte for byte.
    /// - FCM: the body is the producer's message with the registration token spliced in
    ///   (``FCMMessageBody/build(payload:token:)``); a payload or token FCM cannot take is refused
    ///   `InvalidPayload` (the table's constraints keep such rows out; this guards rows written
    ///   around them). `push_type`, `topic`, `priority`, `collapse_id` and `apns_id` are APNs'.
    /// - Web Push: the endpoint is the row's `device_token`, checked for form
    ///   (``WebPushEndpoint/parse(_:)``, else `EndpointNotAllowed`); the keys its `webpush_keys`
    ///   (``WebPushFields/keys(json:)``, else `InvalidSubscriptionKeys`); `Urgency` from
    ///   `priority` (else `InvalidPriority`), `Topic` its `collapse_id` (else `InvalidTopic`); the
    ///   payload, at most 3 993 bytes (else `PayloadTooLarge`), is the plaintext the sender
    ///   encrypts byte for byte. `TTL` is computed when the request goes out.
    /// - APNs broadcast (``ClaimedNotification/channelID`` set): the request goes to the channel
    ///   (``APNsHeaders/channelID``); its bundle id is the row's `topic` without the
    ///   `.push-type.liveactivity` suffix, else `defaultTopic`, else the row is refused
    ///   `MissingTopic`; a push type other than `liveactivity` is refused `InvalidPushType`
    ///   (Apple takes no other on a channel); `collapse_id` is not sent (Apple lists no
    ///   `apns-collapse-id` for broadcasts). A channel that stores no message
    ///   (``ChannelStoragePolicy/noMessageStored``) takes only `apns-expiration: 0`, which a
    ///   request without an expiration carries: its `expires_at` is not sent (the claim already
    ///   ended the row if it had passed).
    ///
    /// The request carries the row's id (``tag``), its lease (``claim``), its lane and its lane's rank.
    ///
    /// - Parameters:
    ///   - row: the claimed row.
    ///   - defaultTopic: the bundle id of the row's credential (its own topic, else the worker's); nil for none.
    ///   - sendBy: the claim's send-by time (monotonic, ``startDeadline``); nil for none.
    /// - Throws: ``Refusal`` when the row cannot be sent as it is.
    public init(row: ClaimedNotification, defaultTopic: String?, sendBy: Int64?) throws(Refusal) {
        let fields: ProviderFields
        var payload = row.payload
        var expiration = row.expiresAt
        let pushType = row.pushType
        switch row.provider {
        case .fcm:
            switch FCMMessageBody.build(payload: row.payload, token: row.deviceToken) {
            case .success(let body): payload = body
            case .failure(let problem): throw Refusal(reason: "InvalidPayload", message: "\(problem)")
            }
            fields = .fcm
        case .webpush:
            let endpoint: WebPushEndpoint
            switch WebPushEndpoint.parse(row.deviceToken) {
            case .success(let e): endpoint = e
            case .failure(let refusal): throw Refusal(reason: refusal.reason, message: refusal.message)
            }
            let keys = try WebPushFields.keys(json: row.webpushKeys)
            if let refusal = WebPushHeaders.payloadRefusal(byteCount: row.payload.count) { throw refusal }
            let headers: WebPushHeaders
            switch WebPushHeaders.make(expiresAt: nil, now: 0, priority: row.priority, collapseID: row.collapseID) {
            case .success(let h): headers = h
            case .failure(let refusal): throw refusal
            }
            fields = .webPush(WebPushFields(endpoint: endpoint, keys: keys, urgency: headers.urgency, topic: headers.topic))
        case .apns where row.channelID != nil:
            guard pushType == .liveactivity else {
                throw Refusal(reason: "InvalidPushType", message: "a broadcast channel takes only push type liveactivity, not \(pushType.rawValue)")
            }
            let explicit = row.topic.map { $0.hasSuffix(pushType.topicSuffix) ? String($0.dropLast(pushType.topicSuffix.count)) : $0 }
            guard let bundleID = explicit ?? defaultTopic else {
                throw Refusal(reason: "MissingTopic",
                              message: "no bundle id for the broadcast path: set PUSHQ_APNS_TOPIC, the credential's topic or the row's topic column")
            }
            if row.channelStoragePolicy == ChannelStoragePolicy.noMessageStored.rawValue { expiration = nil }
            fields = .apns(APNsHeaders(pushType: pushType, topic: bundleID, priority: row.priority ?? pushType.defaultPriority,
                                       collapseID: nil, apnsID: row.apnsID, channelID: row.channelID))
        case .apns:
            guard let topic = pushType.topic(explicit: row.topic, defaultTopic: defaultTopic) else {
                throw Refusal(reason: "MissingTopic",
                              message: "no topic: set PUSHQ_APNS_TOPIC, the credential's topic or the row's topic column")
            }
            fields = .apns(APNsHeaders(pushType: pushType, topic: topic, priority: row.priority ?? pushType.defaultPriority,
                                       collapseID: row.collapseID, apnsID: row.apnsID))
        }
        self.init(tag: row.id, deviceToken: row.deviceToken, payload: payload, expiration: expiration, fields: fields,
                  claim: row.lease, startDeadline: sendBy)
        rank = Int32(clamping: row.rank)
        lane = row.lane
        tenant = row.tenant
    }
}
