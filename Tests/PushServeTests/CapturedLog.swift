import Logging
import Synchronization

/// A `Logger` whose lines are kept in memory, so that a test can read what serve logged (its
/// message and metadata) instead of scraping standard error.
final class CapturedLog: Sendable {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let lines = Mutex<[Line]>([])

    /// A logger at `level` writing here.
    func logger(level: Logger.Level = .info) -> Logger {
        var logger = Logger(label: "pushq.serve.test") { _ in Handler(sink: self) }
        logger.logLevel = level
        return logger
    }

    /// The lines logged so far whose message is `message`.
    func lines(_ message: String) -> [Line] {
        lines.withLock { $0.filter { $0.message == message } }
    }

    var all: [Line] { lines.withLock { $0 } }

    fileprivate func append(_ line: Line) { lines.withLock { $0.append(line) } }

    struct Handler: LogHandler {
        let sink: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
            sink.append(Line(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
        }
    }
}
