import Logging
import Synchronization

/// Log lines kept in memory, one per event: ` <level> <label> : <metadata> <message>`.
public final class CapturedLogs: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    /// Every line so far.
    public var all: [String] { lines.withLock { $0 } }

    /// A logger that writes here, from `level` up.
    public func logger(_ level: Logger.Level = .info) -> Logger {
        var logger = Logger(label: "pushq.test") { Handler(label: $0, logs: self) }
        logger.logLevel = level
        return logger
    }

    private struct Handler: LogHandler {
        let label: String
        let logs: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            let line = " \(event.level) \(label) : \(all) \(event.message)"
            logs.lines.withLock { $0.append(line) }
        }
    }
}
