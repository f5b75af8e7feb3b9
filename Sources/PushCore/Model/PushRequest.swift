/// One notification to send: everything that goes into its HTTP/2 request, whatever the provider.
///
/// Made from a claimed row by ``PushRequest/init(row:defaultTopic:sendBy:)``
/// and handed to the sender of the row's endpoint (`PushTransport.PushSender`), which sends
/// these fields as they are, except for what would break the request itself (see
/// ``APNsHeaders/problem(deviceToken:)``).
public struct PushRequest: Sendable {
    /// The caller's id for this notification (the row id); copied to the response.
    public var tag: Int64
    /// The caller's id for this claim of the row (its lease); copied to the response, so that an
    /// answer is matched to the claim that sent it when the same row is claimed again.
    public var claim: Int64
    /// A monotonic time (`PushTransport.monotonicNanoseconds()`) after which the request must
    /// not start: the caller's lease on the row ends soon after. A request still waiting for a
    /// stream then comes back unsent, ``PushResponse/deadlinePassed``. Nil for no deadline.
    public var startDeadline: Int64?
    /// The device's address at its provider: an APNs device token (hex, sent in the path), an
    /// FCM registration token (sent inside the body, kept here for the caller's records) or a
    /// Web Push subscription's endpoint URL (also in ``WebPushFields/endpoint``).
    public var deviceToken: String
    /// The exact request body, byte for byte: the producer's JSON for APNs, the whole
    /// `{"message":{"token":…,…}}` for FCM; for Web Push the plaintext the sender encrypts.
    public var payload: [UInt8]
    /// `expires_at` in UNIX seconds: never sent once it has passed (by the database's clock);
    /// APNs also gets it as `apns-expiration`. Nil for none.
    public var expiration: Int64?
    /// What only this request's provider sends: its headers.
    public var fields: ProviderFields
    /// The rank of the row's lane (`pushq.lanes.rank`): while requests wait for a stream, the
    /// sender starts those of the lowest rank first, and those of one rank in the order they
    /// came. ``defaultRank`` unless the caller sets it.
    public var rank: Int32 = PushRequest.defaultRank
    /// The row's lane (`pushq.notifications.lane`): a sender does not start a request of a lane
    /// it was told is paused (``LaneStops``); it hands it back, ``PushResponse/laneStopped``.
    public var lane: String = LaneStops.defaultLane
    /// The row's `tenant` (`pushq.notifications.tenant`; nil: none, one tenant of its own): while
    /// requests wait for a stream, a sender takes those of one rank's lanes and tenants in turn.
    public var tenant: String?
    /// Times the sender resent this request itself, at once (FCM: after a 401 with a new access token).
    package var resends = 0

    public init(tag: Int64, deviceToken: String, payload: [UInt8], expiration: Int64? = nil, fields: ProviderFields,
                claim: Int64 = 0, startDeadline: Int64? = nil) {
        self.tag = tag
        self.claim = claim
        self.startDeadline = startDeadline
        self.deviceToken = deviceToken
        self.payload = payload
        self.expiration = expiration
        self.fields = fields
    }

    /// The provider this request goes to.
    public var provider: Provider { fields.provider }

    /// The rank of the `default` lane, and of every lane that has no row in `pushq.lanes`.
    public static let defaultRank: Int32 = 100
}

/// What only one provider's requests carry, beside the fields every ``PushRequest`` has.
///
/// One case per ``Provider``: a sender refuses a request of another provider's.
public enum ProviderFields: Sendable, Hashable {
    /// APNs' `apns-*` headers.
    case apns(APNsHeaders)
    /// FCM HTTP v1: nothing beside the body (the message, its target token included); the URL
    /// and the headers are the same for every message.
    case fcm
    /// Web Push: the subscription (endpoint and keys) and the row's `Urgency` and `Topic`; the
    /// sender encrypts the body for the keys and posts it to the endpoint.
    case webPush(WebPushFields)

    /// The provider these fields are for.
    public var provider: Provider {
        switch self {
        case .apns: return .apns
        case .fcm: return .fcm
        case .webPush: return .webpush
        }
    }
}
