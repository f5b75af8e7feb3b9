import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// Workers behind PgBouncer, and multi-host URLs whose first host is read-only.
@Suite("Poolers and failover", .serialized)
struct PoolerTests {
    @Test("through PgBouncer in transaction mode the worker refuses to start, naming the problem and the fix")
    func transactionPoolRefused() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                try await insertAlerts(db, count: 5)
                try await PgBouncer.with(mode: "transaction", backendURL: try await databaseURL(db)) { pooled in
                    let configuration = try workerConfiguration(databaseURL: pooled, apnsURL: apnsURL)
                    let error = await #expect(throws: WorkerError.self) {
                        try await PushWorker(configuration: configuration, logger: quietLogger).run()
                    }
                    #expect(error?.code == .configuration)
                    #expect(error?.message.contains("pool_mode=transaction") == true && error?.message.contains("pool_mode=session") == true,
                            "\(String(describing: error))")
                }
                #expect(mock.requests().isEmpty)
                #expect(try await statusCounts(db) == ["queued": 5])
            }
        }
    }

    @Test("through PgBouncer in session mode the worker sends, and another client of the pool does not get its statement_timeout")
    func sessionPoolWorks() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                try await insertAlerts(db, count: 30)
                try await PgBouncer.with(mode: "session", backendURL: try await databaseURL(db)) { pooled in
                    let configuration = try workerConfiguration(databaseURL: pooled, apnsURL: apnsURL)
                    try await withWorker(configuration) { _ in
                        try await waitUntilAllFinal(db, timeout: .seconds(30))
                        let other = try await PGConnection.connect(pooled, logger: TestDatabase.logger)
                        #expect(try await other.query("SHOW statement_timeout").string(0, 0) == "0")
                        await other.close()
                    }
                }
                #expect(try await statusCounts(db) == ["sent": 30])
                #expect(mock.requests().count == 30)
            }
        }
    }

    /// a URL listing a read-only server first: the worker takes the writable host, and moves to it on 25006
    /// when its server turns read-only
    @Test("a URL listing a read-only server first: the worker takes the writable host, and moves on 25006 when it turns read-only")
    func readOnlyFirstHost() async throws {
        let dir = NSTemporaryDirectory() + "pushq-standby-" + UUID().uuidString.prefix(8)
        let standbyURL = try pgLocal("start", dir: dir)
        defer { _ = try? pgLocal("destroy", dir: dir) }
        let standbyPort = try #require(standbyURL.split(separator: ":").last?.split(separator: "/").first)
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                let name = try #require(try await db.query("SELECT current_database()").string(0, 0))
                let port = try #require(try await db.query("SELECT current_setting('port')").string(0, 0))
                // The same database, migrated, on the "standby".
                let standby = try await PGConnection.connect(standbyURL, logger: TestDatabase.logger)
                try await standby.execute("CREATE DATABASE \(name)")
                let standbyDB = try await PGConnection.connect(PGURL.withDatabase(standbyURL, name), logger: TestDatabase.logger)
                _ = try await standbyDB.migrate(logger: TestDatabase.logger)
                await standbyDB.close()
                let url = "host=127.0.0.1,127.0.0.1 port=\(standbyPort),\(port) dbname=\(name) user=postgres"
                let configuration = try workerConfiguration(databaseURL: url, apnsURL: apnsURL)
                // 1. The first host accepts writes: the worker runs there. Then it turns read-only (a failover).
                try await withWorker(configuration) { _ in
                    #expect(try await eventually {
                        try await scalar(standby, "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(name)'") >= 3
                    })
                    try await standby.execute("ALTER SYSTEM SET default_transaction_read_only = on")
                    try await standby.query("SELECT pg_reload_conf()")
                    try await insertAlerts(db, count: 20, prefix: "1")
                    try await waitUntilAllFinal(db, timeout: .seconds(30))
                }
                // 2. Started with the read-only host first: it goes to the writable one at once.
                try await insertAlerts(db, count: 20, prefix: "2")
                try await withWorker(configuration) { _ in
                    try await waitUntilAllFinal(db, timeout: .seconds(30))
                }
                #expect(try await statusCounts(db) == ["sent": 40])
                #expect(mock.requests().count == 40)
                await standby.close()
            }
        }
    }
}
