import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// Credential-level failures: the credential pauses, its rows wait with their attempts intact.
@Suite("Credential pauses", .serialized)
struct CredentialTests {
    @Test("a key APNs rejects pauses the credential: rows wait, attempts not used up, pause visible in the database")
    func rejectedKeyPauses() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                mock.setFailureRate(MockFailureRate(rate: 1, answer: .error(.invalidProviderToken)))
                try await insertAlerts(db, count: 50, prefix: "d")
                var configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                // No probe during the test (the next test is about probes): under load this test
                // ran past the default first probe and counted 51 requests for 50 rows.
                configuration.withoutProbes()
                try await withWorker(configuration) { _ in
                    // Wait for the pause to be recorded and the rows claimed before it to be answered.
                    let settled = try await eventually { try await pausedAndNothingHeld(db) }
                    #expect(settled)
                    let requestsAtPause = mock.stats().requests
                    // Two claims after the pause was recorded: a worker that ignored it would have taken its
                    // rows again. Rows first (a claimed row is `sending` until written back), then requests
                    // (a row written back was requested first).
                    #expect(try await twoClaims(db, after: try await databaseNow(db)))
                    #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sending'") == 0)
                    #expect(mock.stats().requests == requestsAtPause)
                    // Each row went out at most once: none was claimed again while paused.
                    #expect(requestsAtPause <= 50)
                }
                let pause = try await db.query("SELECT credential, environment, reason, paused_until > now() FROM pushq.credential_pauses")
                #expect(pause.count == 1)
                #expect(pause.string(0, 0) == "default")
                #expect(pause.string(0, 1) == "development")
                #expect(pause.string(0, 2) == "InvalidProviderToken")
                #expect(pause.string(0, 3) == "t")
                let counts = try await statusCounts(db)
                #expect(counts["failed"] == nil && counts["sent"] == nil, "\(counts)")
                #expect(try await db.query("SELECT max(attempts) FROM pushq.notifications").decode(Int.self, 0, 0) == 0)
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.devices") == 0)
            }
        }
    }

    @Test("a pause that repeats never uses up attempts, and each pause ends with a probe of one row, not a full claim")
    func repeatedPausesKeepAttempts() async throws {
        try await TestDatabase.withConnection { db in
            // All 20 rows go out before the first answer: with APNs' one stream until a token is
            // accepted (which this one never is), how many left before the pause reached the
            // worker would depend on the machine's speed.
            try await withMock({ $0.limitStreamsUntilFirstValidToken = false }) { mock, apnsURL in
                mock.setFailureRate(MockFailureRate(rate: 1, answer: .error(.invalidProviderToken)))
                try await insertAlerts(db, count: 20, prefix: "7")
                try await db.query("UPDATE pushq.notifications SET max_attempts = 2")
                var configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                configuration.pauseBaseSeconds = 0.2
                configuration.pauseCapSeconds = 0.2
                try await withWorker(configuration) { _ in
                    _ = try await eventually { try await scalar(db, "SELECT max(failures) FROM pushq.credential_pauses") >= 4 }
                }
                let probes = try await scalar(db, "SELECT max(failures) FROM pushq.credential_pauses") - 1
                #expect(probes >= 3)
                // At most the 20 rows once each before the pause (how many went out before the first
                // answer came back depends on the machine's speed), then a row per probe: a full claim
                // per probe would be 20 more each. The bound allows twice the probes counted and one
                // in flight at the stop, because a probe's request and its count in the table are not
                // read at one instant (a slow machine lets a probe fall due again before the last one's
                // failure is written), which this test does not control.
                let requests = mock.stats().requests
                #expect(requests >= 1 + 3 && requests <= 20 + 2 * probes + 1, "\(requests) requests for \(probes) probes")
                #expect(try await db.query("SELECT max(attempts) FROM pushq.notifications").decode(Int.self, 0, 0) == 0)
                #expect(try await statusCounts(db)["failed"] == nil)
            }
        }
    }

    @Test("a burst of BadDeviceToken pauses the credential as a wrong environment instead of invalidating the tokens")
    func badDeviceTokenBurst() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                mock.setFailureRate(MockFailureRate(rate: 1, answer: .error(.badDeviceToken)))
                try await insertAlerts(db, count: 200, prefix: "e")
                let configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                try await withWorker(configuration) { _ in
                    let settled = try await eventually { try await pausedAndNothingHeld(db) }
                    #expect(settled)
                }
                let pause = try await db.query("SELECT reason, message FROM pushq.credential_pauses")
                #expect(pause.string(0, 0) == "BadDeviceTokenBurst")
                #expect(pause.string(0, 1)?.contains("environment") == true)
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.devices") == 0)
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'failed'") == 0)
                #expect(mock.stats().requests >= 20)
            }
        }
    }
}

/// One pause recorded, and every row claimed before it answered and written back.
func pausedAndNothingHeld(_ db: PGConnection) async throws -> Bool {
    let paused = try await scalar(db, "SELECT count(*) FROM pushq.credential_pauses")
    let held = try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sending'")
    return paused == 1 && held == 0
}
