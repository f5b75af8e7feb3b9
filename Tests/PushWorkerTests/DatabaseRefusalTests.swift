import Foundation
import InMemoryLogging
import Logging
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Synchronization
import Testing

/// Write-backs PostgreSQL refuses other than on data, or on a row's data through a trigger's
/// `RAISE` (P0001): SQLSTATEs outside classes 22 and 23 that used to be retried forever.
@Suite("Database refusals", .serialized)
struct DatabaseRefusalTests {
    /// a trigger that raises (P0001) on one row's answer ends that row failed/WriteBackError; the others are
    /// recorded and the worker keeps claiming
    @Test("a trigger raising P0001 on one row's answer ends that row failed/WriteBackError; the worker keeps claiming")
    func triggerRaise() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                let bad = Fixtures.token(0, prefix: "f")
                try await WriteBackErrorTests.refuseAnswers(db, tokens: [bad], sqlState: "P0001")
                try await insertAlerts(db, count: 40, prefix: "1")
                try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\":{}}')", [bad])
                try await insertAlerts(db, count: 40, prefix: "2")
                let configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                try await withWorker(configuration) { worker in
                    try await waitUntilAllFinal(db, timeout: .seconds(60))
                    try await insertAlerts(db, count: 20, prefix: "3")
                    try await waitUntilAllFinal(db, timeout: .seconds(60))
                    #expect(worker.health().livenessProblems.isEmpty)
                }
                #expect(try await statusCounts(db) == ["sent": 100, "failed": 1])
                let r = try await db.query("SELECT last_reason, locked_by IS NULL FROM pushq.notifications WHERE device_token = $1", [bad])
                #expect(r.string(0, 0) == "WriteBackError" && r.string(0, 1) == "t")
                #expect(mock.requests().count == 101)
            }
        }
    }

    /// a role without UPDATE on pushq.devices (42501): the worker logs the SQLSTATE and the GRANT, /healthz
    /// fails, and after the GRANT the answers are recorded
    @Test("a role without UPDATE on pushq.devices: the worker logs SQLSTATE and GRANT, /healthz fails until the GRANT")
    func missingPrivilege() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                let role = "pushq_limited_" + UUID().uuidString.prefix(8).lowercased()
                try await db.execute("""
                    CREATE ROLE \(role) LOGIN;
                    GRANT USAGE ON SCHEMA pushq TO \(role);
                    GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA pushq TO \(role);
                    GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA pushq TO \(role);
                    GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA pushq TO \(role);
                    REVOKE UPDATE ON pushq.devices FROM \(role);
                    """)
                let gone = Fixtures.token(0, prefix: "e")
                mock.setRule(forToken: gone, .always(.unregistered(at: 1_700_000_000_000)))
                try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\":{}}')", [gone])
                try await insertAlerts(db, count: 10, prefix: "1")
                let url = try await databaseURL(db).replacingOccurrences(of: "://postgres@", with: "://\(role)@")
                let configuration = try workerConfiguration(databaseURL: url, apnsURL: apnsURL)
                let logs = InMemoryLogHandler()
                var logger = Logger(label: "pushq.test") { _ in logs }
                logger.logLevel = .info
                let worker = PushWorker(configuration: configuration, logger: logger)
                let task = Task { try await worker.run() }
                defer { worker.requestStop() }
                let refused = try await eventually {
                    worker.health().livenessProblems.contains { $0.contains("42501") && $0.contains("GRANT") }
                }
                #expect(refused, "\(worker.health().livenessProblems)")
                let logged = logs.entries.filter { $0.level == .error }.map { "\($0.message) \($0.metadata)" }.filter { $0.contains("SQLSTATE 42501") }
                #expect(logged.count == 1, "logged once, however often retried: \(logs.entries)")
                #expect(logged.first?.contains("recording answers") == true && logged.first?.contains("--print-grants <role> --for worker") == true)
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sent'") == 0, "nothing recorded yet")
                try await db.execute("GRANT UPDATE ON pushq.devices TO \(role)")
                try await waitUntilAllFinal(db, timeout: .seconds(30))
                #expect(try await eventually { worker.health().livenessProblems.isEmpty })
                worker.requestStop()
                try await task.value
                #expect(try await statusCounts(db) == ["sent": 10, "failed": 1])
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.devices WHERE invalidated_at IS NOT NULL") == 1)
                #expect(mock.requests().count == 11, "recorded, not resent")
                #expect(logs.entries.contains { "\($0.message)".contains("PostgreSQL accepts recording answers again") })
                try await db.execute("DROP OWNED BY \(role); DROP ROLE \(role)")
            }
        }
    }
}
