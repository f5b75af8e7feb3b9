import PushCore

extension Settings {
    /// How long final rows are kept, for the worker's pruner and `pushq prune`.
    ///
    /// - Throws: ``SettingError`` for a value that is not seconds in range.
    func retention() throws -> RetentionPolicy {
        let defaults = RetentionPolicy()
        return RetentionPolicy(sentSeconds: try seconds(.retainSentSeconds) ?? defaults.sentSeconds,
                               finalSeconds: try seconds(.retainFinalSeconds) ?? defaults.finalSeconds)
    }
}
