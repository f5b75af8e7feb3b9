/// How a migration whose header has `-- pushq:lock-retry` waits for its locks.
///
/// A lock request queues behind every open transaction on the table (a long report, a
/// `pg_dump`), and every later request on the table, a producer's INSERT included, queues
/// behind it. So such a migration runs its transaction with `SET LOCAL lock_timeout`: a try
/// that waits longer for a lock fails with SQLSTATE 55P03, is rolled back, which lets the
/// queue behind it go on, and is tried again from the start; after ``tries`` such tries, the
/// last one waits as long as it takes (the session's own `lock_timeout`).
///
/// The header line is `-- pushq:lock-retry`, with the defaults (1 s, 60 tries), or with
/// either or both of `lock_timeout=<n>ms|<n>s` and `tries=<n>`:
/// `-- pushq:lock-retry lock_timeout=200ms tries=10`. Write the migration as if it had every
/// lock at once: each try is the whole file, in one transaction. Migrations 4, 7 and 11
/// predate the directive and loop in PL/pgSQL themselves (they stay as shipped).
struct LockRetry: Sendable, Equatable {
    /// How long one try waits for a lock, in milliseconds. Defaults to 1000.
    var lockTimeoutMilliseconds = 1000
    /// Tries with the limit before the one without. Defaults to 60.
    var tries = 60

    static let directive = "-- pushq:lock-retry"
}

extension LockRetry {
    /// The directive of `migration`'s header; nil when it has none.
    ///
    /// - Throws: ``MigrationError`` naming the line when its settings are malformed, or when
    ///   the migration runs outside a transaction (a lock timeout needs one to roll back).
    init?(of migration: Migration) throws {
        guard let line = try migration.directiveLine(Self.directive, transactional: true) else { return nil }
        func malformed(_ why: String) -> MigrationError { migration.malformed(line, why) }
        self.init()
        for setting in line.dropFirst(Self.directive.count).split(separator: " ") {
            let parts = setting.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { throw malformed("expected lock_timeout=<n>ms or <n>s and tries=<n>, not \(setting)") }
            let value = parts[1]
            if parts[0] == "lock_timeout", value.hasSuffix("ms"), let ms = Self.positive(value.dropLast(2)) {
                lockTimeoutMilliseconds = ms
            } else if parts[0] == "lock_timeout", value.hasSuffix("s"), let s = Self.positive(value.dropLast()) {
                lockTimeoutMilliseconds = s * 1000
            } else if parts[0] == "tries", let n = Int(value), n >= 0 {
                tries = n
            } else {
                throw malformed("expected lock_timeout=<n>ms or <n>s and tries=<n>, not \(setting)")
            }
        }
    }

    private static func positive(_ text: Substring) -> Int? {
        Int(text).flatMap { $0 > 0 ? $0 : nil }
    }
}
