import Logging
import Synchronization

/// How the commands log: `PUSHQ_LOG_FORMAT` and `PUSHQ_LOG_LEVEL` (or `--verbose`).
struct LogSettings: Sendable, Equatable {
    /// `text` (default) or `json`.
    var format: PushqLogHandler.Format = .text
    /// The least severe level logged. Defaults to info; `--verbose` makes it debug.
    var level: Logger.Level = .info
}

extension Settings {
    /// The log format and level.
    ///
    /// - Throws: ``SettingError`` for a value that is not a format or level.
    func logSettings() throws -> LogSettings {
        var settings = LogSettings()
        if let text = try text(.logFormat), let format = PushqLogHandler.Format(rawValue: text) { settings.format = format }
        if let text = try text(.logLevel), let level = Logger.Level(rawValue: text) { settings.level = level }
        return settings
    }

    /// A command's logger, writing as ``logSettings()`` says (the logging system is set up on first use).
    ///
    /// - Throws: ``SettingError`` for a bad format or level.
    func logger(label: String) throws -> Logger {
        let settings = try logSettings()
        LoggingSystem.bootstrapOnce(format: settings.format)
        var logger = Logger(label: label)
        logger.logLevel = settings.level
        return logger
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
