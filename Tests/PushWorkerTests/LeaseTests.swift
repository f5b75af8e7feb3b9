import ChildProcess
import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushTransport
import PushWorker
import Testing

/// Leases cover the whole time a worker holds a row, answers are recorded under the claim that
/// sent them, and rows that were never sent cost no attempt (issue 18, items 1, 2, 5 and 6).
@Suite("Leases and claims", .serialized)
struct LeaseTests {
    /// a slow provider and one stream: rows that would outlive their lease waiting for a stream are given
    /// back unsent, never sent twice
    @Test("a slow provider and one stream: rows that would outlive their lease waiting are given back unsent, never sent twice")
    func slowProviderNeverResends() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                mock.answerEverything(with: MockAnswer.normal.delayed(by: 1000))
                try await insertAlerts(db, count: 20, prefix: "6")
                var configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                // 20 rows at 1 s each on one stream take 20 s; the lease is 16 s. The request timeout
                // (10 s) is far above an answer's 1 s, so a busy machine cannot turn one into a timeout.
                configuration.apns.streamsPerConnection = 1
                configuration.sender.requestTimeout = 10
                configuration.leaseSeconds = 16
                let released = try await withWorker(configuration) { worker in
                    try await waitUntilAllFinal(db, timeout: .seconds(120))
                    return worker.stats.released
                }
                #expect(try await statusCounts(db) == ["sent": 20])
                let perToken = Dictionary(grouping: mock.requests(), by: { $0.deviceToken ?? "" })
                #expect(perToken.count == 20)
                #expect(perToken.values.allSatisfy { $0.count == 1 }, "\(perToken.mapValues(\.count).filter { $0.value > 1 })")
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE attempts = 1 AND last_status = 200") == 20,
                        "rows given back kept their attempts")
                #expect(released > 0, "the window could not hold every row within its lease")
            }
        }
    }

    @Test("an answer is written only under the claim that sent it: the same worker's newer claim of the row is not overwritten")
    func answersAreFencedByClaim() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{}')", [Fixtures.token(1, prefix: "6")])
            let first = try #require(try await c.claim(limit: 1, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]],
                                                       defaultEnvironment: .production).first)
            // Its lease runs out before the answer is written; the same worker claims it again.
            try await c.query("UPDATE pushq.notifications SET locked_until = now() - interval '1 second'")
            try await c.query("UPDATE pushq.leases SET lease_until = now() - interval '1 second'")
            #expect(try await c.recoverLapsedLeases(limit: 10) == .init(rows: 1, leases: 1))
            let second = try #require(try await c.claim(limit: 1, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]],
                                                        defaultEnvironment: .production).first)
            #expect(second.attempts == first.attempts && second.lease != first.lease, "the first lapse is given back: same attempt, new lease")
            let stale = RowCompletion(id: first.id, attempt: first.attempts, lease: first.lease,
                                      disposition: Disposition(status: .sent, reason: nil), httpStatus: 200, apnsUniqueID: nil)
            #expect(try await c.complete([stale], invalidations: [], holds: [], resumed: [], workerID: "w1").updated == 0)
            #expect(try await c.release([stale.claim], workerID: "w1") == 0)
            let current = RowCompletion(id: second.id, attempt: second.attempts, lease: second.lease,
                                        disposition: Disposition(status: .failed, reason: "Unregistered"), httpStatus: 410, apnsUniqueID: nil)
            #expect(try await c.complete([current], invalidations: [], holds: [], resumed: [], workerID: "w1").updated == 1)
            let r = try await c.query("SELECT status, last_status FROM pushq.notifications")
            #expect(r.string(0, 0) == "failed" && r.string(0, 1) == "410")
        }
    }

    @Test("a worker deletes its own lease rows once every row of their claims is written back, long before the leases end")
    func leaseRowsDeletedWhenWrittenBack() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                var configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                configuration.leaseSeconds = 600
                configuration.claimBatchSize = 7
                let started = try await db.query("SELECT now()::text").string(0, 0) ?? ""
                try await withWorker(configuration) { _ in
                    try await insertAlerts(db, count: 40, prefix: "5")
                    #expect(try await waitUntilAllFinal(db, timeout: .seconds(60)))
                    let gone = try await LockWait.until(timeout: .seconds(60)) {
                        try await db.query("SELECT count(*) FROM pushq.leases").decode(Int.self, 0, 0) == 0
                    }
                    #expect(gone, "every lease row deleted")
                }
                // The upkeep reads a lease only once it has ended: these were deleted by their worker.
                let early = try await db.query("SELECT now() < $1::timestamptz + interval '600 seconds'", [started]).decode(Bool.self, 0, 0)
                #expect(early == true)
                #expect(try await statusCounts(db) == ["sent": 40])
                #expect(mock.requests().count == 40)
            }
        }
    }

    /// rows naming credential 'default' literally are sent like rows without one, and pushq send --credential
    /// default --wait ends
    @Test("rows naming credential 'default' are sent like rows without one, and pushq send --credential default --wait ends")
    func literalDefaultCredential() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                try await db.query("""
                    INSERT INTO pushq.notifications (device_token, payload, credential)
                    SELECT '7' || lpad(to_hex(g), 63, '0'), '{"aps":{"alert":"x"}}', CASE WHEN g % 2 = 0 THEN 'default' END
                      FROM generate_series(1, 10) g
                    """)
                let url = try await databaseURL(db)
                try await withWorker(try workerConfiguration(databaseURL: url, apnsURL: apnsURL)) { _ in
                    try await waitUntilAllFinal(db, timeout: .seconds(30))
                    var env = ProcessInfo.processInfo.environment
                    env["PUSHQ_DATABASE_URL"] = url
                    let (status, out, err) = try await ChildProcess.run(pushqBinary, ["send", "--credential", "default", "--token", Fixtures.token(11, prefix: "7"),
                                                                                      "--alert", "hi", "--wait", "--wait-timeout", "30"], environment: env)
                    #expect(status == .exit(0), "\(out)\(err)")
                    #expect(out.contains(": sent (HTTP 200)"), "\(out)")
                }
                #expect(try await statusCounts(db) == ["sent": 11])
                #expect(mock.requests().count == 11)
            }
        }
    }

    /// a sender that cannot be built after start holds its endpoint and gives its rows back with their
    /// attempts; the probe sends them once it can
    @Test("a sender that cannot be built after start holds its endpoint and gives its rows back; the probe sends them later")
    func senderBuildFailureHolds() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                let dir = NSTemporaryDirectory() + "pushq-lease-\(UUID().uuidString)"
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(atPath: dir) }
                let ca = dir + "/ca.pem"
                try FileManager.default.copyItem(atPath: Fixtures.caFile, toPath: ca)
                var configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                configuration.sender.extraCAFile = ca
                configuration.credentials[CredentialKey(.apns, "other")] = configuration.credentials[CredentialKey(.apns, "default")]
                configuration.withoutProbes()
                try await withWorker(configuration) { _ in
                    try await insertAlerts(db, count: 3, prefix: "8")
                    try await waitUntilAllFinal(db, timeout: .seconds(30))
                    // The CA file is gone since start: the `other` sender, built on first use, cannot be.
                    try FileManager.default.removeItem(atPath: ca)
                    try await db.query("""
                        INSERT INTO pushq.notifications (device_token, payload, credential, max_attempts)
                        SELECT '9' || lpad(to_hex(g), 63, '0'), '{"aps":{"alert":"x"}}', 'other', 1 FROM generate_series(1, 5) g
                        """)
                    let held = try await eventually {
                        let holds = try await scalar(db, "SELECT count(*) FROM pushq.credential_pauses WHERE credential = 'other' AND reason = 'SenderUnavailable'")
                        let back = try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE credential = 'other' AND status = 'queued' AND attempts = 0")
                        return holds == 1 && back == 5
                    }
                    #expect(held)
                    let message = try await db.query("SELECT message FROM pushq.credential_pauses WHERE credential = 'other'").string(0, 0) ?? ""
                    #expect(message.contains("other") && message.contains(ca), "\(message)")
                    // Fixed: the probe, due now, builds it and sends.
                    try FileManager.default.copyItem(atPath: Fixtures.caFile, toPath: ca)
                    try await db.query("UPDATE pushq.credential_pauses SET paused_until = now()")
                    try await waitUntilAllFinal(db, timeout: .seconds(30))
                }
                #expect(try await statusCounts(db) == ["sent": 8])
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.credential_pauses") == 0)
                #expect(mock.requests().count == 8)
            }
        }
    }
}
