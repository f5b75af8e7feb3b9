import Foundation
import PushCore

/// A row the worker claimed, with what is needed to send it.
public struct ClaimedRow: Sendable {
    /// What the claim did with the row.
    public enum Verdict: String, Sendable {
        /// Now `sending`, held by this worker: send it.
        case send = "sending"
        /// `expires_at` had passed: now `expired` (final). Not to be sent.
        case expired
        /// Its token is invalid in `pushq.devices`: now `failed`/`TokenInvalidated` (final). Not to be sent.
        case tokenInvalidated = "failed"
        /// Its attempts were used up (a lapsed lease of its last attempt, or `max_attempts`
        /// lowered): now `failed` (final), never past `max_attempts`. Not to be sent.
        case exhausted
        /// Its token is throttled (429): back to `retrying` until the throttle ends, attempt
        /// not counted. Not to be sent now.
        case throttled
        /// Now `sending`, held by this worker, but its `provider`, or an APNs row's `push_type` or
        /// `environment`, is one this worker does not know (a value added to the schema after this
        /// version, or a check constraint dropped): not to be sent; the worker ends it
        /// `failed`/`InvalidRow` like an answer. ``provider``, ``pushType`` and ``environment`` are
        /// then placeholders (`apns`, `alert`, the default). An FCM row is never unreadable for its
        /// `push_type` or `environment`, which it does not use.
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
    /// `expires_at` in UNIX seconds.
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
    public var lane: String = "default"
    /// The lane's rank in `pushq.lanes` at the claim (`default`'s for a lane with no row there):
    /// lower goes first, in the claim and in the sender's queue.
    public var rank: Int = 100
    /// A broadcast row's channel: Apple's `apns-channel-id` (``deviceToken`` is then empty); nil
    /// for a row to a device token.
    public var channelID: String?
    /// A broadcast row's channel's `message_storage_policy` (0: no message stored, so the
    /// broadcast must carry `apns-expiration: 0`); nil for a row to a device token.
    public var channelStoragePolicy: Int?
}

/// The write-back of one attempt: a row's ``Disposition`` plus APNs' answer.
public struct RowCompletion: Sendable {
    public var id: Int64
    /// The `attempts` value the row had when this worker claimed it (the fence).
    public var attempt: Int
    /// The claim's ``ClaimedRow/lease`` (the fence, with ``attempt``): an answer is recorded
    /// only under the claim that sent it, even if the same worker claimed the row again.
    public var lease: Int64
    public var disposition: Disposition
    /// `last_status`: the HTTP status, nil when none came.
    public var httpStatus: Int?
    /// `apns-unique-id`, if APNs sent one.
    public var apnsUniqueID: UUID?
    /// `fcm_message_name`: the `name` FCM answered a 200 with (`projects/…/messages/…`).
    public var messageName: String?

    public init(id: Int64, attempt: Int, lease: Int64, disposition: Disposition, httpStatus: Int?, apnsUniqueID: UUID?,
                messageName: String? = nil) {
        self.id = id
        self.attempt = attempt
        self.lease = lease
        self.disposition = disposition
        self.httpStatus = httpStatus
        self.apnsUniqueID = apnsUniqueID
        self.messageName = messageName
    }

    /// The claim this answers.
    public var claim: RowClaim { RowClaim(id: id, attempt: attempt, lease: lease) }
}

/// One claim of one row: its id and its fence (``ClaimedRow/attempts``, ``ClaimedRow/lease``).
public struct RowClaim: Sendable, Hashable {
    public var id: Int64
    public var attempt: Int
    public var lease: Int64

    public init(id: Int64, attempt: Int, lease: Int64) {
        self.id = id
        self.attempt = attempt
        self.lease = lease
    }
}

/// What one claim statement took.
///
/// A collection of its rows, so that a caller that wants only them reads it as one.
public struct ClaimBatch: Sendable, RandomAccessCollection {
    public var rows: [ClaimedRow] = []
    /// A lane's or the credential's cap held back rows that were due: they go out as the budget
    /// refills, so the worker claims again within a fraction of a second instead of at its poll.
    public var heldBackByCap = false

    /// The verdict of the statement's extra row saying ``heldBackByCap``.
    static let budgetVerdict = "budget"

    public init() {}

    public var startIndex: Int { rows.startIndex }
    public var endIndex: Int { rows.endIndex }
    public subscript(position: Int) -> ClaimedRow { rows[position] }
}

/// A fleet-wide cap on the rows one credential sends (`"max_per_second"` in the credentials
/// file), kept in `pushq.rate_budgets` under ``key``.
public struct RateBudget: Sendable, Hashable {
    public var provider: Provider
    public var credential: String
    /// Sends per second, every worker together.
    public var perSecond: Double

    public init(provider: Provider, credential: String, perSecond: Double) {
        self.provider = provider
        self.credential = credential
        self.perSecond = perSecond
    }

    /// Its row in `pushq.rate_budgets`: `credential:<provider>:<name>`.
    public var key: String { "credential:\(provider.rawValue):\(credential)" }
}
