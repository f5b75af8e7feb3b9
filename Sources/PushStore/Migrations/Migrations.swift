import Foundation
import PGClient

/// One numbered schema change, embedded in the binary from `migrations/NNN_name.sql`.
///
/// A file's header (its leading `--` lines) may hold directives for the migrator:
/// `-- pushq:no-transaction` as its first line runs it outside a transaction (one statement
/// such as `CREATE INDEX CONCURRENTLY`); `-- pushq:lock-retry` runs it with a short lock
/// timeout, trying again when a lock is not granted in time (``LockRetry``);
/// `-- pushq:commit-lock <tables>` commits holding SHARE on them (``CommitLock``);
/// `-- pushq:after-workers <version>` waits for workers of earlier releases to stop
/// (``MigrationGate``).
public struct Migration: Sendable, Equatable {
    /// Applied in increasing order; recorded in `pushq.schema_migrations`.
    public var version: Int
    public var name: String
    public var sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// Whether the migration runs in a transaction: all do but those whose file starts with
    /// `-- pushq:no-transaction` (one statement that cannot, e.g. `CREATE INDEX CONCURRENTLY`).
    public var isTransactional: Bool { !sql.hasPrefix("-- pushq:no-transaction") }

    /// The statements of a migration that runs outside a transaction, run one at a time (several
    /// `CREATE INDEX CONCURRENTLY` in one file): its text cut after each line that ends with `;`
    /// outside a dollar-quoted body (`$$`), pieces of comments only left out. One statement, with or
    /// without its `;`, is one piece.
    var statements: [String] {
        var pieces: [String] = []
        var current: [Substring] = []
        var quoted = false
        func flush() {
            if current.contains(where: { let t = $0.trimmingCharacters(in: .whitespaces); return !t.isEmpty && !t.hasPrefix("--") }) {
                pieces.append(current.joined(separator: "\n"))
            }
            current = []
        }
        for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
            current.append(line)
            if line.components(separatedBy: "$$").count % 2 == 0 { quoted.toggle() }
            if !quoted, line.trimmingCharacters(in: .whitespaces).hasSuffix(";") { flush() }
        }
        flush()
        return pieces
    }

    /// The file's header: its leading comment lines (up to the first line that is not one).
    var header: [Substring] {
        Array(sql.split(separator: "\n", omittingEmptySubsequences: false).prefix { $0.hasPrefix("--") })
    }

    /// The header line of `directive` (the directive alone, or followed by a space and its
    /// settings), nil when the header has none; a directive that needs a transaction to roll back
    /// to (`transactional`) in a migration that runs outside one is refused.
    ///
    /// - Throws: ``MigrationError`` naming the line (``malformed(_:_:)``).
    func directiveLine(_ directive: String, transactional: Bool) throws -> Substring? {
        guard let line = header.first(where: { $0 == directive || $0.hasPrefix(directive + " ") }) else { return nil }
        if transactional, !isTransactional { throw malformed(line, "expected a migration that runs in a transaction") }
        return line
    }

    /// The error for a malformed directive `line` of this migration: the line, and `why`.
    func malformed(_ line: Substring, _ why: String) -> MigrationError {
        MigrationError(version: version, name: name, cause: PGError(code: .invalidValue, message: "\(line): \(why)"))
    }
}

extension Migration {
    /// The highest schema version this release knows: what its workers need, and register as
    /// `schema_known` in `pushq.workers`.
    public static var latestVersion: Int { all.map(\.version).max() ?? 0 }

    /// The schema version the workers and `pushq serve` of this release need: the last migration
    /// that is not gated (``MigrationGate``: gated ones wait for this release's workers to replace
    /// the earlier ones, and this release works with or without them). `pushq migrate` applies
    /// every migration that is not gated, in order, whatever gated ones wait.
    public static var requiredVersion: Int { requiredVersion(of: all) }

    /// ``requiredVersion`` of `migrations`.
    static func requiredVersion(of migrations: [Migration]) -> Int {
        migrations.filter { (try? MigrationGate(of: $0)) == nil }.map(\.version).max() ?? 0
    }

