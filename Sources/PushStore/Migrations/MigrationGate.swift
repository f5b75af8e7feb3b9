import PGClient
/// A migration whose header has `-- pushq:after-workers <version>`: `pushq migrate` applies it
/// only once no live worker (heartbeat within ``PGConnection/workerLivenessSeconds``) registered
/// a `schema_known` below `version` in `pushq.workers` (0.3.0 workers register none, and count
/// as below every version).
///
/// Such a migration drops what workers of earlier releases read (an index whose loss would turn
/// their statements into scans of the whole table). A migrator that meets it while such a worker
/// is live passes over it and over every gated migration after it (which may rely on it), applies
/// the others, and says which workers it waits for; running it again once they are stopped
/// applies the rest. Workers need every migration that is not gated (``Migration/requiredVersion``),
/// and none that is, so a rolling upgrade starts them before the gated migrations run. A gated
/// migration must work whether or not the workers of its own release are running; a migration
/// that is not gated must not rely on a gated one (it may run before it), and a later gated one
/// may.
struct MigrationGate: Sendable, Equatable {
    /// The lowest `schema_known` a live worker may have.
    var workersKnow: Int

    static let directive = "-- pushq:after-workers"
}

extension MigrationGate {
    /// The directive of `migration`'s header; nil when it has none.
    ///
    /// - Throws: ``MigrationError`` naming the line when it does not name a positive version at
    ///   most the migration's own.
    init?(of migration: Migration) throws {
        guard let line = try migration.directiveLine(Self.directive, transactional: false) else { return nil }
        let value = line.dropFirst(Self.directive.count).trimmingCharacters(in: .whitespaces)
        guard let version = Int(value), version >= 1, version <= migration.version else {
            throw migration.malformed(line, "expected a schema version from 1 to \(migration.version), e.g. \(Self.directive) 35")
        }
        self.init(workersKnow: version)
    }
}

/// A migration that `pushq migrate` did not apply because live workers of an earlier release
/// still run (``MigrationGate``).
public struct MigrationWait: Sendable {
    public var version: Int
    public var name: String
    /// The `schema_known` each live worker must have at least.
    public var workersKnow: Int
    /// The live workers with a lower (or no) `schema_known`, oldest first.
    public var workers: [WorkerRecord]
}

extension PGConnection {
    /// The first gated migration of `migrations` not applied yet if live workers hold it back;
    /// nil when there is none.
    public func migrationWait(_ migrations: [Migration] = Migration.all) throws -> MigrationWait? {
        guard try schemaVersion() != nil else { return nil }
        let applied = try appliedVersions()
        let gated = try migrations.sorted(by: { $0.version < $1.version }).filter { try MigrationGate(of: $0) != nil }
        guard let next = gated.first(where: { !applied.contains($0.version) }) else { return nil }
        return try wait(for: next)
    }

    /// What holds `migration` back: when it is gated, the live workers whose `schema_known` is
    /// NULL or below its gate; nil when it is not gated or none is.
    func wait(for migration: Migration) throws -> MigrationWait? {
        guard let gate = try MigrationGate(of: migration) else { return nil }
        let workers = try liveWorkers().filter { ($0.schemaKnown ?? 0) < gate.workersKnow }
        return workers.isEmpty ? nil : MigrationWait(version: migration.version, name: migration.name, workersKnow: gate.workersKnow,
                                                     workers: workers)
    }

    /// The versions recorded in `pushq.schema_migrations`.
    func appliedVersions() throws -> Set<Int> {
        let rows = try query("SELECT version FROM pushq.schema_migrations")
        var applied = Set<Int>()
        for row in rows.rows { if let v = try row.decode(Int?.self, "version") { applied.insert(v) } }
        return applied
    }
}
