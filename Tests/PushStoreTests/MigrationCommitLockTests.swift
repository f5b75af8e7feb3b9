import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// `-- pushq:commit-lock`: a migration that validates constraints commits holding SHARE on its
/// tables, so that no INSERT is being planned while its commit changes the row descriptor
/// (PostgreSQL 15 can then fail the INSERT with XX000 "cache lookup failed for type …").
@Suite("Migration commit locks")
struct MigrationCommitLockTests {
    static func migration(_ sql: String) -> Migration { Migration(version: 1001, name: "commit_lock_test", sql: sql) }

    @Test("the directive: in the header, one table or several", arguments: [
        ("-- pushq:commit-lock pushq.notifications\nSELECT 1;", ["pushq.notifications"]),
        ("-- what it does\n-- pushq:commit-lock pushq.notifications, pushq.devices\nSELECT 1;", ["pushq.notifications", "pushq.devices"]),
        ("-- no directive\nSELECT 1;", nil),
        ("SELECT 1;\n-- pushq:commit-lock pushq.notifications", nil),
    ] as [(String, [String]?)])
    func directive(sql: String, tables: [String]?) throws {
        #expect(try CommitLock(of: Self.migration(sql))?.tables == tables)
    }

    @Test("a directive that names no table, a table not pushq's, or runs outside a transaction is refused naming the line", arguments: [
        "-- pushq:commit-lock", "-- pushq:commit-lock public.notifications", "-- pushq:commit-lock pushq.notifications; DROP TABLE x",
        "-- pushq:commit-lock pushq.Notifications", "-- pushq:commit-lock pushq.", "-- pushq:no-transaction\n-- pushq:commit-lock pushq.notifications",
    ])
    func malformed(header: String) {
        let error = #expect(throws: MigrationError.self) { try CommitLock(of: Self.migration(header + "\nSELECT 1;")) }
        #expect(error?.description.contains("-- pushq:commit-lock") == true, "\(String(describing: error))")
    }

    @Test("the migrations that validate constraints of a table producers write carry it: 5, 8 and the release's data part")
    func shipped() throws {
        var carrying: [Int: [String]] = [:]
        for migration in Migration.all {
            if let lock = try CommitLock(of: migration) { carrying[migration.version] = lock.tables }
            let statements = migration.sql.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("--") }
            if statements.contains(where: { $0.contains("VALIDATE CONSTRAINT") }) {
                #expect(try CommitLock(of: migration) != nil, "migration \(migration.version) validates without the commit lock")
            }
        }
        #expect(carrying == [5: ["pushq.notifications"], 8: ["pushq.notifications", "pushq.devices"], 102: ["pushq.devices"]])
    }

    /// the commit waits for an INSERT under way (its SHARE request gives way every 200 ms, the migration's
    /// SQL not run again), then applies once the INSERT commits
    @Test("the commit waits for an INSERT under way, giving way every 200 ms, then applies once the INSERT commits")
    func waitsForInsertUnderWay() async throws {
        try await TestDatabase.with { url in
            let producer = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let observer = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let migrator = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await producer.execute("BEGIN")
            try await producer.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{}')", [String(repeating: "c", count: 64)])
            let migration = Self.migration("""
                -- pushq:commit-lock pushq.notifications
                CREATE TABLE pushq.commit_lock_runs (n int);
                INSERT INTO pushq.commit_lock_runs VALUES (1);
                """)
            async let applied = migrator.migrate(Migration.all + [migration], logger: TestDatabase.logger)
            #expect(try await LockWait.untilWaiting(observer, on: "pushq.notifications", mode: "ShareLock"), "the commit waits for SHARE")
            // It gives way and asks again: its lock request is seen again after a new start.
            let firstWait = try await observer.query("""
                SELECT query_start::text FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'LOCK TABLE%'
                """).string(0, 0)
            let askedAgain = try await LockWait.until(timeout: .seconds(60)) {
                let r = try await observer.query("""
                    SELECT query_start::text FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'LOCK TABLE%'
                    """)
                return r.count == 1 && r.string(0, 0) != firstWait
            }
            try await producer.execute("COMMIT")
            #expect(askedAgain, "a try that waits 200 ms gives way and asks again")
            #expect(try await applied == [1001])
            let r = try await observer.query("SELECT (SELECT count(*) FROM pushq.commit_lock_runs), (SELECT count(*) FROM pushq.notifications)")
            #expect(r.string(0, 0) == "1", "the migration's SQL ran once")
            #expect(r.string(0, 1) == "1", "the INSERT kept")
            for c in [producer, observer, migrator] { await c.close() }
        }
    }
}
