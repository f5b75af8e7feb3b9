import Foundation
import PushCore

extension ClaimedNotification.Verdict {
    /// The claim statement's `verdict` column (``ClaimStatement``): `sending`, `expired`,
    /// `failed` (its token is invalid), `exhausted`, `throttled` or `capped` (over its recipient's
    /// frequency cap); nil for any other text.
    init?(claimText: String) {
        switch claimText {
        case "sending": self = .send
        case "expired": self = .expired
        case "failed": self = .tokenInvalidated
        case "exhausted": self = .exhausted
        case "throttled": self = .throttled
        case "capped": self = .capped
        default: return nil
        }
    }
}

/// The write-back of one attempt: a row's ``Disposition`` plus APNs' answer.
public struct RowCompletion: Sendable {
    public var id: Int64
    /// The `attempts` value the row had when this worker claimed it (the fence).
    public var attempt: Int
    /// The claim's ``ClaimedNotification/lease`` (the fence, with ``attempt``): an answer is recorded
    /// only under the claim that sent it, even if the same worker claimed the row again.
    public var lease: Int64
    public var disposition: Disposition
    /// `last_status`: the HTTP status, nil when none came.
    public var httpStatus: Int?
    /// `apns-unique-id`, if APNs sent one.
    public var apnsUniqueID: UUID?
    /// `fcm_message_name`: the `name` FCM answered a 200 with (`projects/…/messages/…`).
    public var messageName: String?
    /// `webpush_location`: the `Location` a Web Push service answered a 201 with (the message's
    /// resource). Written to Web Push rows only.
    public var webpushLocation: String?

    public init(id: Int64, attempt: Int, lease: Int64, disposition: Disposition, httpStatus: Int?, apnsUniqueID: UUID?,
                messageName: String? = nil, webpushLocation: String? = nil) {
        self.id = id
        self.attempt = attempt
        self.lease = lease
        self.disposition = disposition
        self.httpStatus = httpStatus
        self.apnsUniqueID = apnsUniqueID
        self.messageName = messageName
        self.webpushLocation = webpushLocation
    }

    /// The claim this answers.
    public var claim: RowClaim { RowClaim(id: id, attempt: attempt, lease: lease) }
}

/// One claim of one row: its id and its fence (``ClaimedNotification/attempts``, ``ClaimedNotification/lease``).
public struct RowClaim: Sendable, Hashable {
    public var id: Int64
    public var attempt: Int
    public var lease: Int64
    /// For a give-back (``PGConnection/release(_:workerID:)``): the end of the quiet hours the row
    /// waits for (microseconds since 1970-01-01 UTC), its entry of pushq.due held until then; nil:
    /// due at once.
    public var quietUntil: Int64?

    public init(id: Int64, attempt: Int, lease: Int64, quietUntil: Int64? = nil) {
        self.id = id
        self.attempt = attempt
        self.lease = lease
        self.quietUntil = quietUntil
    }
}

/// What one claim statement took.
///
/// A collection of its rows, so that a caller that wants only them reads it as one.
public struct ClaimBatch: Sendable, RandomAccessCollection {
    public var rows: [ClaimedNotification] = []
    /// A lane's or the credential's cap held back rows that were due: they go out as the budget
    /// refills, so the worker claims again within a fraction of a second instead of at its poll.
    public var heldBackByCap = false

    /// The verdict of the statement's extra row saying ``heldBackByCap``.
    static let budgetVerdict = "budget"

    /// More rows may be due than the claim reached, so the worker claims again at once rather than
    /// at its poll: a quiet lane's walk moved as many entries to their window's end as it reads
    /// (rows behind them, other zones', may be due), or rows over their recipient's frequency cap
    /// (`over_cap = 'defer'`) were held until the window has room while others are due behind them.
    public var claimAgain = false

    /// The verdict of the statement's extra row saying ``claimAgain``.
    static let againVerdict = "again"

    /// A plain claim (``PGConnection/claim(limit:workerID:leaseSeconds:credentials:defaultEnvironment:only:row:excluding:rotation:budget:belowRank:considerate:)``
    /// with `considerate` false) found a lane that caps sends per recipient or has rows with a
    /// tenant, and took nothing: claim again with the considerate claim.
    public var needsConsiderate = false

    /// The verdict of the statement's extra row saying ``needsConsiderate``.
    static let considerateVerdict = "considerate"

    public init() {}

    public var startIndex: Int { rows.startIndex }
    public var endIndex: Int { rows.endIndex }
    public subscript(position: Int) -> ClaimedNotification { rows[position] }
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
