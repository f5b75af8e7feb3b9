import PushCore
import PushStore
import PGClient

extension WorkerMetrics {
    /// One written batch, counted: built by the complete loop while it decides (no extra pass).
    struct Tally {
        var finished: [FinishedKey: Int] = [:]
        var retries: [String: Int] = [:]
        var requests: [RequestKey: Int] = [:]
        var invalidations: [String: Int] = [:]
        /// Rows sent, by lane (the row's name: ``WorkerMetrics/add(_:)`` turns it into a label).
        var sentByLane: [String: Int] = [:]

        /// What one row added, to take it back when the row is ended otherwise.
        struct Entry {
            var endpoint: Endpoint
            var finished: FinishedKey?
            var retry: String?
            var invalidation: String?
            /// The lane of a row counted sent.
            var sentLane: String?
        }

        /// Counts one row; returns what it added (for ``ended(_:)``).
        @discardableResult
        mutating func count(_ d: Disposition, outcome: Outcome, status: Int?, endpoint: Endpoint, lane: String, answered: Bool) -> Entry {
            if answered { requests[RequestKey(endpoint: endpoint, status: status ?? 0), default: 0] += 1 }
            var entry = Entry(endpoint: endpoint, invalidation: d.invalidation?.reason)
            switch d.status {
            case .retrying:
                entry.retry = outcome.retryLabel
                retries[outcome.retryLabel, default: 0] += 1
            case .sent, .failed, .expired:
                let key = FinishedKey(outcome: d.status, reason: d.reason ?? "", endpoint: endpoint)
                entry.finished = key
                finished[key, default: 0] += 1
                if d.status == .sent {
                    entry.sentLane = lane
                    sentByLane[lane, default: 0] += 1
                }
            }
            if let inv = entry.invalidation { invalidations[inv, default: 0] += 1 }
            return entry
        }

        /// A row counted as `entry` was ended `failed`/`WriteBackError` instead (its answer
        /// could not be written, nor its invalidation): counted as what was written. Its
        /// answer still counts in the requests by status.
        mutating func ended(_ entry: Entry) {
            if let key = entry.finished { finished[key, default: 0] -= 1 }
            if let kind = entry.retry { retries[kind, default: 0] -= 1 }
            if let inv = entry.invalidation { invalidations[inv, default: 0] -= 1 }
            if let lane = entry.sentLane { sentByLane[lane, default: 0] -= 1 }
            finished[FinishedKey(outcome: .failed, reason: PGConnection.writeBackErrorReason, endpoint: entry.endpoint), default: 0] += 1
        }
    }
}
