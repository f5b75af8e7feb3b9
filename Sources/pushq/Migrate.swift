import ArgumentParser
import PushStore

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create or upgrade the pushq schema.",
        discussion: """
            Applies the migrations embedded in this binary that the database has not recorded \
            in pushq.schema_migrations, each in its own transaction. Safe to run repeatedly and \
            from several hosts at once (an advisory lock makes concurrent runs take turns).

            A migration that drops what workers of an earlier release read waits until none of \
            them is live (heartbeat within the last 30 seconds): migrate applies what comes \
            before it, names the workers it waits for, and exits 0, since this release's workers \
            do not need it. Start this release's workers, stop the earlier ones, and run migrate \
            again.
            """
    )

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let settings = database.settings()
        let logger = try settings.logger(label: "pushq.migrate")
        let url = try settings.databaseURL()
        let connection = try await PGConnection.connect(url, logger: logger)
        let applied = try await connection.migrate(logger: logger)
        let version = try await connection.schemaVersion() ?? 0
        let wait = try await connection.migrationWait()
        await connection.close()
        let list = applied.map(String.init).joined(separator: ", ")
        if let wait {
            print("pushq schema migrated to version \(version)\(applied.isEmpty ? "" : " (applied \(list))"); workers of this release can run.")
            let workers = wait.workers.map { "\($0.host) pid \($0.pid) (\($0.version))" }.joined(separator: ", ")
            print("Migration \(wait.version) (\(wait.name)) waits for \(wait.workers.count) live worker(s) of an earlier release: \(workers).")
            print("Stop them once this release's workers run, then run `pushq migrate` again.")
        } else if applied.isEmpty {
            print("pushq schema is up to date (version \(version)).")
        } else {
            print("pushq schema migrated to version \(version) (applied \(list)).")
        }
    }
}
