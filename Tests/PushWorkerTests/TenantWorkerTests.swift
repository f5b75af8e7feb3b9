import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// Fair shares between tenants through a worker and the mock (issue 48, item 5): tenant B's rows
/// inserted after tenant A's 30 000 due rows reach the provider after at most the worker's window
/// and one claim of A's, not after A's backlog. Asserted by structure (requests counted at the
/// mock), never by time: the p50/p99 latencies are `make bench-tenants`'.
@Suite("Tenants with a worker")
struct TenantWorkerTests {
    /// 10 streams answered slowly and 50 rows claimed ahead keep the worker's window (60) full of
    /// A's rows while B's are inserted; B's 10 rows then go out among the next requests.
    @Test("B's rows inserted behind A's 30 000 due rows reach the mock before more than the window and one claim of A's")
    func tenantBehindBacklog() async throws {
        try await TestDatabase.with { url in
            let db = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await LaneTests.recordClaims(db)
            try await db.query("""
                INSERT INTO pushq.notifications (device_token, payload, tenant, scheduled_at)
                SELECT 'a' || lpad(to_hex(g), 63, '0'), '{"aps":{}}', 'A', now() - interval '1 hour' + g * interval '1 ms'
                  FROM generate_series(1, 30000) g
                """)
            try await withMock { server, apnsURL in
                server.answerEverything(with: MockAnswer(kind: .status, status: 200, delayMilliseconds: 300))
                var configuration = try workerConfiguration(databaseURL: url, apnsURL: apnsURL)
                configuration.apns.streamsPerConnection = 10
                configuration.prefetch = 50
                configuration.withoutProbes()
                let window = configuration.holdLimit
                var before = 0
                try await withWorker(configuration) { _ in
                    #expect(try await eventually { try await scalar(db, "SELECT count(*) FROM public.claims") >= window })
                    // Every request at the mock from here on came after B's rows were written.
                    before = server.requests().count
                    try await db.query("""
                        INSERT INTO pushq.notifications (device_token, payload, tenant)
                        SELECT 'b' || lpad(to_hex(g), 63, '0'), '{"aps":{}}', 'B' FROM generate_series(1, 10) g
                        """)
                    #expect(try await eventually(timeout: .seconds(120)) {
                        try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE tenant = 'B' AND status = 'sent'") == 10
                    })
                    server.answerEverything(with: nil)
                }
                // One claim: the most rows a claim took (the claims table records each row's claim).
                let claim = try await scalar(db, "SELECT COALESCE(max(n), 0) FROM (SELECT count(*) AS n FROM public.claims GROUP BY started) c")
                let after = server.requests().dropFirst(before).map { $0.deviceToken ?? "" }
                let lastB = try #require(after.lastIndex { $0.hasPrefix("b") }, "B's requests reached the mock")
                let aAhead = after[...lastB].filter { $0.hasPrefix("a") }.count
                #expect(after.filter { $0.hasPrefix("b") }.count == 10)
                print("TenantWorkerTests: \(aAhead) of A's requests before B's last; window \(window), largest claim \(claim)")
                #expect(aAhead <= window + claim, "\(aAhead) of A's requests came before B's last (window \(window), claim \(claim))")
            }
            await db.close()
        }
    }
}
