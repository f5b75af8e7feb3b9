/// A row the worker claimed: what the claim did with it and what sending it needs.
///
/// PushStore decodes each row of a claim into one (`PGConnection.claim`); the worker holds it
/// and maps it to its request with ``PushRequest/init(row:defaultTopic:sendBy:)``.
public struct ClaimedNotification: Sendable, Equatable {
    /// What the claim did with the row.
    public enum Verdict: Sendable, Hashable {
        /// Now `sending`, held by this worker: send it.
        case send
        /// `expires_at` had passed: now `expired` (final). Not to be sent.
        case expired
        /// Its token is invalid in `pushq.devices`: now `failed`/`TokenInvalidated` (final). Not to be sent.
        case tokenInvalidated
        /// Its attempts were used up (a lapsed lease of its last attempt, or `max_attempts`
        /// lowered): now `failed` (final), never past `max_attempts`. Not to be sent.
        case exhausted
        /// Its token is throttled (429): back to `retrying` until the throttle ends, attempt
        /// not counted. Not to be sent now.
        case throttled
        /// Its lane caps sends per recipient (`pushq.lanes.recipient_cap`, `over_cap = 'skip'`) and
        /// its recipient had reached the cap: now `cancelled`/`FrequencyCapped` (final), attempts
        /// untouched. Not to be sent.
        case capped
        /// Now `sending`, held by this worker, but its `provider`, or an APNs row's `push_type` or
        /// `environment`, is one this worker does not know (a value added to the schema after this
        /// version, or a check constraint dropped), or a broadcast's channel row is gone: not to be
        /// sent; the worker ends it `failed`/`InvalidRow` like an answer. ``provider``,
        /// ``pushType`` and ``environment`` are then placeholders (`apns`, `alert`, the default).
        /// An FCM row is never unreadable for its `push_type` or `environment`, which it does not use.
        case unreadable
    }

    public var id: Int64
    public var verdict: Verdict
    /// `provider`: which service sends the row.
    public var provider: Provider
    public var deviceToken: String
    /// The stored JSON, byte for byte (empty unless `verdict == .send`).
    public var payload: [UInt8]
    public var topic: String?
    public var pushType: PushType
    public var priority: Int?
    /// `expires_at` in UNIX seconds; nil for none (or 'infinity').
    public var expiresAt: Int64?
    public var collapseID: String?
    /// `apns_id`, lower-case canonical text.
    public var apnsID: String
    /// `environment`, or the worker's default; `.production` (a placeholder) for FCM rows.
    public var environment: APNsEnvironment
    /// `credential`, or `"default"` (a name of the row's provider).
    public var credential: String
    /// `attempts` including the one this claim started.
    public var attempts: Int
    /// `locked_until` of this claim in microseconds since the epoch (0 unless held): with
    /// ``attempts`` the fence of its write-back, unique to this claim of the row.
    public var lease: Int64
    public var maxAttempts: Int
    /// `last_reason` before this claim (the previous attempt's).
    public var lastReason: String?
    /// `lane`: the row's kind of traffic.
    public var lane: String
    /// The lane's rank in `pushq.lanes` at the claim (`default`'s for a lane with no row there):
    /// lower goes first, in the claim and in the sender's queue.
    public var rank: Int
    /// A broadcast row's channel: Apple's `apns-channel-id` (``deviceToken`` is then empty); nil
    /// for a row to a device token.
    public var channelID: String?
    /// A broadcast row's channel's `message_storage_policy` (``ChannelStoragePolicy``); nil for a
    /// row to a device token.
    public var channelStoragePolicy: Int?
    /// A Web Push row's `webpush_keys` (jsonb as its text, `{"p256dh": …, "auth": …}`); nil for
    /// other providers' rows (and for a Web Push row without keys, which the mapping refuses).
    public var webpushKeys: String?
    /// A row of a lane with quiet hours: the window where its recipient is that opens next after
    /// the claim, as the server computed it (microseconds since 1970-01-01 UTC), which the worker
    /// checks before the row starts (``QuietHours/dispatch(now:window:)``); nil for other lanes.
    public var quietWindow: QuietInstants?
    /// The row's `tenant` (nil: none, one tenant of its own): a sender's queue takes the waiting
    /// requests of a lane's tenants in turn.
    public var tenant: String?

    public init(id: Int64, verdict: Verdict = .send, provider: Provider = .apns, deviceToken: String, payload: [UInt8],
                topic: String? = nil, pushType: PushType = .alert, priority: Int? = nil, expiresAt: Int64? = nil,
                collapseID: String? = nil, apnsID: String, environment: APNsEnvironment = .production,
                credential: String = "default", attempts: Int = 1, lease: Int64 = 0, maxAttempts: Int = 1,
                lastReason: String? = nil, lane: String = LaneStops.defaultLane, rank: Int = Int(PushRequest.defaultRank),
                channelID: String? = nil, channelStoragePolicy: Int? = nil, webpushKeys: String? = nil,
                quietWindow: QuietInstants? = nil, tenant: String? = nil) {
        self.id = id
        self.verdict = verdict
        self.provider = provider
        self.deviceToken = deviceToken
        self.payload = payload
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.expiresAt = expiresAt
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.environment = environment
        self.credential = credential
        self.attempts = attempts
        self.lease = lease
        self.maxAttempts = maxAttempts
        self.lastReason = lastReason
        self.lane = lane
        self.rank = rank
        self.channelID = channelID
        self.channelStoragePolicy = channelStoragePolicy
        self.webpushKeys = webpushKeys
        self.quietWindow = quietWindow
        self.tenant = tenant
    }

    /// The endpoint the row is sent through: its credential and channel; for Web Push its
    /// credential and its endpoint's origin (holds are per origin), or the credential alone when
    /// the endpoint cannot be read.
    public var endpoint: Endpoint {
        if provider == .webpush, case .success(let e) = WebPushEndpoint.parse(deviceToken) {
            return .webPush(credential, origin: e.origin)
        }
        return Endpoint(credential: credential, environment: environment, provider: provider)
    }
}
