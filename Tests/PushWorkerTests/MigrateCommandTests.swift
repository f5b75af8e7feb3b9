import ChildProcess
import Foundation
import PushStore
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

    @Test("with a live worker of a release before schema 35: applies up to what this release's workers need, names the worker, exits 0, and again while it lives; once it is gone, the gated migrations run")
    func waitsForEarlierWorkers() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await c.migrate(Array(Migration.all.prefix(34)), logger: TestDatabase.logger) == Array(1...34))
            try await c.query("""
                INSERT INTO pushq.workers (id, host, pid, version, credentials) VALUES ('old-1', 'host-a', 4121, '0.9.0', '[]')
                """)
            let (first, out, err) = try await migrate(url)
            #expect(first == .exit(0), "\(err)")
            #expect(out.contains("migrated to version \(Migration.requiredVersion)") && out.contains("workers of this release can run"), "\(out)")
            // The first gated migration (40) waits, and 41 behind it; 42, which is not gated, applied.
            #expect(out.contains("Migration 40 (leases_for_earlier_rows) waits for 1 live worker(s) of an earlier release: host-a pid 4121 (0.9.0)"),
                    "\(out)")
            #expect(try await c.schemaVersion() == Migration.requiredVersion)
            #expect(try await c.query("SELECT count(*) FROM pushq.schema_migrations WHERE version IN (40, 41)").decode(Int.self, 0, 0) == 0)

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

    @Test("with a live worker of schema 35: the lease rows of schema 40 are given, and the index its write-back reads (41) waits for it")
    func schema35WorkerHoldsTheIndexDrop() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await c.migrate(Array(Migration.all.prefix(35)), logger: TestDatabase.logger) == Array(1...35))
            try await c.query("""
                INSERT INTO pushq.workers (id, host, pid, version, credentials, schema_known) VALUES ('w35', 'host-b', 77, '0.9.5', '[]', 35)
                """)
            let (status, out, err) = try await migrate(url)
            #expect(status == .exit(0), "\(err)")
            #expect(out.contains("Migration 41 (lease_index_drop) waits for 1 live worker(s) of an earlier release: host-b pid 77 (0.9.5)"), "\(out)")
            #expect(try await c.query("SELECT array_agg(version ORDER BY version)::text FROM pushq.schema_migrations WHERE version >= 40")
                .string(0, 0) == "{" + ([40] + Migration.all.map(\.version).filter { $0 > 41 && !(49...55).contains($0) })
                    .map(String.init).joined(separator: ",") + "}",
                "41 waits, and the gated ones after it (49–55); 40 and the later ones that are not gated applied")
            #expect(try await c.query("SELECT to_regclass('pushq.notifications_lease') IS NOT NULL").decode(Bool.self, 0, 0) == true)
            await c.close()
        }
    }
}
