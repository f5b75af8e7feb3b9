import ArgumentParser
import PushStore

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create or upgrade the pushq schema.",
        discussion: """
            Applies the migrations embedded in this binary that the database has not recorded \
            in pushq.schema_migrations, each in its own transaction. Safe to run repeatedly and \
            from several hosts at once (an advisory lock makes concurrent runs take turns).
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
        await connection.close()
        if applied.isEmpty {
            print("pushq schema is up to date (version \(version)).")
        } else {
            print("pushq schema migrated to version \(version) (applied \(applied.map(String.init).joined(separator: ", "))).")
        }
    }
}
