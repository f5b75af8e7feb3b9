import Logging
import PushCore
import PushStore
import PushTransport
import PGClient

/// Where a claim looks: the served credentials (the statement leaves out held endpoints), or one
/// endpoint (a probe).
struct ClaimScope: Sendable {
    /// The credential names of each provider (``ClaimRouting``); a provider with none is not claimed.
    var credentials: [Provider: [String]]
    var only: Endpoint?
    /// Which lane of a rank goes first (``PGConnection/claim(limit:workerID:leaseSeconds:credentials:defaultEnvironment:only:row:excluding:rotation:budget:belowRank:considerate:)``).
    var rotation = 0
    /// The fleet's cap of the one credential this scope names, if it has one.
    var budget: RateBudget?
    /// Only lanes ranked lower than this (the claim loop's urgent claim); nil: any.
    var belowRank: Int?
    /// The claim that applies every rule (tenants in turn, caps per recipient), or the plain one
    /// (``ClaimForm``: the claim loop's choice).
    var considerate = true
    var isProbe: Bool { only != nil }
}

/// Rows of one claim statement, and when they must have started to be sent.
struct Claim: Sendable {
    var rows: [ClaimedNotification]
    /// ``monotonicNanoseconds()`` after which a row not yet handed to a stream is given back:
    /// the claim's start plus ``WorkerConfiguration/sendWindowSeconds``, so that every request
    /// ends (answered or timed out) before the lease the database granted runs out.
    var sendBy: Int64
    /// ``monotonicNanoseconds()`` just before the claim statement was sent: a lane cancel this
    /// worker handled later may have skipped rows this claim had locked (``PushWorker/laneCancelled(_:)``).
    var startedAt: Int64
    /// A cap held back rows that were due: claim again soon.
    var heldBackByCap = false
    /// More rows may be due than the claim reached (``ClaimBatch/claimAgain``): claim again at once.
    var claimAgain = false
    /// A plain claim found a lane that needs the considerate one, and took nothing
    /// (``ClaimBatch/needsConsiderate``): claim again with it.
    var needsConsiderate = false
}

extension PushWorker {
    /// Claims with `scope`'s filters, as this worker.
    func claim(_ connection: PGConnection, limit: Int, _ scope: ClaimScope, row: Int64? = nil,
               excluding: [Int64] = []) async throws(PGError) -> Claim {
        // Before the statement: the lease runs from the database's now() inside it, never earlier.
        let startedAt = monotonicNanoseconds()
        let rows = try await connection.claim(limit: limit, workerID: configuration.workerID, leaseSeconds: configuration.leaseSeconds,
                                   credentials: scope.credentials,
                                   defaultEnvironment: configuration.apns.environment,
                                   only: scope.only, row: row, excluding: excluding,
                                   rotation: scope.rotation, budget: scope.budget, belowRank: scope.belowRank,
                                   considerate: scope.considerate)
        return Claim(rows: rows.rows, sendBy: startedAt + Int64(configuration.sendWindowSeconds * 1e9), startedAt: startedAt,
                     heldBackByCap: rows.heldBackByCap, claimAgain: rows.claimAgain, needsConsiderate: rows.needsConsiderate)
    }

    /// What the claim loop's statements are for, in its log lines.
    static let claimPurpose = "claiming notifications"
}
