import Foundation
@testable import PushStore
import Testing
import PGClient

/// The client-side `statementDeadline` and the server-side `statementTimeout`; a `TCPProxy`
/// switched to a blackhole stands in for a server or network that stopped answering.
@Suite("Statement deadline and timeout")
struct StatementDeadlineTests {
    @Test("a statement on a blackholed connection fails at the deadline; the next call reconnects with the same settings",
          .timeLimit(.minutes(1)))
    func blackholedStatement() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let proxy = try TCPProxy(forwardingToServerOf: url)
            defer { proxy.stop() }
            let c = try await PGConnection.connect(try proxy.url(reaching: url), logger: TestDatabase.logger,
                                                   statementTimeout: .seconds(1), statementDeadline: .seconds(2))
            try await c.listen("bounds")
            let pidBefore = await c.backendPID
            #expect(try await c.query("SELECT 1").decode(Int.self, 0, 0) == 1)

            proxy.setBlackholed(true)
            // A wait for notifications on a silent connection still ends at its timeout.
            var start = ContinuousClock.now
            #expect(try await c.waitForNotifications(timeout: .seconds(1)).isEmpty)
            #expect(ContinuousClock.now - start < .seconds(4))

            start = ContinuousClock.now
            let error = await #expect(throws: PGError.self) { try await c.query("SELECT 2") }
            let elapsed = ContinuousClock.now - start
            #expect(error?.code == .connectionLost)
            #expect(error?.message.contains("did not answer within 2 s") == true)
            #expect(elapsed >= .milliseconds(1900) && elapsed < .seconds(6), "took \(elapsed)")
            #expect(await c.inTransaction == false)

            proxy.setBlackholed(false)
            #expect(try await c.query("SELECT 3").decode(Int.self, 0, 0) == 3)
            #expect(await c.backendPID != pidBefore)
            // The new session has the same libpq options, the statement timeout and the LISTEN.
            #expect(try await SocketTimeouts(c) == SocketTimeouts.defaults)
            #expect(await c.connectionOptions["connect_timeout"] == "10")
            #expect(try await c.query("SHOW statement_timeout").decode(String.self, 0, 0) == "1s")
            let sender = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await sender.query("SELECT pg_notify('bounds', 'after reconnect')")
            #expect(try await c.waitForNotifications(timeout: .seconds(10)).map(\.payload) == ["after reconnect"])
            await sender.close()
            await c.close()
        }
    }

    @Test("a statement whose parameters cannot all be sent fails at the deadline, and close() returns at once",
          .timeLimit(.minutes(1)))
    func blackholedSend() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let proxy = try TCPProxy(forwardingToServerOf: url)
            defer { proxy.stop() }
            let c = try await PGConnection.connect(try proxy.url(reaching: url), logger: TestDatabase.logger,
                                                   statementDeadline: .seconds(2))
            proxy.setBlackholed(true)
            // More than the socket buffers on both sides of the proxy hold (about 4 MiB here), so sending blocks.
            let big = String(repeating: "x", count: 16 << 20)
            let start = ContinuousClock.now
            let error = await #expect(throws: PGError.self) { try await c.query("SELECT length($1::text)", [big]) }
            #expect(error?.code == .connectionLost)
            #expect(error?.message.contains("did not answer within 2 s") == true)
            // Building and copying 16 MiB in a debug build takes part of this.
            #expect(ContinuousClock.now - start < .seconds(10))
            let closing = ContinuousClock.now
            await c.close()
            #expect(ContinuousClock.now - closing < .seconds(1))
        }
    }

    @Test("statementTimeout cancels a long statement with SQLSTATE 57014 and the session stays usable")
    func serverStatementTimeout() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger, statementTimeout: .seconds(1))
            let pid = await c.backendPID
            let start = ContinuousClock.now
            let error = await #expect(throws: PGError.self) { try await c.query("SELECT pg_sleep(5)") }
            #expect(error?.code == .server)
            #expect(error?.sqlState == "57014")
            #expect(ContinuousClock.now - start < .seconds(4))
            #expect(try await c.query("SELECT 1").decode(Int.self, 0, 0) == 1)
            #expect(await c.backendPID == pid)
            await c.close()
        }
    }

    @Test("with a statementTimeout, a transaction left idle (a client cut off before COMMIT) ends and releases its locks")
    func idleTransactionEnds() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger, statementTimeout: .seconds(1))
            let other = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await other.execute("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)")
            let pid = await c.backendPID
            try await c.execute("BEGIN")
            try await c.query("SELECT id FROM t FOR UPDATE")
            // The server ends the idle transaction after 1 s: the row is free again and the session gone.
            var freed = false
            for _ in 0..<100 where !freed {
                freed = try await other.query("SELECT id FROM t FOR UPDATE SKIP LOCKED").count == 1
                if !freed { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(freed)
            #expect(try await other.query("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", [Int(pid)]).decode(Int.self, 0, 0) == 0)
            await c.close()
            await other.close()
        }
    }

    @Test("migrate() may wait for another process's migration longer than the statement deadline", .timeLimit(.minutes(1)))
    func migrationOutlastsDeadline() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let other = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger, statementDeadline: .seconds(1))
            let pid = await c.backendPID
            try await other.query("SELECT pg_advisory_lock($1)", [PGConnection.migrationLockKey])
            async let applied = c.migrate(logger: TestDatabase.logger)
            // Let migrate() wait for the lock (it polls pg_try_advisory_lock) well past its
            // connection's 1 s deadline.
            while try await other.query("""
                SELECT count(*) FROM pg_stat_activity
                WHERE pid = $1 AND query LIKE '%pg_try_advisory_lock%' AND now() - backend_start > interval '2500 milliseconds'
                """, [pid]).decode(Int.self, 0, 0) == 0 {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(try await other.query("SELECT to_regclass('pushq.notifications') IS NULL").decode(Bool.self, 0, 0) == true,
                    "still waiting: nothing applied")
            try await other.query("SELECT pg_advisory_unlock($1)", [PGConnection.migrationLockKey])
            #expect(try await applied == Migration.all.map(\.version).sorted())
            // Ordinary statements are back under the 1 s deadline.
            let error = await #expect(throws: PGError.self) { try await c.query("SELECT pg_sleep(3)") }
            #expect(error?.code == .connectionLost)
            await other.close()
            await c.close()
        }
    }

    @Test("a negative timeout or a deadline that is not positive is refused")
    func badBounds() async throws {
        let url = try TestDatabase.serverURL
        let deadline = await #expect(throws: PGError.self) {
            _ = try await PGConnection.connect(url, logger: TestDatabase.logger, statementDeadline: .zero)
        }
        #expect(deadline?.code == .invalidValue)
        let timeout = await #expect(throws: PGError.self) {
            _ = try await PGConnection.connect(url, logger: TestDatabase.logger, statementTimeout: .seconds(-1))
        }
        #expect(timeout?.code == .invalidValue)
    }
}
