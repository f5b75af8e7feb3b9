import Logging
import PushCore
import PushStore
import PushTransport
import PGClient

extension PushWorker {
    /// What the complete loop takes from the shared state in one turn.
    struct Taken {
        /// Answers to decide and write.
        var answers: [PushResponse] = []
        /// Rows to give back unsent: the senders' requests whose send-by time passed before a
        /// stream came free or whose lane was paused, and the rows of senders that could not be built.
        var releases: [RowClaim] = []
        /// Rows to end `cancelled` unsent: their lane was cancelled before they started.
        var cancels: [RowClaim] = []
        /// Endpoints whose senders could not be built.
        var holds: [HoldRequest] = []

        init(taking s: inout State) {
            releases = s.releases
            cancels = s.cancels
            holds = s.senderHolds
            s.releases.removeAll()
            s.cancels.removeAll()
            s.senderHolds.removeAll()
            if s.answers.contains(where: { $0.deadlinePassed || $0.laneStopped }) {
                for a in s.answers {
                    guard a.deadlinePassed || a.laneStopped else {
                        answers.append(a)
                        continue
                    }
                    // Only this claim's: a row claimed again since is another claim's to write.
                    if let claim = s.held.claim(of: a.request) { releases.append(claim) }
                }
                s.answers.removeAll(keepingCapacity: true)
            } else {
                answers = s.answers
                s.answers.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Gives rows back unsent, fenced on their claims: `queued` or `retrying`, attempt refunded,
    /// due at once; or, `cancelled` (their lane was cancelled), ends them `cancelled`, attempt
    /// refunded. Retried like a write-back; rows it cannot give back return with their lease.
    func giveBack(_ rows: [RowClaim], _ connection: PGConnection, cancelled: Bool = false) async {
        // A quiet lane's row given back inside its window waits for the window's end.
        let now = monotonicNanoseconds()
        let rows = cancelled ? rows : state.withLock { s in
            rows.map { r -> RowClaim in
                guard let h = s.held[r.id], h.lease == r.lease, let quiet = h.quiet,
                      case .wait(let until) = QuietHours.dispatch(now: quiet.clock.server(atMonotonic: now), window: quiet.window) else { return r }
                var r = r
                r.quietUntil = until
                return r
            }
        }
        var failures = 0
        var settled = false
        let workerID = configuration.workerID
        switch await settle(&failures, connection, {
            if cancelled { return try await connection.endCancelled(rows, workerID: workerID) }
            return try await connection.release(rows, workerID: workerID)
        }) {
        case .success(let n):
            settled = true
            if cancelled {
                logger.info("notifications of a cancelled lane ended cancelled unsent", metadata: ["notifications": "\(n)"])
            } else {
                let quiet = rows.filter { $0.quietUntil != nil }.count
                if quiet < rows.count {
                    logger.warning("notifications given back unsent, attempts refunded: their lane was paused, they waited for a stream until their lease would run out (a slow provider, or few streams), or their sender cannot be built", metadata: [
                        "notifications": "\(n)"])
                }
                if quiet > 0 {
                    logger.info("notifications given back unsent, attempts refunded: their lane's quiet hours began before they started; they wait for the window's end",
                                metadata: ["notifications": "\(quiet)"])
                }
                state.withLock { $0.stats.released += n }
            }
        case .failure(let error):
            logger.error("cannot give notifications back; they return to the queue when their lease runs out",
                         metadata: ["notifications": "\(rows.count)", "error": "\(error)"])
        case nil:
            logger.error("giving up giving notifications back at shutdown; they return to the queue when their lease runs out",
                         metadata: ["notifications": "\(rows.count)"])
        }
        state.withLock { s in for r in rows { s.held.forget(r, settled: settled) } }
        roomWake.signal()
        workWake.signal()
    }
}
