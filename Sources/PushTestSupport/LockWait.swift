import PushStore
import PGClient

/// A migration waiting for a lock another session holds, as the migration tests set it up:
/// a reader's open transaction on a table, the migration's lock request queued behind it, and
/// a producer that must not queue behind the migration.
public enum LockWait {
    /// A new session whose open transaction has read `table`: it holds ACCESS SHARE until it
    /// commits, so an `ALTER TABLE` of `table` waits for it.
    public static func reader(_ url: String, reading table: String) async throws -> PGConnection {
        let reader = try await PGConnection.connect(url, logger: TestDatabase.logger)
        try await reader.execute("BEGIN")
        try await reader.query("SELECT count(*) FROM \(table)")
        return reader
    }

    /// Whether a session comes to wait for `mode` on `table` (pg_locks, not granted) within
    /// `timeout`, polled on `observer`.
    public static func untilWaiting(_ observer: PGConnection, on table: String, mode: String = "AccessExclusiveLock",
                                    timeout: Duration = .seconds(10)) async throws -> Bool {
        try await until(timeout: timeout) {
            try await observer.query("""
                SELECT count(*) > 0 AS waiting FROM pg_locks WHERE relation = $1::regclass AND mode = $2 AND NOT granted
                """, [table, mode]).firstRow().decode(Bool?.self, "waiting") == true
        }
    }

    /// Whether `condition` comes to hold within `timeout`, polled every 25 ms.
    public static func until(timeout: Duration, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(25))
        }
        return false
    }

    /// Runs `body` on a new producer session: the error it threw, if any, and how long it took.
    /// A statement that waits 3 s for a lock fails (`lock_timeout`, SQLSTATE 55P03): a migration
    /// with lock-retry gives way after 1 s per try, so only one that holds its lock request
    /// until the reader ends makes it fail. The server counts the wait, not the wall clock of
    /// a busy machine (statement_timeout 10 s ends anything else that hangs).
    public static func produce(_ url: String, _ body: (PGConnection) async throws -> Void) async throws
        -> (error: (any Error)?, took: Duration) {
        let producer = try await PGConnection.connect(url, logger: TestDatabase.logger, statementTimeout: .seconds(10))
        try await producer.execute("SET lock_timeout = '3s'")
        let start = ContinuousClock.now
        var failure: (any Error)?
        do { try await body(producer) } catch { failure = error }
        let took = ContinuousClock.now - start
        await producer.close()
        return (failure, took)
    }
}