    /// Every migration of this release, in order: 0.3.0's (1 to 11) and 0.4.0's release files
    /// (``SchemaHistory/releaseVersions``). A new file in `migrations/` gets a line here (a test
    /// checks that the folder and this list agree); after 0.4.0 the next number is 105.
    public static let all: [Migration] = [
        Migration(version: 1, name: "schema", sql: String(decoding: PackageResources._01_schema_sql, as: UTF8.self)),
        Migration(version: 2, name: "faults_that_last", sql: String(decoding: PackageResources._02_faults_that_last_sql, as: UTF8.self)),
        Migration(version: 3, name: "expiry_index", sql: String(decoding: PackageResources._03_expiry_index_sql, as: UTF8.self)),
        Migration(version: 4, name: "row_constraints", sql: String(decoding: PackageResources._04_row_constraints_sql, as: UTF8.self)),
        Migration(version: 5, name: "row_constraints_validate",
                  sql: String(decoding: PackageResources._05_row_constraints_validate_sql, as: UTF8.self)),
        Migration(version: 6, name: "retention_index", sql: String(decoding: PackageResources._06_retention_index_sql, as: UTF8.self)),
        Migration(version: 7, name: "provider", sql: String(decoding: PackageResources._07_provider_sql, as: UTF8.self)),
        Migration(version: 8, name: "provider_validate", sql: String(decoding: PackageResources._08_provider_validate_sql, as: UTF8.self)),
        Migration(version: 9, name: "devices_token_environment_index",
                  sql: String(decoding: PackageResources._09_devices_token_environment_index_sql, as: UTF8.self)),
        Migration(version: 10, name: "devices_provider_key_index",
                  sql: String(decoding: PackageResources._10_devices_provider_key_index_sql, as: UTF8.self)),
        Migration(version: 11, name: "devices_provider_key", sql: String(decoding: PackageResources._11_devices_provider_key_sql, as: UTF8.self)),
        Migration(version: 100, name: "release_0_4_0", sql: String(decoding: PackageResources._00_release_0_4_0_sql, as: UTF8.self)),
        Migration(version: 101, name: "release_0_4_0_indexes",
                  sql: String(decoding: PackageResources._01_release_0_4_0_indexes_sql, as: UTF8.self)),
        Migration(version: 102, name: "release_0_4_0_data", sql: String(decoding: PackageResources._02_release_0_4_0_data_sql, as: UTF8.self)),
        Migration(version: 103, name: "release_0_4_0_after_workers",
                  sql: String(decoding: PackageResources._03_release_0_4_0_after_workers_sql, as: UTF8.self)),
        Migration(version: 104, name: "release_0_4_0_after_workers_indexes",
                  sql: String(decoding: PackageResources._04_release_0_4_0_after_workers_indexes_sql, as: UTF8.self)),
        Migration(version: 105, name: "webpush", sql: String(decoding: PackageResources._05_webpush_sql, as: UTF8.self)),
        Migration(version: 106, name: "time_zones", sql: String(decoding: PackageResources._06_time_zones_sql, as: UTF8.self)),
        Migration(version: 107, name: "quiet_hours", sql: String(decoding: PackageResources._07_quiet_hours_sql, as: UTF8.self)),
        Migration(version: 108, name: "due_held_index", sql: String(decoding: PackageResources._08_due_held_index_sql, as: UTF8.self)),
        Migration(version: 109, name: "lane_quiet_hours",
                  sql: String(decoding: PackageResources._09_lane_quiet_hours_sql, as: UTF8.self)),
        Migration(version: 110, name: "tenants", sql: String(decoding: PackageResources._10_tenants_sql, as: UTF8.self)),
        Migration(version: 111, name: "due_tenant_index", sql: String(decoding: PackageResources._11_due_tenant_index_sql, as: UTF8.self)),
        Migration(version: 112, name: "frequency_caps", sql: String(decoding: PackageResources._12_frequency_caps_sql, as: UTF8.self)),
        Migration(version: 113, name: "lane_frequency_caps",
                  sql: String(decoding: PackageResources._13_lane_frequency_caps_sql, as: UTF8.self)),
        Migration(version: 114, name: "enqueue_for_user_tenant",
                  sql: String(decoding: PackageResources._14_enqueue_for_user_tenant_sql, as: UTF8.self)),
        Migration(version: 115, name: "due_tenanted_index", sql: String(decoding: PackageResources._15_due_tenanted_index_sql, as: UTF8.self)),
    ]
}
