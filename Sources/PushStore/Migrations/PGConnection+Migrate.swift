import Foundation
import Logging
import PGClient

extension PGConnection {
    /// An arbitrary constant: the advisory lock that serialises concurrent `pushq migrate` runs.
    static let migrationLockKey: Int64 = 0x7075_7368_716D_6967 // "pushqmig"

    /// Applies this release's migrations not yet recorded in `pushq.schema_migrations`, in order,
    /// each in its own transaction (a file that runs outside one: statement by statement), and returns the versions applied (empty when the
    /// schema is up to date). It passes over a gated migration while live workers of an
    /// earlier release hold it back, and over every gated migration after it (``MigrationGate``;
    /// ``migrationWait(_:)`` says which workers); the migrations that are not gated still apply.
    ///
    /// Safe to run from several processes at once: a session-level advisory lock makes
    /// them take turns, and each sees what the previous one recorded. Its statements may
    /// take up to `migrationDeadline` (DDL on a big table, waiting for another process's
    /// migration), however short the connection's `statementDeadline`.
    /// - Throws: `MigrationError` naming the migration whose SQL failed, or `PGError`.
    ///
    /// This release's history first (``SchemaHistory``): an empty database gets 0.4.0's whole schema
    /// from one file, with the versions it stands for recorded; one at the end of the development
    /// chain between 0.3.0 and 0.4.0 is adopted; one elsewhere in that chain is refused.
    /// - Throws: ``SchemaHistoryError`` for such a database, `MigrationError` naming the migration
    ///   whose SQL failed, or `PGError`.
    public func migrate(logger: Logger) throws -> [Int] {
        try withDeadline(atLeast: Self.migrationDeadline) {
            let done = try applyMigrations(Migration.all, history: true, logger: logger)
            // The zone names, copied again unless migration 106 copied them just now (``refreshTimeZones(logger:)``).
            if !done.contains(Self.timeZonesMigration) { try refreshTimeZones(logger: logger) }
            return done
        }
    }

    /// Applies exactly `migrations` (those not recorded yet), as ``migrate(logger:)`` applies this
    /// release's, without its history: an empty database gets them one by one. For tests that
    /// build a database as an earlier release or a development build left it.
    /// - Throws: `MigrationError` naming the migration whose SQL failed, or `PGError`.
    public func migrate(_ migrations: [Migration], logger: Logger) throws -> [Int] {
        try withDeadline(atLeast: Self.migrationDeadline) { try applyMigrations(migrations, history: false, logger: logger) }
    }

    /// How long one migration statement may wait for the server: one hour.
    static let migrationDeadline: Duration = .seconds(3600)

    private func applyMigrations(_ migrations: [Migration], history: Bool, logger: Logger) throws -> [Int] {
        // Take turns by polling with short statements rather than waiting inside one: a
        // CREATE INDEX CONCURRENTLY in the running migration waits for every open transaction,
        // and a session blocked in pg_advisory_lock would be one (a deadlock).
        while try query("SELECT pg_try_advisory_lock($1) AS locked", [Self.migrationLockKey]).firstRow().decode(Bool?.self, "locked") != true {
            usleep(100_000)
        }
        defer { _ = try? query("SELECT pg_advisory_unlock($1)", [Self.migrationLockKey]) }

        try execute("""
            CREATE SCHEMA IF NOT EXISTS pushq;
            CREATE TABLE IF NOT EXISTS pushq.schema_migrations (
                version    integer     PRIMARY KEY,
                name       text        NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            );
            """)
        var applied = try appliedVersions()

        var done: [Int] = []
        if history {
            done = try settleHistory(applied: applied, migrations, logger: logger)
            applied = try appliedVersions()
        }
        // Once a gated migration waits, every later gated one waits with it (it may rely on the
        // first); the ungated ones still apply: they never rely on a gated migration.
        var held = false
        for migration in migrations.sorted(by: { $0.version < $1.version }) where !applied.contains(migration.version) {
            let gate: MigrationGate?
            do {
                gate = try MigrationGate(of: migration)
                if gate != nil, held { continue }
                if let wait = try wait(for: migration) {
                    logger.notice("migration waits for workers of an earlier release to stop", metadata: [
                        "migration.version": "\(migration.version)", "migration.name": "\(migration.name)",
                        "migration.workers": "\(wait.workers.map { "\($0.host):\($0.pid)" }.joined(separator: ", "))",
                    ])
                    held = true
                    continue
                }
                if migration.isTransactional {
                    try applyInTransaction(migration, lockRetry: try LockRetry(of: migration), commitLock: try CommitLock(of: migration),
                                           logger: logger)
                } else {
                    // An interrupted CREATE INDEX CONCURRENTLY leaves an invalid index that
                    // IF NOT EXISTS would keep: drop such leftovers, then build again.
                    let invalid = try query("""
                        SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name
                          FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                         WHERE n.nspname = 'pushq' AND NOT i.indisvalid
                        """)
                    for row in invalid.rows {
                        if let name = try row.string("name") { try execute("DROP INDEX CONCURRENTLY IF EXISTS " + name) }
                    }
                    for statement in migration.statements { try execute(statement) }
                    try query("INSERT INTO pushq.schema_migrations (version, name) VALUES ($1, $2)", [migration.version, migration.name])
                }
            } catch let error as PGError {
                throw MigrationError(version: migration.version, name: migration.name, cause: error)
            }
            if let gate { try recordFloor(gate, of: migration) }
            logger.info("applied migration", metadata: ["migration.version": "\(migration.version)", "migration.name": "\(migration.name)"])
            done.append(migration.version)
        }
        return done
    }

