import Foundation
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// 0.4.0's schema history: an empty database gets the whole schema from one file, a 0.3.0
/// database (schema 11) upgrades through the release files, and a database a development build
/// left at the end of the chain 12–60 is adopted; all three are one schema.
@Suite("Migration history")
struct MigrationHistoryTests {
    /// Runs `body` with a fresh, unmigrated database's URL and a connection to it.
    func withDatabase<T>(_ body: (String, PGConnection) async throws -> T) async throws -> T {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            do {
                let value = try await body(url, c)
                await c.close()
                return value
            } catch {
                await c.close()
                throw error
            }
        }
    }

    /// The migrations after 0.4.0's release files (105 on): every path applies them after it settles.
    static let afterRelease = Migration.all.map(\.version).filter { $0 > SchemaHistory.freshThrough }

    /// The versions recorded, in order, with `workers_know` where a gated migration set it.
    func recorded(_ c: PGConnection) async throws -> [String] {
        let r = try await c.query("SELECT version || COALESCE(' workers_know ' || workers_know, '') FROM pushq.schema_migrations ORDER BY version")
        return try (0..<r.count).map { try r.decode(String.self, $0, 0) ?? "" }
    }

    // Each dump is compared whole: constraint and index names, column order, function bodies,
    // triggers, storage parameters (fillfactor, toast_tuple_target), sequences, grants, comments.
    /// pg_dump --schema-only is identical after a fresh install, after 0.3.0 plus the release files, and
    /// after the dev chain 1-60
    @Test("pg_dump --schema-only is identical after a fresh install, after 0.3.0 plus the release files, and after the dev chain")
    func schemaEquality() async throws {
        try await withDatabase { freshURL, fresh in
            _ = try await fresh.migrate(logger: TestDatabase.logger)
            try await withDatabase { upgradedURL, upgraded in
                let released = Migration.all.filter { $0.version <= 11 }
                #expect(try await upgraded.migrate(released, logger: TestDatabase.logger) == Array(1...11))
                #expect(try await upgraded.migrate(logger: TestDatabase.logger) == SchemaHistory.releaseVersions + Self.afterRelease)
                try await withDatabase { chainURL, chain in
                    #expect(try await chain.migrate(DevChain.all, logger: TestDatabase.logger) == Array(1...SchemaHistory.devChain.upperBound))
                    // Adopted as 0.4.0's schema, then the migrations after it, as a fresh install gets them.
                    #expect(try await chain.migrate(logger: TestDatabase.logger) == Self.afterRelease)
                    let (a, b, c) = (try await SchemaDump.of(freshURL), try await SchemaDump.of(upgradedURL), try await SchemaDump.of(chainURL))
                    #expect(a.contains("CREATE TABLE pushq.notifications"), "the dump holds the schema")
                    #expect(a == b, "fresh install versus 0.3.0 + release files: \(SchemaDump.firstDifference(a, b))")
                    #expect(b == c, "0.3.0 + release files versus the dev chain: \(SchemaDump.firstDifference(b, c))")
                }
            }
        }
    }

    @Test("a fresh install records what the upgrade from 0.3.0 records: the same versions, floor and version checks")
    func freshRecordsTheUpgradesVersions() async throws {
        try await withDatabase { _, fresh in
            let applied = try await fresh.migrate(logger: TestDatabase.logger)
            #expect(applied == Migration.all.map(\.version))
            try await withDatabase { _, upgraded in
                _ = try await upgraded.migrate(Migration.all.filter { $0.version <= 11 }, logger: TestDatabase.logger)
                _ = try await upgraded.migrate(logger: TestDatabase.logger)
                #expect(try await recorded(fresh) == recorded(upgraded))
                #expect(try await fresh.workerFloor() == upgraded.workerFloor())
            }
            #expect(try await fresh.schemaVersion() == Migration.latestVersion)
            #expect(try await fresh.schemaRefusal(program: "a worker") == nil)
            #expect(try await fresh.migrate(logger: TestDatabase.logger).isEmpty, "nothing left to apply")
        }
    }

    // "Nothing run": a row left `sending` without a lease row would get one from part 4 of the
    // release (the lease rows of 0.3.0's rows in flight); adopted, it has none.
    @Test("a database at the whole dev chain 1-60 is adopted: the release's versions recorded, nothing run")
    func devChainAdopted() async throws {
        try await withDatabase { _, c in
            _ = try await c.migrate(DevChain.all, logger: TestDatabase.logger)
            try await c.execute("""
                INSERT INTO pushq.notifications (device_token, payload, topic, status, locked_by, locked_until, attempts)
                VALUES (repeat('ab', 32), '{"aps":{}}', 'com.example', 'sending', 'gone-worker', now() + interval '1 minute', 1)
                """)
            #expect(try await c.migrate(logger: TestDatabase.logger) == Self.afterRelease, "none of the release's files run")
            let versions = try await c.appliedVersions()
            #expect(versions == Set(1...SchemaHistory.devChain.upperBound).union(SchemaHistory.releaseVersions).union(Self.afterRelease))
            #expect(try await c.query("SELECT count(*) FROM pushq.leases").decode(Int.self, 0, 0) == 0)
            #expect(try await c.schemaRefusal(program: "a worker") == nil)
            #expect(try await c.migrationWait() == nil)
        }
    }

    /// a database at another dev schema (here 47, and 1-60 without its gated migrations) is refused, naming
    /// it and the commit to migrate it with
    @Test("a database at another dev schema is refused, naming it and the commit to migrate it with")
    func devSchemaRefused() async throws {
        try await withDatabase { _, c in
            _ = try await c.migrate(DevChain.upTo(47), logger: TestDatabase.logger)
            let error = await #expect(throws: SchemaHistoryError.self) { try await c.migrate(logger: TestDatabase.logger) }
            let text = error.map { "\($0)" } ?? ""
            #expect(text.contains("schema 47 is an unreleased development schema between 0.3.0 and 0.4.0"), "\(text)")
            #expect(text.contains("git checkout \(SchemaHistory.devChainCommit)"), "\(text)")
            #expect(try await c.schemaVersion() == 47, "nothing applied")
        }
        try await withDatabase { _, c in
            let ungated = DevChain.all.filter { (try? MigrationGate(of: $0)) == nil }
            _ = try await c.migrate(ungated, logger: TestDatabase.logger)
            let error = await #expect(throws: SchemaHistoryError.self) { try await c.migrate(logger: TestDatabase.logger) }
            let text = error.map { "\($0)" } ?? ""
            #expect(text.contains("schema 60 is an unreleased development schema"), "\(text)")
            #expect(text.contains("40, 41, 49, 50, 51, 52, 53, 54, 55 not applied"), "\(text)")
        }
    }
}
