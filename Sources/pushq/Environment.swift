#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import Logging
import PushWorker
import Synchronization

enum Environment {
    /// The value of environment variable `name`, if set.
    static func value(_ name: String) -> String? {
        guard let p = getenv(name) else { return nil }
        return String(cString: p)
    }

    /// The value of `name` when set and not empty (an empty `PUSHQ_*` variable counts as unset).
    static func nonEmpty(_ name: String) -> String? {
        guard let v = value(name), !v.isEmpty else { return nil }
        return v
    }
}

/// How the commands log: `PUSHQ_LOG_FORMAT` and `PUSHQ_LOG_LEVEL`.
struct LogSettings: Sendable {
    /// `text` (default) or `json` (`PUSHQ_LOG_FORMAT`).
    var format: PushqLogHandler.Format = .text
    /// The least severe level logged (`PUSHQ_LOG_LEVEL`): trace, debug, info, notice, warning,
    /// error or critical. Defaults to info; `--verbose` makes it debug.
    var level: Logger.Level = .info

    /// The settings of the variables (empty or unset keeps the default).
    ///
    /// - Throws: `ValidationError` naming the variable and the values it takes.
    static func fromEnvironment() throws -> LogSettings {
        var settings = LogSettings()
        if let text = Environment.nonEmpty("PUSHQ_LOG_FORMAT") {
            guard let format = PushqLogHandler.Format(rawValue: text.lowercased()) else {
                throw ValidationError("PUSHQ_LOG_FORMAT must be text or json, not \(text)")
            }
            settings.format = format
        }
        if let text = Environment.nonEmpty("PUSHQ_LOG_LEVEL") {
            guard let level = Logger.Level(rawValue: text.lowercased()) else {
                throw ValidationError("PUSHQ_LOG_LEVEL must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), not \(text)")
            }
            settings.level = level
        }
        return settings
    }
}

extension LoggingSystem {
    private static let bootstrapped = Mutex(false)

    /// Sends logs to standard error in `format`, once per process.
    static func bootstrapOnce(format: PushqLogHandler.Format) {
        bootstrapped.withLock { done in
            guard !done else { return }
            LoggingSystem.bootstrap { label in PushqLogHandler(label: label, format: format) }
            done = true
        }
    }
}
