import Logging
import PushCore
import PushStore
import PushTransport

extension PushWorker.State {
    /// The row `request` was sent for, if this worker still holds it under the claim that sent it
    /// (the same lease): after the row's lease ran out, this worker may hold it again under a
    /// newer claim, which an older request's answer or release must not touch.
    func holding(_ request: PushRequest) -> PushWorker.Held? {
        held[request.tag].flatMap { $0.lease == request.claim ? $0 : nil }
    }

    /// The claim `request` was sent under, if this worker still holds the row under it.
    func claim(of request: PushRequest) -> RowClaim? {
        holding(request).map { RowClaim(id: request.tag, attempt: $0.attempt, lease: $0.lease) }
    }

    /// Forgets the row of `claim`, unless this worker holds it under another claim now.
    mutating func drop(_ claim: RowClaim) {
        if held[claim.id]?.lease == claim.lease { held[claim.id] = nil }
    }
}

extension PushWorker {
    /// What the complete loop takes from the shared state in one turn.
    struct Taken {
        /// Answers to decide and write.
        var answers: [PushResponse] = []
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
                    if let claim = s.claim(of: a.request) { releases.append(claim) }
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
        state.withLock { s in for r in rows { s.drop(r) } }
        roomWake.signal()
        workWake.signal()
    }
}
