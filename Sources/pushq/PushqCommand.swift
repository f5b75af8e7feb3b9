import ArgumentParser
import Logging
import PushCore

@main
struct PushqCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushq",
        abstract: "A durable APNs push-notification worker backed by PostgreSQL.",
        discussion: """
            Producers insert rows into pushq.notifications; `pushq worker` processes send them \
            to Apple Push Notification service over HTTP/2 and record the outcome in the same rows.
            Configuration comes from flags, which override PUSHQ_* environment variables.
            """,
        version: PushqVersion.current,
        subcommands: [Migrate.self, Worker.self, Send.self, Status.self, Prune.self]
    )
}

/// Options shared by every command that talks to PostgreSQL.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .customLong("database-url"),
            help: ArgumentHelp("libpq connection URI or conninfo string.", discussion: "Defaults to $PUSHQ_DATABASE_URL."))
    var databaseURL: String?

    @Flag(name: .long, help: ArgumentHelp("Log debug details.", discussion: "Overrides $PUSHQ_LOG_LEVEL."))
    var verbose = false

    func resolvedURL() throws -> String {
        if let databaseURL, !databaseURL.isEmpty { return databaseURL }
        if let env = Environment.nonEmpty("PUSHQ_DATABASE_URL") { return env }
        throw ValidationError("no database given: pass --database-url or set PUSHQ_DATABASE_URL (e.g. postgresql://user@127.0.0.1:5432/pushq)")
    }

    /// The command's logger, as PUSHQ_LOG_FORMAT and PUSHQ_LOG_LEVEL (or --verbose) say.
    ///
    /// - Throws: `ValidationError` for a bad value of either variable.
    func makeLogger(label: String) throws -> Logger {
        let settings = try LogSettings.fromEnvironment()
        LoggingSystem.bootstrapOnce(format: settings.format)
        var logger = Logger(label: label)
        logger.logLevel = verbose ? .debug : settings.level
        return logger
    }
}

/// A failure to report as `Error: <message>` without the usage text (the arguments were fine).
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
