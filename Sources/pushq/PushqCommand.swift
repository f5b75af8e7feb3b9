import ArgumentParser
import Logging
import PushCore

@main
struct PushqCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushq",
        abstract: "A durable push-notification worker for APNs and FCM, backed by PostgreSQL.",
        discussion: """
            Producers insert rows into pushq.notifications; `pushq worker` processes send them \
            to APNs and FCM over HTTP/2 and record the outcome in the same rows.
            Configuration comes from flags, which override PUSHQ_* environment variables; an empty \
            value counts as unset. docs/configuration.md lists every variable and flag.
            """,
        version: PushqVersion.current,
        subcommands: [Migrate.self, Worker.self, Send.self, Status.self, Prune.self, Serve.self, APIKeyCommand.self, WebPushKey.self]
    )
}

/// Options shared by every command that talks to PostgreSQL.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .customLong("database-url"), help: SettingKey.databaseURL.help())
    var databaseURL: String?

    @Flag(name: .long, help: ArgumentHelp("Log debug details.", discussion: "Overrides $PUSHQ_LOG_LEVEL with debug."))
    var verbose = false

    /// The flags given, for ``Settings``: `--verbose` sets the level to debug.
    var flags: [SettingKey: String?] { [.databaseURL: databaseURL, .logLevel: verbose ? "debug" : nil] }

    /// The command's settings: these flags and `more`, over the process's variables.
    func settings(_ more: [SettingKey: String?] = [:]) -> Settings {
        Settings(flags: more.merging(flags) { _, ours in ours })
    }
}

/// A failure to report as `Error: <message>` without the usage text (the arguments were fine).
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
