import ArgumentParser
import PushStore
import PGClient

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create or upgrade the pushq schema.",
        discussion: """
            Applies the migrations embedded in this binary that the database has not recorded \
            in pushq.schema_migrations, each in its own transaction. An empty database gets the \
            release's whole schema from one file. Safe to run repeatedly and from several hosts \
            at once (an advisory lock makes concurrent runs take turns). A database at an \
            unreleased development schema between 0.3.0 and 0.4.0 is refused, naming the commit \
            whose pushq migrate takes it to the end of that chain.

            A migration that drops what workers of an earlier release read waits until none of \
            them is live (heartbeat within the last 30 seconds): migrate applies what comes \
            before it, names the workers it waits for, and exits 0, since this release's workers \
            do not need it. Start this release's workers, stop the earlier ones, and run migrate \
            again.

            Least privilege: run migrate as the schema's owner, and `pushq serve` and `pushq worker` \
            each as a role of its own that can read and write rows but not change or drop tables. \
            `--print-grants ROLE --for serve` (or `--for worker`) prints the GRANT statements that \
            role needs, without connecting; `--grant-serve ROLE` and `--grant-worker ROLE` apply \
            them after migrating. Grants are idempotent: apply them again after every upgrade, \
            since a new migration may add a table (docs/deploy.md, Database roles).
            """
    )

    @OptionGroup var database: DatabaseOptions

    @Option(name: .customLong("print-grants"), help: ArgumentHelp(
        "Print the GRANT statements ROLE needs to run `pushq serve` or `pushq worker` (with --for), and exit without connecting.",
        valueName: "role"))
    var printGrants: String?

    @Option(name: .customLong("for"), help: ArgumentHelp("With --print-grants: the command the role runs, serve or worker.", valueName: "serve|worker"))
    var use: DatabaseRole?

    @Option(name: .customLong("grant-serve"), help: ArgumentHelp("After migrating, grant ROLE what `pushq serve` needs.", valueName: "role"))
    var grantServe: String?

    @Option(name: .customLong("grant-worker"), help: ArgumentHelp("After migrating, grant ROLE what `pushq worker` needs.", valueName: "role"))
    var grantWorker: String?

    func validate() throws {
        if printGrants != nil, use == nil {
            throw ValidationError("--print-grants ROLE needs --for serve or --for worker: the command that role runs")
        }
        if use != nil, printGrants == nil {
            throw ValidationError("--for goes with --print-grants ROLE")
        }
        if printGrants != nil, grantServe != nil || grantWorker != nil {
            throw ValidationError("--print-grants prints without connecting; --grant-serve and --grant-worker apply after migrating: use one or the other")
        }
        for (flag, role) in [("--print-grants", printGrants), ("--grant-serve", grantServe), ("--grant-worker", grantWorker)] {
            if let role, let problem = RoleGrants.roleNameProblem(role) { throw ValidationError("\(flag): \(problem)") }
        }
    }

    func run() async throws {
        if let role = printGrants, let use {
            print(RoleGrants.sql(for: use, role: role), terminator: "")
            return
        }
        let settings = database.settings()
        let logger = try settings.logger(label: "pushq.migrate")
        let url = try settings.databaseURL()
        let connection = try await PGConnection.connect(url, logger: logger)
        let applied = try await connection.migrate(logger: logger)
        let version = try await connection.schemaVersion() ?? 0
        let wait = try await connection.migrationWait()
        for (use, role) in [(DatabaseRole.serve, grantServe), (.worker, grantWorker)] {
            guard let role else { continue }
            do {
                try await connection.grant(use, to: role)
            } catch {
                await connection.close()
                throw CommandFailure("granting pushq \(use.rawValue)'s privileges to \(role): \(error)")
            }
            print("granted role \(role) what pushq \(use.rawValue) needs on schema pushq.")
        }
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

extension DatabaseRole: ExpressibleByArgument {}
