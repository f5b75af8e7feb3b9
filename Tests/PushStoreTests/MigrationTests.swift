import Foundation
@testable import PushStore
import Testing
import PGClient

@Suite("Migrations")
struct MigrationTests {
    /// The objects one correct schema has, as (kind, name) pairs.
    static func schemaObjects(_ c: PGConnection) async throws -> [String] {
        let r = try await c.query("""
            SELECT 'table ' || tablename FROM pg_tables WHERE schemaname = 'pushq'
            UNION ALL SELECT 'index ' || indexname FROM pg_indexes WHERE schemaname = 'pushq'
            UNION ALL SELECT 'function ' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'pushq'
            UNION ALL SELECT 'trigger ' || tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                      JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'pushq' AND NOT t.tgisinternal
            UNION ALL SELECT 'constraint ' || conname FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'pushq'
            ORDER BY 1
            """)
        return try (0..<r.count).map { try r.decode(String.self, $0, 0)! }
    }

    @Test("migrate twice: the second run applies nothing and the schema is unchanged")
    func migrateTwice() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await c.schemaVersion() == nil)
            let first = try await c.migrate(logger: TestDatabase.logger)
            #expect(first == Migration.all.map(\.version))
            let objects = try await Self.schemaObjects(c)
            #expect(objects.contains("table notifications"))
            #expect(objects.contains("table devices"))
            #expect(objects.contains("function enqueue_for_user"))
            #expect(objects.contains("trigger notifications_notify_enqueued"))
            let second = try await c.migrate(logger: TestDatabase.logger)
            #expect(second.isEmpty)
            #expect(try await Self.schemaObjects(c) == objects)
            #expect(try await c.schemaVersion() == Migration.all.last?.version)
            await c.close()
        }
    }

    @Test("four concurrent migrate runs leave one correct schema")
    func migrateConcurrently() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let applied = try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
                        let versions = try await c.migrate(logger: TestDatabase.logger)
                        await c.close()
                        return versions
                    }
                }
                var all: [[Int]] = []
                for try await versions in group { all.append(versions) }
                return all
            }
            // Exactly one run applied each migration; the others found nothing to do.
            #expect(applied.flatMap { $0 }.sorted() == Migration.all.map(\.version))
            #expect(applied.filter(\.isEmpty).count == 3)

            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let recorded = try await c.query("SELECT count(*), count(DISTINCT version) FROM pushq.schema_migrations")
            #expect(try recorded.decode(Int.self, 0, 0) == Migration.all.count)
            #expect(try recorded.decode(Int.self, 0, 1) == Migration.all.count)

            // Same objects as a database migrated by a single run.
            let concurrent = try await Self.schemaObjects(c)
            await c.close()
            let single = try await TestDatabase.with(migrated: true) { other in
                let o = try await PGConnection.connect(other, logger: TestDatabase.logger)
                let objects = try await Self.schemaObjects(o)
                await o.close()
                return objects
            }
            #expect(concurrent == single)
        }
    }

    @Test("a failing migration is rolled back and names itself")
    func failingMigrationRollsBack() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let broken = Migration.all + [Migration(version: 999, name: "broken",
                                                     sql: "CREATE TABLE pushq.half_done (x int); SELECT no_such_function();")]
            let error = await #expect(throws: MigrationError.self) { try await c.migrate(broken, logger: TestDatabase.logger) }
            #expect(error?.version == 999)
            #expect(error?.description.contains("broken") == true)
            #expect(error?.cause.sqlState == "42883")
            let leftover = try await c.query("SELECT to_regclass('pushq.half_done') IS NULL")
            #expect(try leftover.decode(Bool.self, 0, 0) == true)
            #expect(try await c.schemaVersion() == Migration.all.last?.version)
            await c.close()
        }
    }

    // The fresh schema (schema_0_4_0.sql) is not a migration: SchemaHistory runs it.
    @Test("the embedded list matches the files in migrations/: 0.3.0's 1-11 and the release files 100-104")
    func embeddedListMatchesFolder() throws {
        let folder = repositoryRoot.appendingPathComponent("migrations")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".sql") && $0 != "schema_0_4_0.sql" }.sorted()
        #expect(files.count == Migration.all.count)
        for (file, migration) in zip(files, Migration.all) {
            #expect(file == String(format: "%03d_%@.sql", migration.version, migration.name))
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            #expect(text == migration.sql)
        }
        // 0.3.0's, 0.4.0's release files, then those after 0.4.0 (105: Web Push), one number after another.
        let versions = Migration.all.map(\.version)
        #expect(versions.filter { $0 <= SchemaHistory.freshThrough } == Array(1...SchemaHistory.release030) + SchemaHistory.releaseVersions)
        #expect(versions.filter { $0 > SchemaHistory.freshThrough } == Array((SchemaHistory.freshThrough + 1)..<(Migration.latestVersion + 1)))
    }

    @Test("a file outside a transaction runs statement by statement: cut after a line ending in ; outside $$")
    func statements() {
        let indexes = Migration(version: 1, name: "t", sql: """
            -- pushq:no-transaction
            -- two indexes; each its own statement
            CREATE INDEX CONCURRENTLY a ON t (x)
                WHERE x IS NOT NULL;
            CREATE INDEX CONCURRENTLY b ON t (y);
            -- done
            """)
        #expect(indexes.statements == ["-- pushq:no-transaction\n-- two indexes; each its own statement\nCREATE INDEX CONCURRENTLY a ON t (x)\n    WHERE x IS NOT NULL;",
                                       "CREATE INDEX CONCURRENTLY b ON t (y);"])
        let block = Migration(version: 1, name: "t", sql: "-- pushq:no-transaction\nDO $$\nBEGIN\n    PERFORM 1;\n    COMMIT;\nEND $$")
        #expect(block.statements == [block.sql], "one DO block, its inner statements kept whole")
    }
}
