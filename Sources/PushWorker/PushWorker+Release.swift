import APNsTransport
import Logging
import PushCore
import PushStore

extension PushWorker {
    /// What the complete loop takes from the shared state in one turn.
    struct Taken {
        /// Answers to decide and write.
        var answers: [APNsResponse] = []
        /// Rows to give back unsent: the senders' requests whose send-by time passed before a
        /// stream came free, and the rows of senders that could not be built.
        var releases: [RowClaim] = []
        /// Endpoints whose senders could not be built.
        var holds: [HoldRequest] = []

        init(taking s: inout State) {
            releases = s.releases
            holds = s.senderHolds
            s.releases.removeAll()
            s.senderHolds.removeAll()
            if s.answers.contains(where: \.deadlinePassed) {
                for a in s.answers {
                    guard a.deadlinePassed else {
                        answers.append(a)
                        continue
                    }
                    // Only this claim's: a row claimed again since is another claim's to write.
                    if let h = s.held[a.tag], h.lease == a.request.claim {
                        releases.append(RowClaim(id: a.tag, attempt: h.attempt, lease: h.lease))
                    }
                }
                s.answers.removeAll(keepingCapacity: true)
            } else {
                answers = s.answers
                s.answers.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Gives rows back unsent, fenced on their claims: `queued` or `retrying`, attempt refunded,
    /// due at once. Retried like a write-back; rows it cannot give back return with their lease.
    func giveBack(_ rows: [RowClaim], _ connection: PGConnection) async {
        var failures = 0
        let workerID = configuration.workerID
        switch await settle(&failures, connection, { try await connection.release(rows, workerID: workerID) }) {
        case .success(let n):
            logger.warning("notifications given back unsent, attempts refunded: they waited for a stream until their lease would run out (a slow provider, or few streams), or their sender cannot be built", metadata: [
                "notifications": "\(n)"])
            state.withLock { $0.stats.released += n }
        case .failure(let error):
            logger.error("cannot give notifications back; they return to the queue when their lease runs out",
                         metadata: ["notifications": "\(rows.count)", "error": "\(error)"])
        case nil:
            logger.error("giving up giving notifications back at shutdown; they return to the queue when their lease runs out",
                         metadata: ["notifications": "\(rows.count)"])
        }
        state.withLock { s in
            for r in rows where s.held[r.id]?.lease == r.lease { s.held[r.id] = nil }
        }
        roomWake.signal()
        workWake.signal()
    }
}
