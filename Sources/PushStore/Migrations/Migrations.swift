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

    /// Every migration of this release, in order. A new file in `migrations/` gets a line here
    /// (a test checks that the folder and this list agree).
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
        Migration(version: 12, name: "lanes_keys_signals", sql: String(decoding: PackageResources._12_lanes_keys_signals_sql, as: UTF8.self)),
        Migration(version: 13, name: "dedupe_key_index", sql: String(decoding: PackageResources._13_dedupe_key_index_sql, as: UTF8.self)),
        Migration(version: 14, name: "lane_due_index", sql: String(decoding: PackageResources._14_lane_due_index_sql, as: UTF8.self)),
        Migration(version: 15, name: "lanes_keys_signals_validate",
                  sql: String(decoding: PackageResources._15_lanes_keys_signals_validate_sql, as: UTF8.self)),
        Migration(version: 16, name: "live_activities", sql: String(decoding: PackageResources._16_live_activities_sql, as: UTF8.self)),
        Migration(version: 17, name: "devices_activity_index",
                  sql: String(decoding: PackageResources._17_devices_activity_index_sql, as: UTF8.self)),
        Migration(version: 18, name: "live_activities_validate",
                  sql: String(decoding: PackageResources._18_live_activities_validate_sql, as: UTF8.self)),
        Migration(version: 19, name: "channels", sql: String(decoding: PackageResources._19_channels_sql, as: UTF8.self)),
        Migration(version: 20, name: "channel_rows_index", sql: String(decoding: PackageResources._20_channel_rows_index_sql, as: UTF8.self)),
        Migration(version: 21, name: "channels_validate", sql: String(decoding: PackageResources._21_channels_validate_sql, as: UTF8.self)),
        Migration(version: 22, name: "api_keys", sql: String(decoding: PackageResources._22_api_keys_sql, as: UTF8.self)),
        Migration(version: 23, name: "audit_log", sql: String(decoding: PackageResources._23_audit_log_sql, as: UTF8.self)),
        Migration(version: 24, name: "device_token_index", sql: String(decoding: PackageResources._24_device_token_index_sql, as: UTF8.self)),
        Migration(version: 25, name: "cheap_checks", sql: String(decoding: PackageResources._25_cheap_checks_sql, as: UTF8.self)),
        Migration(version: 26, name: "cheap_checks_validate", sql: String(decoding: PackageResources._26_cheap_checks_validate_sql, as: UTF8.self)),
        Migration(version: 27, name: "lane_statistics", sql: String(decoding: PackageResources._27_lane_statistics_sql, as: UTF8.self)),
        Migration(version: 28, name: "device_token_index_settled",
                  sql: String(decoding: PackageResources._28_device_token_index_settled_sql, as: UTF8.self)),
        Migration(version: 29, name: "device_token_index_drop",
                  sql: String(decoding: PackageResources._29_device_token_index_drop_sql, as: UTF8.self)),
        Migration(version: 30, name: "token_hash_index", sql: String(decoding: PackageResources._30_token_hash_index_sql, as: UTF8.self)),
        Migration(version: 31, name: "device_token_index_settled_drop",
                  sql: String(decoding: PackageResources._31_device_token_index_settled_drop_sql, as: UTF8.self)),
        Migration(version: 32, name: "devices_invalidated_index",
                  sql: String(decoding: PackageResources._32_devices_invalidated_index_sql, as: UTF8.self)),
        Migration(version: 33, name: "due", sql: String(decoding: PackageResources._33_due_sql, as: UTF8.self)),
        Migration(version: 34, name: "due_fill", sql: String(decoding: PackageResources._34_due_fill_sql, as: UTF8.self)),
        Migration(version: 35, name: "leases", sql: String(decoding: PackageResources._35_leases_sql, as: UTF8.self)),
        Migration(version: 36, name: "lease_recovery", sql: String(decoding: PackageResources._36_lease_recovery_sql, as: UTF8.self)),
        Migration(version: 37, name: "due_expiry_triggers",
                  sql: String(decoding: PackageResources._37_due_expiry_triggers_sql, as: UTF8.self)),
        Migration(version: 38, name: "due_expiry_index", sql: String(decoding: PackageResources._38_due_expiry_index_sql, as: UTF8.self)),
        Migration(version: 39, name: "due_expiry_fill", sql: String(decoding: PackageResources._39_due_expiry_fill_sql, as: UTF8.self)),
        Migration(version: 40, name: "leases_for_earlier_rows",
                  sql: String(decoding: PackageResources._40_leases_for_earlier_rows_sql, as: UTF8.self)),
        Migration(version: 41, name: "lease_index_drop", sql: String(decoding: PackageResources._41_lease_index_drop_sql, as: UTF8.self)),
        Migration(version: 42, name: "outcomes", sql: String(decoding: PackageResources._42_outcomes_sql, as: UTF8.self)),
        Migration(version: 43, name: "due_retrying", sql: String(decoding: PackageResources._43_due_retrying_sql, as: UTF8.self)),
        Migration(version: 44, name: "due_retrying_fill", sql: String(decoding: PackageResources._44_due_retrying_fill_sql, as: UTF8.self)),
        Migration(version: 45, name: "worker_floor", sql: String(decoding: PackageResources._45_worker_floor_sql, as: UTF8.self)),
        Migration(version: 46, name: "created_index",
                  sql: String(decoding: PackageResources._46_created_index_sql, as: UTF8.self)),
        Migration(version: 47, name: "token_created_index",
                  sql: String(decoding: PackageResources._47_token_created_index_sql, as: UTF8.self)),
        Migration(version: 48, name: "channel_created_index",
                  sql: String(decoding: PackageResources._48_channel_created_index_sql, as: UTF8.self)),
        Migration(version: 49, name: "due_index_drop",
                  sql: String(decoding: PackageResources._49_due_index_drop_sql, as: UTF8.self)),
        Migration(version: 50, name: "lane_due_index_drop",
                  sql: String(decoding: PackageResources._50_lane_due_index_drop_sql, as: UTF8.self)),
        Migration(version: 51, name: "expiry_index_drop",
                  sql: String(decoding: PackageResources._51_expiry_index_drop_sql, as: UTF8.self)),
        Migration(version: 52, name: "finished_index_drop",
                  sql: String(decoding: PackageResources._52_finished_index_drop_sql, as: UTF8.self)),
        Migration(version: 53, name: "channel_waiting_index_drop",
                  sql: String(decoding: PackageResources._53_channel_waiting_index_drop_sql, as: UTF8.self)),
        Migration(version: 54, name: "token_hash_index_drop",
                  sql: String(decoding: PackageResources._54_token_hash_index_drop_sql, as: UTF8.self)),
        Migration(version: 55, name: "fillfactor", sql: String(decoding: PackageResources._55_fillfactor_sql, as: UTF8.self)),
        Migration(version: 56, name: "rules_trigger", sql: String(decoding: PackageResources._56_rules_trigger_sql, as: UTF8.self)),
        Migration(version: 57, name: "lease_ids_inline",
                  sql: String(decoding: PackageResources._57_lease_ids_inline_sql, as: UTF8.self)),
        Migration(version: 58, name: "channels_once", sql: String(decoding: PackageResources._58_channels_once_sql, as: UTF8.self)),
        Migration(version: 59, name: "lanes_notify", sql: String(decoding: PackageResources._59_lanes_notify_sql, as: UTF8.self)),
        Migration(version: 60, name: "audit_client", sql: String(decoding: PackageResources._60_audit_client_sql, as: UTF8.self)),
    ]
}
