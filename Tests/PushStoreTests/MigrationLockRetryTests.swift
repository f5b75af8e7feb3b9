import Foundation
import InMemoryLogging
import Logging
@testable import PushStore
import Testing
import PGClient

/// `-- pushq:lock-retry`: the migrator runs such a migration with a short lock timeout and
/// tries again, so that it never holds producers up behind a long transaction.
@Suite("Migration lock retries")
struct MigrationLockRetryTests {
    static func migration(_ sql: String) -> Migration { Migration(version: 1000, name: "test", sql: sql) }

    @Test("the directive: in the header, with its defaults or its settings", arguments: [
        ("-- pushq:lock-retry\nALTER TABLE t ADD c int;", LockRetry(lockTimeoutMilliseconds: 1000, tries: 60)),
        ("-- what it does\n-- pushq:lock-retry lock_timeout=200ms tries=3\nALTER TABLE t ADD c int;", LockRetry(lockTimeoutMilliseconds: 200, tries: 3)),
        ("-- pushq:lock-retry lock_timeout=2s\nALTER TABLE t ADD c int;", LockRetry(lockTimeoutMilliseconds: 2000, tries: 60)),
        ("-- pushq:lock-retry tries=0\nALTER TABLE t ADD c int;", LockRetry(lockTimeoutMilliseconds: 1000, tries: 0)),
        ("-- no directive\nALTER TABLE t ADD c int;", nil),
        ("-- header\nALTER TABLE t ADD c int;\n-- pushq:lock-retry", nil),
        ("-- pushq:lock-retryer\nALTER TABLE t ADD c int;", nil),
    ] as [(String, LockRetry?)])
    func directive(sql: String, expected: LockRetry?) throws {
        #expect(try LockRetry(of: Self.migration(sql)) == expected)
    }

    @Test("a malformed directive, or one outside a transaction, is refused naming the line", arguments: [
        "-- pushq:lock-retry tries=-1", "-- pushq:lock-retry lock_timeout=1m", "-- pushq:lock-retry lock_timeout=0ms",
        "-- pushq:lock-retry retries=3", "-- pushq:lock-retry tries", "-- pushq:no-transaction\n-- pushq:lock-retry",
    ])
    func malformed(header: String) {
        let error = #expect(throws: MigrationError.self) { try LockRetry(of: Self.migration(header + "\nSELECT 1;")) }
        #expect(error?.description.contains("-- pushq:lock-retry") == true, "\(String(describing: error))")
    }

    // 4, 7 and 11 loop in PL/pgSQL themselves; the release's part 1 locks notifications and devices, 200 ms at a time.
    @Test("0.3.0's migrations stay as they shipped, without the directive; the release's first part carries it")
    func shipped() throws {
        for migration in Migration.all where migration.version <= 11 {
            #expect(try LockRetry(of: migration) == nil, "\(migration.version)")
        }
        let part1 = try #require(Migration.all.first { $0.version == SchemaHistory.releaseVersions[0] })
        #expect(try LockRetry(of: part1) == LockRetry(lockTimeoutMilliseconds: 200, tries: 100), "it adds columns and drops checks")
    }

    /// with a lock held by another session, the migration gives way `tries` times, a producer is not held up,
    /// then it waits without a limit and applies when the lock is released
    @Test("with a lock held elsewhere, a migration gives way `tries` times without holding up producers, then waits and applies")
    func givesWayThenWaits() async throws {
        try await TestDatabase.with { url in
            let migrator = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let pid = try await migrator.query("SELECT pg_backend_pid()").decode(Int.self, 0, 0)
            let observer = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let reader = try await LockWait.reader(url, reading: "pushq.notifications")
            let logs = InMemoryLogHandler()
            var logger = Logger(label: "pushq.test") { _ in logs }
            logger.logLevel = .info
            let migration = Self.migration("""
                -- pushq:lock-retry lock_timeout=500ms tries=6
                -- A column added while a reader holds the table: ACCESS EXCLUSIVE waits for it.
                ALTER TABLE pushq.notifications ADD COLUMN lock_retry_test integer;
                """)
            async let applied = migrator.migrate(Migration.all + [migration], logger: logger)
            #expect(try await LockWait.untilWaiting(observer, on: "pushq.notifications"), "the migration waits for the lock")
            // Queued behind the migration's lock request, an INSERT goes on when that try gives way (500 ms);
            // held until the reader ends (never, before this returns), its 3 s lock timeout would fail it.
            let producer = try await LockWait.produce(url) { producer in
                try await producer.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{}')", [String(repeating: "e", count: 64)])
            }
            // The last try has no limit: it is still waiting 5 s (ten limits) after it began.
            let unlimited = try await LockWait.until(timeout: .seconds(60)) {
                try await observer.query("""
                    SELECT count(*) > 0 FROM pg_stat_activity
                     WHERE pid = $1 AND wait_event_type = 'Lock' AND now() - query_start > interval '5 seconds'
                    """, [pid]).decode(Bool.self, 0, 0) == true
            }
            try await reader.execute("COMMIT")  // before any expectation can end the test: the migration waits for it
            #expect(producer.error == nil, "the INSERT waited behind the migration: \(String(describing: producer.error))")
            #expect(unlimited, "the last try waits without a lock timeout")
            #expect(try await applied == [1000])
            let gaveWay = logs.entries.map { "\($0.message)" }.filter { $0.hasPrefix("migration gave way to a lock") }
            #expect(gaveWay.count == 6, "\(logs.entries)")
            #expect(gaveWay.last?.hasSuffix("the next try waits as long as it takes") == true)
            let column = try await observer.query("""
                SELECT count(*) FROM information_schema.columns WHERE table_schema = 'pushq' AND table_name = 'notifications' AND column_name = 'lock_retry_test'
                """)
            #expect(try column.decode(Int.self, 0, 0) == 1)
            #expect(try await observer.query("SELECT name FROM pushq.schema_migrations WHERE version = 1000").string(0, 0) == "test")
            for c in [migrator, reader, observer] { await c.close() }
        }
    }
}
