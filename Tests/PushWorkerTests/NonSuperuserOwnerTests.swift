import ChildProcess
import Foundation
import MockPush
import PushStore
import PushTestSupport
import Testing
import PGClient

/// A managed PostgreSQL service (RDS, Cloud SQL, Azure, Supabase…) gives no superuser and installs
/// no extension on request: the database belongs to an ordinary role. `pushq migrate` and
/// `pushq worker` must need nothing more than owning the database.
@Suite("Non-superuser owner")
struct NonSuperuserOwnerTests {
    /// a LOGIN role that is no superuser and owns a fresh database migrates it from nothing and runs a
    /// worker, no extension installed
    @Test("a LOGIN role that is no superuser and owns a fresh database migrates it and runs a worker, no extension installed")
    func migratesAndRunsAsOwner() async throws {
        try await TestRoles.with(["pushq_owner_t"]) { roles in
            let owner = roles[0]
            let serverURL = try TestDatabase.serverURL
            let name = "pushq_test_owner_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
            // The service's administrator creates the database for the role; nothing else is granted.
            let admin = try await PGConnection.connect(serverURL, logger: TestDatabase.logger)
            try await admin.execute("CREATE DATABASE \(name) OWNER \(owner)")
            do {
                try await run(ownerURL: TestRoles.url(PGURL.withDatabase(serverURL, name), user: owner), owner: owner)
                try await admin.execute("DROP DATABASE \(name) WITH (FORCE)")
                await admin.close()
            } catch {
                try? await admin.execute("DROP DATABASE \(name) WITH (FORCE)")
                await admin.close()
                throw error
            }
        }
    }

    func run(ownerURL: String, owner: String) async throws {
        var env = ProcessInfo.processInfo.environment
        env["PUSHQ_DATABASE_URL"] = ownerURL
        let migrated = try await ChildProcess.run(pushqBinary, ["migrate"], environment: env)
        #expect(migrated.termination == .exit(0), "\(migrated.stdout)\(migrated.stderr)")
        #expect(migrated.stdout.contains("migrated to version \(Migration.latestVersion)"), "\(migrated.stdout)")

        let db = try await PGConnection.connect(ownerURL, logger: TestDatabase.logger)
        do {
            #expect(try await db.query("SELECT current_user::text").string(0, 0) == owner)
            #expect(try await scalar(db, "SELECT count(*) FROM pg_roles WHERE rolname = current_user AND NOT rolsuper AND NOT rolcreatedb AND NOT rolcreaterole") == 1)
            #expect(try await db.schemaVersion() == Migration.latestVersion)
            // No extension: only PL/pgSQL, which every cluster has in every database.
            #expect(try await db.query("SELECT string_agg(extname, ',') FROM pg_extension WHERE extname <> 'plpgsql'").string(0, 0) == nil)
            // The role owns what it created.
            #expect(try await scalar(db, """
                SELECT count(*) FROM pg_class WHERE relnamespace = 'pushq'::regnamespace AND relowner <> current_user::regrole
                """) == 0)

            // A worker under the same role: sends, a retry, an invalid token recorded.
            try await withMock { mock, apnsURL in
                let t = { (i: Int) in Fixtures.token(i, prefix: "0") }
                mock.setRule(forToken: t(1), .always(.unregistered(at: 1_700_000_000_123)))
                mock.setRule(forToken: t(2), MockTokenRule(sequence: [.error(.internalServerError)]))
                let log = NSTemporaryDirectory() + "pushq-owner-worker-\(UUID().uuidString.prefix(8)).log"
                defer { unlink(log) }
                let worker = try ChildProcess(pushqBinary, ["worker"],
                                              environment: workerEnvironment(databaseURL: ownerURL, apnsURL: apnsURL, workerID: "owner-worker",
                                                                             extra: ["PUSHQ_LOG_LEVEL": "info"]),
                                              stdout: .null, stderr: .file(log))
                try await db.query("""
                    INSERT INTO pushq.notifications (device_token, payload)
                    SELECT $1 || lpad(to_hex(g), 63, '0'), '{"aps":{"alert":"owner"}}' FROM generate_series(1, 20) g
                    """, ["0"])
                let done = try await waitUntilAllFinal(db)
                let counts = try await statusCounts(db)
                worker.kill(SIGTERM)
                let ended = await worker.wait()
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                #expect(done && counts == ["sent": 19, "failed": 1], "\(counts); worker: \(text)")
                #expect(try await scalar(db, "SELECT attempts FROM pushq.notifications WHERE device_token = '\(t(2))'") == 2, "one retry")
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.devices WHERE device_token = '\(t(1))' AND invalid_reason = 'Unregistered'") == 1)
                #expect(ended == .exit(0), "\(text)")
                #expect(!text.contains("permission denied") && !text.contains("42501") && !text.contains("must be superuser"), "\(text)")
                #expect(mock.stats().requests == 21)
            }
            await db.close()
        } catch {
            await db.close()
            throw error
        }
    }
}
