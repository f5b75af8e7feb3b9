import Foundation
import Logging
import PGClient

/// pushq's schema history as it was released, and what `pushq migrate` does with a database at
/// each point of it.
///
/// 0.3.0 shipped migrations 1 to 11. 0.4.0 ships the upgrade from 11 as its release files, 100
/// to 104 (``releaseVersions``), and the whole 0.4.0 schema as one file for an empty database
/// (``freshSchema``): a fresh install runs that file and records every version up to 104, as if it
/// had applied them, so that the version checks (``Migration/requiredVersion``, the workers'
/// `schema_known`, the gate's floor) see what they see after the upgrade. Between the two
/// releases the schema was developed as migrations 12 to 60 (``devChain``), which no release
/// shipped: a database a development build took to the end of that chain has 0.4.0's schema and is
/// adopted (the release's versions recorded, nothing run); one anywhere else in it is refused
/// with what to do (``SchemaHistoryError``). A test compares `pg_dump --schema-only` of the three
/// ways to 0.4.0 (MigrationHistoryTests). Migrations after 0.4.0 take the next number after 104.
public enum SchemaHistory {
    /// The last schema of 0.3.0.
    public static let release030 = 11

    /// The development schemas between 0.3.0 and 0.4.0, never released.
    public static let devChain: ClosedRange<Int> = 12...60

    /// A commit whose `pushq migrate` takes a database anywhere in ``devChain`` to its end (60).
    public static let devChainCommit = "8a2eb3378d60"

    /// 0.4.0's upgrade from 0.3.0, in ``Migration/all``.
    public static let releaseVersions = [100, 101, 102, 103, 104]

    /// The whole schema as of 0.4.0 (`Migrations/SQL/schema_0_4_0.sql`): what migrations 1 to 11
    /// and ``releaseVersions`` make, run in one transaction on an empty database.
    static let freshSchema = String(decoding: PackageResources.schema_0_4_0_sql, as: UTF8.self)

    /// The migrations ``freshSchema`` stands for.
    static let freshThrough = 104
}

/// A database whose pushq schema this release cannot migrate: one a development build left
/// between 0.3.0 and 0.4.0, short of the end of that chain.
public struct SchemaHistoryError: Error, CustomStringConvertible {
    /// The highest version the database recorded.
    public var version: Int
    /// The development migrations up to ``version`` that it has not applied (gated ones held back).
    public var missing: [Int]

    public var description: String {
        let hash = SchemaHistory.devChainCommit
        let end = SchemaHistory.devChain.upperBound
        let gaps = missing.isEmpty ? "" : " (migrations \(missing.map(String.init).joined(separator: ", ")) not applied)"
        return "the database's pushq schema \(version) is an unreleased development schema between 0.3.0 and 0.4.0\(gaps): "
            + "migrate it to schema \(end) with pushq built from commit \(hash) (`git checkout \(hash) && swift build -c release && "
            + ".build/release/pushq migrate`, run again once no worker older than that build is live, until it reports version \(end)), "
            + "then run this release's `pushq migrate`"
    }
}

extension PGConnection {
    /// Brings a database that is empty, or at the end of ``SchemaHistory/devChain``, to where the
    /// release's migrations can take it: runs ``SchemaHistory/freshSchema`` and records what it
    /// stands for, or records the release's versions (adoption). Returns the versions it ran.
    ///
    /// - Throws: ``SchemaHistoryError`` for a database elsewhere in the development chain.
    func settleHistory(applied: Set<Int>, _ migrations: [Migration], logger: Logger) throws -> [Int] {
        if applied.isEmpty {
            let covered = migrations.filter { $0.version <= SchemaHistory.freshThrough }
            try transaction { connection in
                try connection.execute(SchemaHistory.freshSchema)
                for migration in covered { try connection.record(migration) }
            }
            logger.info("created the pushq schema of 0.4.0 from one file", metadata: ["migration.version": "\(SchemaHistory.freshThrough)"])
            return covered.map(\.version)
        }
        let dev = applied.intersection(SchemaHistory.devChain)
        guard !dev.isEmpty else { return [] }
        guard dev.count == SchemaHistory.devChain.count, applied.isSuperset(of: 1...SchemaHistory.release030) else {
            let version = applied.max() ?? 0
            let missing = (1...min(version, SchemaHistory.devChain.upperBound)).filter { !applied.contains($0) }
            throw SchemaHistoryError(version: version, missing: missing)
        }
        let adopted = migrations.filter { SchemaHistory.releaseVersions.contains($0.version) && !applied.contains($0.version) }
        guard !adopted.isEmpty else { return [] }
        try transaction { connection in
            for migration in adopted { try connection.record(migration) }
        }
        logger.notice("adopted a database at the end of the development chain as pushq 0.4.0's schema (the same schema); nothing run",
                      metadata: ["migration.version": "\(SchemaHistory.devChain.upperBound)"])
        return []
    }

    /// Records `migration` as applied, with the schema its gate needs workers to know.
    func record(_ migration: Migration) throws {
        let floor = try MigrationGate(of: migration)?.workersKnow
        try query("INSERT INTO pushq.schema_migrations (version, name, workers_know) VALUES ($1, $2, $3)",
                  [migration.version, migration.name, floor])
    }
}
