import Foundation
import InMemoryLogging
import Logging
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// A pruner that PostgreSQL refuses says so where operators look: a warning, once per kind of
/// failure, naming the SQLSTATE and the fix.
@Suite("Prune refusals")
struct PruneRefusalTests {
    /// a worker whose role may not DELETE from pushq.notifications logs one warning naming 42501 and
    /// --print-grants; the same failure again is not logged at warning
    @Test("a role without DELETE on pushq.notifications: the pruner warns once with the SQLSTATE and the GRANT to run")
    func missingDeleteWarns() async throws {
        try await TestDatabase.withConnection { db in
            try await TestRoles.with(["pushq_noprune"]) { roles in
                let role = roles[0]
                try await db.execute("""
                    GRANT USAGE ON SCHEMA pushq TO \(role);
                    GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA pushq TO \(role);
                    GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA pushq TO \(role);
                    GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA pushq TO \(role);
                    REVOKE DELETE ON pushq.notifications FROM \(role);
                    """)
                try await withMock { _, apnsURL in
                    var configuration = try workerConfiguration(databaseURL: TestRoles.url(try await databaseURL(db), user: role), apnsURL: apnsURL)
                    // Rounds one after another: a second failure comes soon.
                    configuration.heartbeatSeconds = 0.2
                    let logs = InMemoryLogHandler()
                    var logger = Logger(label: "pushq.test") { _ in logs }
                    logger.logLevel = .debug
                    let worker = PushWorker(configuration: configuration, logger: logger)
                    let task = Task { try await worker.run() }
                    defer { worker.requestStop() }
                    func pruneLines() -> [InMemoryLogHandler.Entry] {
                        logs.entries.filter { "\($0.message)".hasPrefix("pruning failed") }
                    }
                    // The event: a second failed round (at debug), after the first (at warning).
                    #expect(try await eventually { pruneLines().count >= 2 }, "\(logs.entries.map { "\($0.level) \($0.message)" })")
                    let lines = pruneLines()
                    #expect(lines.first?.level == .warning && lines.dropFirst().allSatisfy { $0.level == .debug },
                            "\(lines.map { "\($0.level) \($0.metadata)" })")
                    #expect(lines.first?.metadata["pg.sqlstate"] == "42501")
                    #expect("\(lines.first?.metadata["fix"] ?? "")".contains("--print-grants <role> --for worker"))
                    worker.requestStop()
                    try await task.value
                }
                try await db.execute("DROP OWNED BY \(role)")
            }
        }
    }
}
