import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// The claim statement's verdicts beyond "send", and the holds and upkeep statements around it.
@Suite("Claim verdicts, holds and upkeep")
struct ClaimVerdictTests {
    static let e = Endpoint(credential: "default", environment: .production)

    static func token(_ c: Character) -> String { String(repeating: String(c), count: 64) }

    func claim(_ c: PGConnection, only: Endpoint? = nil, credentials: [String] = ["default"], id: String = "w1") async throws -> [ClaimedNotification] {
        try await c.claim(limit: 100, workerID: id, leaseSeconds: 60, credentials: [.apns: credentials], defaultEnvironment: .production,
                          only: only).rows
    }

    @Test("a row whose attempts are used up is never claimed past max_attempts: failed, with its last reason or LeaseExpired")
    func exhausted() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, max_attempts, attempts, status, last_reason, locked_by, locked_until)
                VALUES ($1, '{}', 3, 3, 'retrying', 'InternalServerError', NULL, NULL),
                       ($2, '{}', 3, 3, 'sending', 'LeaseExpired', 'dead', now() - interval '1 second'),
                       ($3, '{}', 3, 2, 'sending', 'LeaseExpired', 'dead', now() - interval '1 second'),
                       ($4, '{}', 2, 5, 'queued', NULL, NULL, NULL)
                """, [Self.token("a"), Self.token("b"), Self.token("c"), Self.token("d")])
            // b and c are in flight under leases that ended: the upkeep gives them back to the claim.
            try await c.giveLeaseRows() // the claims of the workers that died
            #expect(try await c.recoverLapsedLeases(limit: 100).rows == 2)
            let rows = try await claim(c)
            #expect(Dictionary(uniqueKeysWithValues: rows.map { ($0.deviceToken, $0.verdict) }) ==
                    [Self.token("a"): .exhausted, Self.token("b"): .exhausted, Self.token("c"): .send, Self.token("d"): .exhausted])
            let r = try await c.query("SELECT device_token, status, last_reason, attempts, finished_at IS NOT NULL FROM pushq.notifications ORDER BY device_token")
            #expect(r.string(0, 1) == "failed" && r.string(0, 2) == "InternalServerError" && r.string(0, 3) == "3" && r.string(0, 4) == "t")
            #expect(r.string(1, 1) == "failed" && r.string(1, 2) == "LeaseExpired" && r.string(1, 3) == "3")
            #expect(r.string(2, 1) == "sending" && r.string(2, 3) == "3")
            #expect(r.string(3, 1) == "failed" && r.string(3, 2) == "AttemptsExhausted" && r.string(3, 3) == "5")
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications WHERE attempts > max_attempts AND status <> 'failed'").decode(Int.self, 0, 0) == 0)
        }
    }

    /// a lease that runs out gives its attempt back once: a row at its last attempt whose worker died is sent
    /// again, a second lapse in a row counts
    @Test("a lapsed lease gives its attempt back once: a dead worker's last-attempt row is sent again; a second lapse counts")
    func firstLapseIsRefunded() async throws {
        try await TestDatabase.withConnection { c in
            // b: claimed at its only attempt, its worker killed before sending (the lease ran out).
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, max_attempts, attempts, status, last_reason, locked_by, locked_until)
                VALUES ($1, '{}', 1, 1, 'sending', NULL, 'dead', now() - interval '1 second'),
                       ($2, '{}', 3, 3, 'sending', 'InternalServerError', 'dead', now() - interval '1 second'),
                       ($3, '{}', 3, 1, 'sending', NULL, 'dead', now() - interval '1 second')
                """, [Self.token("b"), Self.token("e"), Self.token("f")])
            try await c.giveLeaseRows() // the claims of the workers that died
            #expect(try await c.recoverLapsedLeases(limit: 100).rows == 3)
            let rows = try await claim(c)
            #expect(rows.allSatisfy { $0.verdict == .send } && rows.count == 3)
            #expect(Dictionary(uniqueKeysWithValues: rows.map { ($0.deviceToken, $0.attempts) }) ==
                    [Self.token("b"): 1, Self.token("e"): 3, Self.token("f"): 1], "the lapsed claim's attempt is given back, the new one counted")
            #expect(rows.allSatisfy { $0.lastReason == "LeaseExpired" })
            // The new claims lapse too (a row that kills its workers): now the attempt counts, and b and e end.
            try await c.query("UPDATE pushq.notifications SET locked_until = now() - interval '1 second'")
            try await c.query("UPDATE pushq.leases SET lease_until = now() - interval '1 second'")
            #expect(try await c.recoverLapsedLeases(limit: 100) == .init(rows: 3, leases: 1), "the claim's one lease row, ended")
            let again = try await claim(c)
            #expect(Dictionary(uniqueKeysWithValues: again.map { ($0.deviceToken, $0.verdict) }) ==
                    [Self.token("b"): .exhausted, Self.token("e"): .exhausted, Self.token("f"): .send])
            #expect(again.first { $0.deviceToken == Self.token("f") }?.attempts == 2)
            let r = try await c.query("SELECT string_agg(status || '/' || last_reason || '/' || attempts, ',' ORDER BY device_token) FROM pushq.notifications")
            #expect(r.string(0, 0) == "failed/LeaseExpired/1,failed/LeaseExpired/3,sending/LeaseExpired/2")
        }
    }

    /// a row naming the default credential literally is the default credential's: claimed with the NULL ones,
    /// held and probed with them
    @Test("a row naming the default credential literally is claimed, held and probed with the rows that name none")
    func literalDefaultCredential() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, credential) VALUES ($1, '{}', 'default'), ($2, '{}', NULL), ($3, '{}', 'other')
                """, [Self.token("a"), Self.token("b"), Self.token("c")])
            try await Holds.add(c, [Self.e])
            #expect(try await claim(c).isEmpty, "a hold on the default endpoint covers both")
            let probe = try await claim(c, only: Self.e)
            #expect(Set(probe.map(\.deviceToken)) == [Self.token("a"), Self.token("b")])
            #expect(probe.allSatisfy { $0.credential == "default" && $0.verdict == .send })
        }
    }

    @Test("a throttled token's rows go back to retrying until the throttle ends, attempt not counted; other tokens are claimed")
    func throttled() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, environment) VALUES ($1, '{}', NULL), ($2, '{}', 'production'),
                       ($3, '{}', NULL), ($1, '{}', 'development')
                """, [Self.token("A"), Self.token("a"), Self.token("b")])
            try await c.complete([], invalidations: [], throttles: [TokenThrottle(deviceToken: Self.token("A"), environment: .production, delaySeconds: 300)],
                                 holds: [], resumed: [], workerID: "w0")
            let rows = try await claim(c)
            #expect(rows.filter { $0.verdict == .throttled }.count == 2)
            #expect(rows.filter { $0.verdict == .send }.map(\.deviceToken).sorted() == [Self.token("A"), Self.token("b")].sorted())
            let r = try await c.query("""
                SELECT count(*) FROM pushq.notifications
                 WHERE lower(device_token) = $1 AND COALESCE(environment, 'production') = 'production'
                   AND status = 'retrying' AND attempts = 0 AND scheduled_at > now() + interval '290 seconds'
                """, [Self.token("a")])
            #expect(try r.decode(Int.self, 0, 0) == 2)
            // Back in pushq.due (the claim deleted their entries; the trigger gave them new ones), due when the throttle ends.
            let due = try await c.query("""
                SELECT count(*) FROM pushq.due d JOIN pushq.notifications n ON n.id = d.id
                 WHERE n.status = 'retrying' AND d.due_at = n.scheduled_at AND d.due_at > now() + interval '290 seconds'
                """)
            let entries = try await c.query("SELECT count(*) FROM pushq.due").decode(Int.self, 0, 0)
            #expect(try due.decode(Int.self, 0, 0) == 2 && entries == 2)
            // A throttle that ended is ignored, and deleted by the upkeep.
            try await c.query("UPDATE pushq.token_throttles SET until = now() - interval '1 second'")
            try await c.query("UPDATE pushq.notifications SET scheduled_at = now() WHERE status = 'retrying'")
            #expect(try await claim(c).filter { $0.verdict == .send }.count == 2)
            try await c.deleteEndedThrottles()
            #expect(try await c.query("SELECT count(*) FROM pushq.token_throttles").decode(Int.self, 0, 0) == 0)
        }
    }

    /// held endpoints are skipped whether or not their probe is due; a probe claims only its endpoint, and
    /// only one worker takes it
    @Test("held endpoints are skipped whether or not their probe is due; a probe claims only its endpoint, by one worker")
    func holdsAndProbes() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, credential, environment)
                SELECT lpad(to_hex(g), 64, '0'), '{}', CASE WHEN g % 2 = 0 THEN NULL ELSE 'b' END, NULL FROM generate_series(1, 10) g
                """)
            let b = Endpoint(credential: "b", environment: .production)
            let written = try await c.complete([], invalidations: [], holds: [(HoldRequest(endpoint: Self.e, kind: .outage, reason: "InternalServerError", message: "m"), 0)],
                                               resumed: [], workerID: "w1")
            #expect(written.heldNow.map(\.kind) == [.outage])
            let holds = try await c.holds()
            #expect(holds.map(\.endpoint) == [Self.e] && holds[0].probeDue && holds[0].failures == 1)
            let rows = try await claim(c, credentials: ["default", "b"])
            #expect(rows.count == 5 && rows.allSatisfy { $0.credential == "b" })
            // Two workers race for the due probe: one gets it.
            let url = try await c.query("SELECT current_database()").string(0, 0)!
            let other = try await PGConnection.connect(PGURL.withDatabase(TestDatabase.serverURL, url), logger: TestDatabase.logger)
            async let first = c.takeProbe(Self.e, failures: 1, seconds: 60, workerID: "w1")
            async let second = other.takeProbe(Self.e, failures: 1, seconds: 60, workerID: "w2")
            let taken = try await [first, second]
            #expect(taken.filter { $0 }.count == 1)
            #expect(try await c.holds().first?.probeDue == false)
            let probe = try await claim(c, only: Self.e)
            #expect(probe.count == 5 && probe.allSatisfy { $0.credential == "default" && $0.environment == .production })
            // A hold of a higher kind replaces a lower one, never the reverse; each write is reported once.
            let credential = HoldRequest(endpoint: Self.e, kind: .credential, reason: "InvalidProviderToken", message: "m")
            #expect(try await c.complete([], invalidations: [], holds: [(credential, 30)], resumed: [], workerID: "w1").heldNow == [credential])
            #expect(try await c.complete([], invalidations: [], holds: [(credential, 30)], resumed: [], workerID: "w2").heldNow.isEmpty)
            let outage = HoldRequest(endpoint: Self.e, kind: .outage, reason: "InternalServerError", message: "m")
            #expect(try await c.complete([], invalidations: [], holds: [(outage, 1)], resumed: [], workerID: "w2").heldNow.isEmpty)
            #expect(try await c.holds().map(\.kind) == [.credential])
            // A success lifts it, and says what it lifted; lifting nothing says nothing.
            let lifted = try await c.complete([], invalidations: [], holds: [], resumed: [Self.e, b], workerID: "w1").lifted
            #expect(lifted.map(\.endpoint) == [Self.e] && lifted.map(\.kind) == [.credential])
            #expect(try await c.holds().isEmpty)
            // A hold whose probe found nothing to send is lifted, unless written again since.
            _ = try await c.complete([], invalidations: [], holds: [(outage, 0)], resumed: [], workerID: "w1")
            #expect(try await c.takeProbe(Self.e, failures: 1, seconds: 5, workerID: "w1"))
            try await c.liftIdleHold(Self.e, failures: 2)
            #expect(try await c.holds().isEmpty)
            await other.close()
        }
    }

    @Test("a hold row that cannot be decoded is passed over without shifting the others' messages")
    func holdReportsKeepTheirRows() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.credential_pauses (credential, environment, kind, reason, message, paused_until)
                VALUES ('a', 'staging', 'outage', 'X', 'message of a', now() + interval '1 hour'),
                       ('b', 'production', 'outage', 'Y', 'message of b', now() + interval '2 hours')
                """)
            let reports = try await c.holdReports()
            #expect(reports.map(\.held.endpoint) == [Endpoint(credential: "b", environment: .production)])
            #expect(reports.first?.message == "message of b")
            #expect((reports.first?.nextProbe.timeIntervalSinceNow ?? 0) > 3600)
        }
    }

    @Test("waiting rows past expires_at end expired whoever serves them; rows in flight and rows not yet expired stay")
    func expireWaiting() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, credential, expires_at, status, locked_by, locked_until)
                VALUES ($1, '{}', 'nobody-has-it', now() - interval '1 second', 'queued', NULL, NULL),
                       ($2, '{}', NULL, now() - interval '1 second', 'retrying', NULL, NULL),
                       ($3, '{}', NULL, now() + interval '1 hour', 'queued', NULL, NULL),
                       ($4, '{}', NULL, now() - interval '1 second', 'sending', 'w', now() + interval '1 minute'),
                       ($5, '{}', NULL, NULL, 'queued', NULL, NULL)
                """, [Self.token("a"), Self.token("b"), Self.token("c"), Self.token("d"), Self.token("e")])
            let expired = try await c.expireWaiting(limit: 1000).sorted { $0.credential < $1.credential }
            #expect(expired.map { "\($0.credential) \($0.environment ?? "-") \($0.lastReason ?? "-") \($0.rows)" }
                    == ["default - - 1", "nobody-has-it - - 1"])
            let r = try await c.query("SELECT string_agg(status, ',' ORDER BY device_token) FROM pushq.notifications")
            #expect(r.string(0, 0) == "expired,expired,queued,sending,queued")
            let plan = try await c.query("EXPLAIN " + PGConnection.expireWaitingSQL, [1000])
            #expect((0..<plan.count).contains { plan.string($0, 0)?.contains("due_expiry") == true }, "walks pushq.due's expiry index")
        }
    }

    @Test("workers register, beat and leave; rows waiting for a credential no live worker serves are counted by name")
    func workers() async throws {
        try await TestDatabase.withConnection { c in
            try await c.registerWorker(id: "w1", host: "h", pid: 42, version: "9.9", credentials: [
                ServedCredential(name: "default", environment: "production", topic: "com.example.a"),
                ServedCredential(name: "b", environment: "production", topic: nil),
                ServedCredential(name: "f", environment: "production", topic: nil, provider: .fcm)])
            try await c.registerWorker(id: "gone", host: "h", pid: 1, version: "9.9", credentials: [
                ServedCredential(name: "c", environment: "production", topic: nil)])
            try await c.query("UPDATE pushq.workers SET heartbeat_at = now() - interval '5 minutes' WHERE id = 'gone'")
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, credential)
                VALUES ($1, '{}', NULL), ($1, '{}', 'b'), ($1, '{}', 'c'), ($1, '{}', 'c'), ($1, '{}', 'x'), ($1, '{}', 'f')
                """, [Self.token("a")])
            // Credential names are per provider: the worker's FCM `f` serves FCM rows of `f`, not
            // APNs ones; nobody serves the FCM `b` or `default`.
            try await c.query("""
                INSERT INTO pushq.notifications (provider, device_token, payload, credential)
                VALUES ('fcm', 'T:1', '{}', 'f'), ('fcm', 'T:1', '{}', 'b'), ('fcm', 'T:1', '{}', NULL)
                """)
            let live = try await c.liveWorkers()
            #expect(live.map(\.id) == ["w1"])
            #expect(live.first?.credentials.map(\.name) == ["default", "b", "f"] && live.first?.credentials.first?.topic == "com.example.a")
            #expect(live.first?.credentials.map(\.provider) == [nil, nil, "fcm"])
            let orphans = try await c.rowsWithoutWorker()
            #expect(orphans.map(\.credential) == ["c", "b (fcm)", "default (fcm)", "f", "x"] && orphans.map(\.rows) == [2, 1, 1, 1, 1])
            #expect(try await c.heartbeat(id: "w1"))
            #expect(try await !c.heartbeat(id: "never-registered"))
            try await c.unregisterWorker(id: "w1")
            #expect(try await c.liveWorkers().isEmpty)
        }
    }
}
