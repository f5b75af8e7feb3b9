import Foundation
@testable import PushStore
import Testing
import PGClient

/// `-- pushq:after-workers <version>`: a migration that waits for the workers of earlier releases
/// to stop, and that this release's workers do not need.
@Suite("Migration gates")
struct MigrationGateTests {
    static func migration(_ version: Int, _ sql: String) -> Migration { Migration(version: version, name: "gated_test", sql: sql) }

    @Test("the directive: in the header, with the version the live workers must know", arguments: [
        ("-- pushq:after-workers 35\nDROP INDEX x;", MigrationGate(workersKnow: 35)),
        ("-- pushq:no-transaction\n-- pushq:after-workers 1000\nDROP INDEX CONCURRENTLY x;", MigrationGate(workersKnow: 1000)),
        ("-- what it does\n-- pushq:after-workers  7\nDROP INDEX x;", MigrationGate(workersKnow: 7)),
        ("-- no directive\nDROP INDEX x;", nil),
        ("-- header\nDROP INDEX x;\n-- pushq:after-workers 35", nil),
    ] as [(String, MigrationGate?)])
    func directive(sql: String, expected: MigrationGate?) throws {
        #expect(try MigrationGate(of: Self.migration(1000, sql)) == expected)
    }

    @Test("a directive without a version from 1 to the migration's own is refused naming the line", arguments: [
        "-- pushq:after-workers", "-- pushq:after-workers 0", "-- pushq:after-workers 1001", "-- pushq:after-workers 35a",
        "-- pushq:after-workers -3", "-- pushq:after-workers 35 36",
    ])
    func malformed(header: String) {
        let error = #expect(throws: MigrationError.self) { try MigrationGate(of: Self.migration(1000, header + "\nSELECT 1;")) }
        #expect(error?.description.contains("-- pushq:after-workers") == true, "\(String(describing: error))")
    }

    @Test("workers need every migration but the gated ones that come last")
    func requiredVersion() throws {
        let plain = Self.migration(40, "SELECT 1;")
        let gated = Self.migration(41, "-- pushq:after-workers 35\nSELECT 1;")
        let gatedToo = Self.migration(42, "-- pushq:after-workers 35\nSELECT 1;")
        #expect(Migration.requiredVersion(of: [plain, gated, gatedToo]) == 40)
        #expect(Migration.requiredVersion(of: [gatedToo, plain, gated]) == 40, "in the order of their versions")
        let later = Self.migration(43, "SELECT 1;")
        #expect(Migration.requiredVersion(of: [plain, gated, later]) == 43, "every migration that is not gated is needed, wherever it comes")
        #expect(Migration.requiredVersion(of: [plain]) == 40)
        let required = Migration.all.first { $0.version == Migration.requiredVersion }
        #expect(required != nil && (try? MigrationGate(of: required!)) == nil, "the shipped workers need an ungated migration")
        for migration in Migration.all where migration.version > Migration.requiredVersion {
            #expect(try MigrationGate(of: migration) != nil, "\(migration.version) comes after what workers need: it must be gated")
        }
    }

    /// a live worker of an earlier release (no schema_known, or a lower one) holds a gated migration and the
    /// gated ones after it, not those that are not gated; a worker that knows it, or one gone, does not
    @Test("a live worker of an earlier release holds the gated migrations, not the others; one that knows them, or gone, does not")
    func waitsForWorkers() async throws {
        try await TestDatabase.with { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let next = Migration.latestVersion + 1
            let gated = Self.migration(next, """
                -- pushq:after-workers \(Migration.latestVersion)
                CREATE TABLE pushq.gate_test (id integer);
                """)
            let after = Migration(version: next + 1, name: "after_gate", sql: "CREATE TABLE pushq.after_gate_test (id integer);")
            // Gated on a version every live worker knows, but after a gated migration that waits.
            let gatedAfter = Self.migration(next + 2, """
                -- pushq:after-workers 1
                CREATE TABLE pushq.gated_after_test (id integer);
                """)
            let all = Migration.all + [gated, after, gatedAfter]
            func exists(_ table: String) async throws -> Bool {
                try await c.query("SELECT to_regclass($1) IS NOT NULL", ["pushq." + table]).decode(Bool.self, 0, 0) == true
            }
            try await c.query("""
                INSERT INTO pushq.workers (id, host, pid, version, credentials, schema_known) VALUES
                    ('old', 'host-a', 11, '0.9.0', '[]', NULL), ('older', 'host-b', 12, '0.8.0', '[]', $1),
                    ('new', 'host-c', 13, '1.0.0', '[]', $2), ('gone', 'host-d', 14, '0.7.0', '[]', NULL)
                """, [Migration.latestVersion - 1, Migration.latestVersion])
            try await c.query("UPDATE pushq.workers SET heartbeat_at = now() - interval '31 seconds' WHERE id = 'gone'")

            // The highest gate applied: 113's (frequency caps need workers that count them), above
            // 0.4.0's gated parts, which need workers of 0.4.0.
            let floor = Migration.all.compactMap { try? MigrationGate(of: $0)?.workersKnow }.max()
            let applied = try await c.workerFloor()
            #expect(floor == 113 && applied == floor, "the gated parts need workers that know them")
            #expect(try await c.migrate(all, logger: TestDatabase.logger) == [next + 1], "the one that is not gated applies")
            #expect(try await c.schemaVersion() == next + 1)
            let (gate, after1, gatedAfter1) = (try await exists("gate_test"), try await exists("after_gate_test"), try await exists("gated_after_test"))
            #expect(!gate && after1 && !gatedAfter1)
            let wait = try await c.migrationWait(all)
            #expect(wait?.version == next && wait?.workersKnow == Migration.latestVersion)
            #expect(wait?.workers.map(\.id).sorted() == ["old", "older"], "not the one that knows it, nor the one gone")

            try await c.query("DELETE FROM pushq.workers WHERE id = 'old'")
            #expect(try await c.migrate(all, logger: TestDatabase.logger) == [])
            #expect(try await c.migrationWait(all)?.workers.map(\.id) == ["older"])

            try await c.query("UPDATE pushq.workers SET heartbeat_at = now() - interval '31 seconds' WHERE id = 'older'")
            #expect(try await c.migrationWait(all).map(\.version) == nil)
            #expect(try await c.migrate(all, logger: TestDatabase.logger) == [next, next + 2])
            let (gate2, gatedAfter2) = (try await exists("gate_test"), try await exists("gated_after_test"))
            #expect(gate2 && gatedAfter2)
            #expect(try await c.workerFloor() == Migration.latestVersion, "the gated one recorded the schema its workers must know")
            #expect(try await c.migrationWait(all).map(\.version) == nil)
            await c.close()
        }
    }
}
