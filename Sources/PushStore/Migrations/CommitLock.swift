import PGClient
/// How a migration whose header has `-- pushq:commit-lock <table>[,<table>…]` commits: holding
/// `SHARE` on those tables, taken after its SQL ran and just before its commit.
///
/// Why: `VALIDATE CONSTRAINT` reads the table under SHARE UPDATE EXCLUSIVE, which lets INSERTs
/// go on, and its commit changes the table's row descriptor (`convalidated`). An INSERT that is
/// being planned at that moment can read a column's type from the descriptor PostgreSQL just
/// freed (PostgreSQL 15: the rewriter's `build_column_default` for an identity column, after it
/// opens `pg_depend`) and fail with XX000 "cache lookup failed for type …": about one VALIDATE
/// commit in a hundred beside a producer inserting without pause. SHARE conflicts with every
/// INSERT's ROW EXCLUSIVE: each INSERT either finished before the commit or starts after it and
/// reads the new descriptor. The long read still runs under SHARE UPDATE EXCLUSIVE; only the
/// commit waits for INSERTs under way, and holds new ones for the milliseconds it takes.
///
/// The lock is taken in a savepoint with a lock timeout of ``tryMilliseconds``: a try that waits
/// longer (a transaction that keeps a row inserted and open) is rolled back to the savepoint,
/// which lets the INSERTs queued behind the request go on, and the lock is asked again, without
/// running the migration's SQL again; after ``tries`` such tries the last one waits as long as
/// it takes.
struct CommitLock: Sendable, Equatable {
    /// `pushq.<name>`, each checked by ``isTableName(_:)`` (they are spliced into `LOCK TABLE`).
    var tables: [String]

    static let directive = "-- pushq:commit-lock"
    static let tryMilliseconds = 200
    static let tries = 100
    /// Whether a directive may name `name`: one of pushq's own tables, by a plain lower-case
    /// name (`pushq.` then a letter or `_`, then letters, digits or `_`).
    static func isTableName(_ name: String) -> Bool {
        guard name.hasPrefix("pushq."), let first = name.dropFirst(6).first, first == "_" || ("a"..."z").contains(first) else { return false }
        return name.dropFirst(6).allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) }
    }
}

extension CommitLock {
    /// The directive of `migration`'s header; nil when it has none.
    ///
    /// - Throws: ``MigrationError`` naming the line when it names no table or a table that is
    ///   not pushq's, or when the migration runs outside a transaction.
    init?(of migration: Migration) throws {
        guard let line = try migration.directiveLine(Self.directive, transactional: true) else { return nil }
        func malformed(_ why: String) -> MigrationError { migration.malformed(line, why) }
        let names = line.dropFirst(Self.directive.count).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard !names.isEmpty else { throw malformed("expected the tables to lock, e.g. pushq.notifications") }
        for name in names where !Self.isTableName(name) {
            throw malformed("expected tables named pushq.<lower-case name>, not \(name)")
        }
        self.init(tables: names)
    }
}

extension PGConnection {
    /// Takes `lock`'s tables in SHARE mode inside the current transaction (``CommitLock``).
    func takeCommitLock(_ lock: CommitLock) throws(PGError) {
        for attempt in 1...(CommitLock.tries + 1) {
            try execute("SAVEPOINT pushq_commit_lock")
            do {
                // Our own constants and checked names, not input: SET and LOCK take no parameters.
                try execute(attempt <= CommitLock.tries ? "SET LOCAL lock_timeout = '\(CommitLock.tryMilliseconds)ms'" : "SET LOCAL lock_timeout = 0")
                try execute("LOCK TABLE \(lock.tables.joined(separator: ", ")) IN SHARE MODE")
                try execute("RELEASE SAVEPOINT pushq_commit_lock")
                return
            } catch {
                guard error.sqlState == "55P03", attempt <= CommitLock.tries else { throw error }
                try execute("ROLLBACK TO SAVEPOINT pushq_commit_lock")
            }
        }
    }
}
