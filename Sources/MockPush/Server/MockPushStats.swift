/// Counters since start or the last `reset()`. JSON form of `GET /_mock/stats`.
///
/// Control requests (`/_mock/...`) are not counted.
public struct MockPushStats: Sendable, Hashable, Codable {
    /// Requests received in full (headers and body), valid or not, on the push port
    /// (pushes to devices and broadcasts).
    public var requests: Int = 0
    /// Of ``requests``, broadcasts (`POST /4/broadcasts/apps/<bundle>`).
    public var broadcasts: Int = 0
    /// Requests to the channel-management port (not in ``requests``), valid or not.
    public var channelRequests: Int = 0
    /// Answers by HTTP status (`{"200": 990, "410": 10}` in JSON), counted when decided
    /// (a delayed answer counts before it is written).
    public var byStatus: [Int: Int] = [:]
    /// Error answers by reason string, counted when decided.
    public var byReason: [String: Int] = [:]
    /// Requests left unanswered on purpose (`noAnswer`).
    public var unanswered: Int = 0
    /// Streams reset on purpose (`reset`).
    public var resets: Int = 0
    /// Connections accepted (TCP), and open now.
    public var connectionsOpened: Int = 0
    public var connectionsOpen: Int = 0
    /// The most connections open at once (over every port, the extra Web Push origins'
    /// included) since start or the last `reset()` (which starts it at those open then).
    public var connectionsOpenPeak: Int = 0
    /// Requests per connection id (ids start at 1 in accept order).
    public var requestsByConnection: [Int: Int] = [:]
    /// Requests authenticated by JWT and by client certificate.
    public var tokenAuthRequests: Int = 0
    public var certificateAuthRequests: Int = 0
    /// A connection moved to a different JWT (allowed: 20 minutes or more after the previous one).
    public var tokenSwitches: Int = 0
    /// A connection tried to switch JWTs within 20 minutes (answered 429 TooManyProviderTokenUpdates).
    public var tokenSwitchViolations: Int = 0
    /// A connection's JWT `kid` changed (answered 403 UnrelatedKeyIdInToken).
    public var keyIDChanges: Int = 0
    /// GOAWAY frames sent by the goaway fault; connections closed by faults (close-after,
    /// idle, refusing connections).
    public var goawaysSent: Int = 0
    public var connectionsClosedByMock: Int = 0
    /// Whether the port accepts connections now: true once started, false while refusing
    /// them (`refuseConnections`, `POST /_mock/refuse`) and after `stop()`. Kept by `reset()`.
    public var listening: Bool = false
    /// Refusals ordered (`refuseConnections`, `POST /_mock/refuse`), one per call.
    public var refusals: Int = 0
    /// Connections the idle fault blackholed (`idleBlackhole`).
    public var connectionsBlackholed: Int = 0
    /// Records not kept because `maxRecordedRequests` was reached.
    public var recordsDropped: Int = 0
    /// Requests to Web Push endpoints (`/wp/<id>`; not in ``requests``), valid or not, and
    /// their answers by HTTP status, counted when decided.
    public var webPushRequests: Int = 0
    public var webPushByStatus: [Int: Int] = [:]
    /// Of ``webPushRequests``, the messages decrypted, and those whose decryption failed
    /// (answered 400 `DecryptionFailed`): every message with a body, or the sample drawn under
    /// `POST /_mock/webpush/decrypt-sample` (the bench reads these with records off).
    public var webPushDecrypted: Int = 0
    public var webPushDecryptionFailures: Int = 0

    public init() {}

    /// Answers with this status.
    public func count(status: Int) -> Int { byStatus[status] ?? 0 }
}