    /// Runs `migration` and records it in one transaction. With a `-- pushq:lock-retry`
    /// header (`lockRetry`), the first `lockRetry.tries` tries run under `SET LOCAL
    /// lock_timeout`: a try that waits longer for a lock (SQLSTATE 55P03) is rolled back,
    /// which lets whatever queued behind its lock request go on, and the next try starts from
    /// the beginning; the last try waits as long as it takes. See ``LockRetry``. With a
    /// `-- pushq:commit-lock` header, the migration commits holding SHARE on its tables
    /// (``CommitLock``).
    private func applyInTransaction(_ migration: Migration, lockRetry: LockRetry?, commitLock: CommitLock?, logger: Logger) throws {
        let limitedTries = lockRetry?.tries ?? 0
        for attempt in 1...(limitedTries + 1) {
            // Our own constant, not input: SET takes no bound parameters.
            let limit = attempt <= limitedTries ? lockRetry.map { "SET LOCAL lock_timeout = '\($0.lockTimeoutMilliseconds)ms'" } : nil
            do {
                try transaction { connection in
                    if let limit { try connection.execute(limit) }
                    try connection.execute(migration.sql)
                    if let commitLock { try connection.takeCommitLock(commitLock) }
                    try connection.query("INSERT INTO pushq.schema_migrations (version, name) VALUES ($1, $2)",
                                         [migration.version, migration.name])
                }
                return
            } catch let error as PGError where limit != nil && error.sqlState == "55P03" {
                logger.info(attempt == limitedTries ? "migration gave way to a lock; the next try waits as long as it takes"
                                                    : "migration gave way to a lock; trying again",
                            metadata: ["migration.version": "\(migration.version)", "migration.try": "\(attempt)"])
            }
        }
    }

    /// Records in `pushq.schema_migrations.workers_know` (since 0.4.0) the schema that the workers
    /// of a gated migration just applied must know.
    private func recordFloor(_ gate: MigrationGate, of migration: Migration) throws {
        guard try hasWorkerFloor() else { return }
        try query("UPDATE pushq.schema_migrations SET workers_know = $2 WHERE version = $1", [migration.version, gate.workersKnow])
    }

    /// Why `program` of this release (a worker, `pushq serve`) must not run on this database, or
    /// nil when it may: a schema older than it needs (``Migration/requiredVersion``), or gated
    /// migrations applied that need workers knowing a later schema than it knows
    /// (``workerFloor()`` above ``Migration/latestVersion``: what it reads is gone).
    public func schemaRefusal(program: String) throws -> String? {
        let version = try schemaVersion() ?? 0
        guard version >= Migration.requiredVersion else {
            return "the database has pushq schema version \(version), \(program) needs \(Migration.requiredVersion): run `pushq migrate` first"
        }
        let floor = try workerFloor()
        guard floor <= Migration.latestVersion else {
            return "the database's pushq schema dropped what releases that know less than schema \(floor) read, and \(program) knows "
                + "schema \(Migration.latestVersion): run the release that migrated it, or a later one"
        }
        return nil
    }

    /// The highest schema that a gated migration applied to this database needs its workers to
    /// know (``MigrationGate``); 0 when none, or before 0.4.0.
    func workerFloor() throws -> Int {
        guard try hasWorkerFloor() else { return 0 }
        return try query("SELECT COALESCE(max(workers_know), 0) AS floor FROM pushq.schema_migrations").firstRow().decode(Int?.self, "floor") ?? 0
    }

    /// Whether `pushq.schema_migrations` has `workers_know` (0.4.0's part 1 adds it).
    private func hasWorkerFloor() throws -> Bool {
        try query("""
            SELECT EXISTS (SELECT 1 FROM pg_attribute
                            WHERE attrelid = to_regclass('pushq.schema_migrations') AND attname = 'workers_know' AND NOT attisdropped) AS present
            """).firstRow().decode(Bool?.self, "present") ?? false
    }

    /// The highest migration version recorded, or nil when the schema was never migrated.
    public func schemaVersion() throws -> Int? {
        let exists = try query("SELECT to_regclass('pushq.schema_migrations') IS NOT NULL AS present")
        guard try exists.firstRow().decode(Bool?.self, "present") == true else { return nil }
        return try query("SELECT max(version) AS version FROM pushq.schema_migrations").firstRow().decode(Int?.self, "version")
    }
}

/// A migration whose SQL failed; nothing of it was applied.
public struct MigrationError: Error, CustomStringConvertible {
    public var version: Int
    public var name: String
    public var cause: PGError
    public var description: String { "migration \(version) (\(name)) failed and was rolled back: \(cause)" }
}
