import ChildProcess
import Foundation
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// `pushq migrate` as an operator runs it during a rolling upgrade: it applies what this
/// release's workers need, and the gated migrations once the earlier workers are gone.
@Suite("pushq migrate")
struct MigrateCommandTests {
    func migrate(_ url: String) async throws -> (ChildProcess.Termination, String, String) {
        var env = ProcessInfo.processInfo.environment
        env["PUSHQ_DATABASE_URL"] = url
        return try await ChildProcess.run(pushqBinary, ["migrate"], environment: env)
    }

    // A 0.3.0 worker registers without schema_known: the release's gated parts (103, 104) wait for it.
    @Test("with a live 0.3.0 worker: applies what this release's workers need, names the worker, exits 0; the rest once it is gone")
    func waitsForEarlierWorkers() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await c.migrate(Array(Migration.all.prefix(11)), logger: TestDatabase.logger) == Array(1...11))
            try await c.query("""
                INSERT INTO pushq.workers (id, host, pid, version, credentials) VALUES ('old-1', 'host-a', 4121, '0.3.0', '[]')
                """)
            let (first, out, err) = try await migrate(url)
            #expect(first == .exit(0), "\(err)")
            #expect(out.contains("migrated to version \(Migration.requiredVersion)") && out.contains("workers of this release can run"), "\(out)")
            let gated = Migration.all.filter { (try? MigrationGate(of: $0)) != nil }
            let firstGated = try #require(gated.first)
            #expect(out.contains("Migration \(firstGated.version) (\(firstGated.name)) waits for 1 live worker(s) of an earlier release: host-a pid 4121 (0.3.0)"),
                    "\(out)")
            #expect(try await c.schemaVersion() == Migration.requiredVersion)
            #expect(try await c.query("SELECT count(*) FROM pushq.schema_migrations WHERE version = ANY($1)", [gated.map(\.version)])
                .decode(Int.self, 0, 0) == 0)
            #expect(try await c.query("SELECT to_regclass('pushq.notifications_lease') IS NOT NULL").decode(Bool.self, 0, 0) == true)

            let (again, twice, _) = try await migrate(url)
            #expect(again == .exit(0) && twice.contains("waits for 1 live worker(s)"), "still waiting: \(twice)")

            // The old worker is killed: its heartbeat stops, and after the liveness window it no longer counts.
            try await c.query("UPDATE pushq.workers SET heartbeat_at = now() - interval '31 seconds' WHERE id = 'old-1'")
            let (last, done, lastErr) = try await migrate(url)
            #expect(last == .exit(0), "\(lastErr)")
            #expect(done.contains("migrated to version \(Migration.latestVersion)") && !done.contains("waits"), "\(done)")
            #expect(try await c.query("SELECT to_regclass('pushq.notifications_lease') IS NULL").decode(Bool.self, 0, 0) == true)
            let (_, upToDate, _) = try await migrate(url)
            #expect(upToDate.contains("up to date (version \(Migration.latestVersion))"), "\(upToDate)")
            await c.close()
        }
    }

    // As a development build between 0.3.0 and 0.4.0 left it: versions 12 to 47 recorded (the
    // refusal reads the record; MigrationHistoryTests builds such schemas for real).
    @Test("on an unreleased development schema: exits 1 naming the schema and the commit to migrate it with, and applies nothing")
    func refusesDevelopmentSchema() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await c.migrate(Array(Migration.all.prefix(11)), logger: TestDatabase.logger) == Array(1...11))
            try await c.query("INSERT INTO pushq.schema_migrations (version, name) SELECT g, 'dev' FROM generate_series(12, 47) g")
            let (status, out, err) = try await migrate(url)
            #expect(status == .exit(1), "\(out)")
            #expect(err.contains("schema 47 is an unreleased development schema between 0.3.0 and 0.4.0"), "\(err)")
            #expect(err.contains("git checkout \(SchemaHistory.devChainCommit)"), "\(err)")
            #expect(try await c.schemaVersion() == 47)
            await c.close()
        }
    }
}
