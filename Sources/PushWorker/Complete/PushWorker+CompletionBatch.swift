import PushCore
import PushStore

extension PushWorker {
    /// One batch of answers, decided and ready to write.
    struct CompletionBatch {
        var completions: [RowCompletion] = []
        var invalidations: [TokenInvalidation] = []
        /// The row each invalidation comes from (same order), to write it with its row when the batch is split.
        var invalidationRows: [Int64] = []
        var throttles: [TokenThrottle] = []
        /// The row each throttle comes from (same order).
        var throttleRows: [Int64] = []
        var holds: [(hold: HoldRequest, seconds: Double)] = []
        var resumed: [Endpoint] = []
        var soonRetries = false
        var sent = 0, retried = 0, failed = 0, expired = 0

        /// Whether there are endpoints to hold or resume: written once per batch.
        var hasExtras: Bool { !holds.isEmpty || !resumed.isEmpty }

        /// These rows with their invalidations and throttles, and no holds or resumed endpoints.
        func part(_ range: Range<Int>) -> CompletionBatch {
            var part = CompletionBatch()
            part.completions = Array(completions[range])
            let ids = Set(part.completions.map(\.id))
            for (i, id) in invalidationRows.enumerated() where ids.contains(id) {
                part.invalidations.append(invalidations[i])
                part.invalidationRows.append(id)
            }
            for (i, id) in throttleRows.enumerated() where ids.contains(id) {
                part.throttles.append(throttles[i])
                part.throttleRows.append(id)
            }
            return part
        }

        /// Counts these rows (indexes into ``completions``) as failed, whatever their answer was,
        /// in the stats and in the metrics' tally.
        mutating func countEnded(_ rows: [Int]) {
            for i in rows {
                if i < counted.count, let entry = counted[i] { tally.ended(entry) }
                switch completions[i].disposition.status {
                case .sent: sent -= 1
                case .retrying: retried -= 1
                case .expired: expired -= 1
                case .failed: continue
                }
                failed += 1
            }
        }
        var tally = WorkerMetrics.Tally()
        /// What each row added to ``tally`` (same order as ``completions``; nil for a row not
        /// counted), kept when metrics are on.
        var counted: [WorkerMetrics.Tally.Entry?] = []
    }
}
