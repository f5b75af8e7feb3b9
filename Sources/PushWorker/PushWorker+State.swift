import PushCore
import PushStore
import PushTransport

extension PushWorker {
    /// What the loops share, behind ``PushWorker/state``'s lock: the held rows, the hand-offs
    /// between the loops (answers, releases, cancels), the senders, and what health and
    /// shutdown read.
    struct State {
        /// The rows this worker holds and their leases (``HeldRows``); the complete loop deletes
        /// the rows of pushq.leases whose leases ended (``PushWorker/deleteEndedLeases(_:)``).
        var held = HeldRows()
        /// New rows were enqueued (a NOTIFY) since the claim loop last looked.
        var enqueued = false
        var answers: [PushResponse] = []
        var local: [RowCompletion] = []
        /// Rows to give back unsent (attempt refunded): their sender could not be built, their
        /// lease would have run out before an answer, or their lane was paused.
        var releases: [RowClaim] = []
        /// Rows to end `cancelled` unsent (attempt refunded): their lane was cancelled from the
        /// dashboard before they started (``PushWorker/laneCancelled(_:)``).
        var cancels: [RowClaim] = []
        /// The paused lanes as last read from `pushq.lanes` (``PushWorker/applyLanes(_:)``): what
        /// every sender is told, a new one included.
        var laneStops = LaneStops()
        /// The requests of capped lanes and credentials waiting for their turn to start (``paceLoop()``).
        var pacer = SendPacer()
        /// When this worker handled each lane's last cancel notice (``monotonicNanoseconds()``,
        /// ``PushWorker/laneCancelled(_:)``): the rows of that lane a claim that started earlier
        /// returns are ended `cancelled` unsent (the cancel skipped them, locked by that claim).
        var laneCancels: [String: Int64] = [:]
        /// Endpoints to hold whose senders cannot be built, written by the complete loop.
        var senderHolds: [HoldRequest] = []
        /// Senders are per endpoint: tokens belong to one environment, and one connection never mixes keys.
        /// Web Push's are per credential (keyed by its endpoint without an origin), each serving every origin.
        var senders: [Endpoint: any Sender] = [:]
        /// The access tokens of each FCM credential, shared by its sender.
        var fcmTokens: [String: FCMAccessTokenProvider] = [:]
        var stopRequested = false
        var stopRequestedAt: ContinuousClock.Instant?
        /// Stopping, the database failed past the shutdown retry budget: no more database calls.
        var databaseGivenUp = false
        var claimingDone = false
        var claimingDoneAt: ContinuousClock.Instant?
        /// The complete loop wrote or lifted a hold: the claim loop re-reads the holds at once.
        var holdsChanged = false
        var stats = Stats()
        /// When each loop last ticked (``health()``).
        var ticks: [WorkerHealth.Loop: ContinuousClock.Instant] = [:]
        var loopsStartedAt: ContinuousClock.Instant?
        /// The last statement on the claim connection worked.
        var databaseConnected = false
        /// This worker's credentials that are paused, as of the last read of the holds.
        var pausedCredentials: Set<String> = []
        /// Loops whose statements PostgreSQL refuses for a reason only an operator can mend.
        var refusals: [WorkerHealth.Loop: String] = [:]
    }

    /// Counters since ``run()`` began.
    public struct Stats: Sendable, Hashable {
        public var claimed = 0
        public var sent = 0
        public var retried = 0
        public var failed = 0
        public var expired = 0
        public var released = 0
        public var completionBatches = 0
    }
}
