import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// Rows whose data makes the claim statement fail, planted with the table's rules off and a
/// CHECK constraint added NOT VALID that they break (as a row from before migration 4 was, until
/// schema 56 made the checks a trigger): the worker singles them out and ends them, and the rest
/// of the queue keeps flowing.
@Suite("Poison rows", .serialized)
struct PoisonRowTests {
    static let badTopic = "com.example\r\napns-priority: 10"

    /// Runs `body` (which inserts rows the rule `notifications_topic_shape` refuses) with the
    /// rules off, and adds the rule as a CHECK constraint NOT VALID: the claim's UPDATE of such a
    /// row then fails with 23514.
    static func plantingBadTopics(_ db: PGConnection, _ body: () async throws -> Void) async throws {
        try await TableRules.off(db, body)
        try await db.execute("""
            ALTER TABLE pushq.notifications ADD CONSTRAINT notifications_topic_shape
                CHECK (topic IS NULL OR topic ~ '^[A-Za-z0-9._-]{1,255}$' OR status IN ('sent', 'failed', 'expired', 'cancelled')) NOT VALID
            """)
    }

    /// Inserts one alert with a bad topic, due `secondsAgo` ago.
    static func insertBadTopic(_ db: PGConnection, token: String, secondsAgo: Int) async throws {
        try await db.query("""
            INSERT INTO pushq.notifications (device_token, payload, topic, scheduled_at) VALUES ($1, '{"aps":{}}', $2, now() - $3 * interval '1 second')
            """, [token, badTopic, secondsAgo])
    }

    @Test("bad rows at the head and amid the queue end failed/ClaimError; every other row is sent once, and claiming goes on")
    func poisonRowsIsolated() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                let bad = (0..<4).map { Fixtures.token($0, prefix: "f") }
                try await Self.plantingBadTopics(db) {
                    // Three side by side at the head of the queue, one amid 300 good rows.
                    for token in bad.prefix(3) { try await Self.insertBadTopic(db, token: token, secondsAgo: 60) }
                    try await insertAlerts(db, count: 150, prefix: "1")
                    try await Self.insertBadTopic(db, token: bad[3], secondsAgo: 0)
                    try await insertAlerts(db, count: 150, prefix: "2")
                }
                // Infinite expiries no longer break the claim: no expiry, and already expired (the upkeep's sweep may take it first).
                try await TableRules.off(db) {
                    try await db.query("""
                        INSERT INTO pushq.notifications (device_token, payload, expires_at) VALUES ($1, '{"aps":{}}', 'infinity'), ($2, '{"aps":{}}', '-infinity')
                        """, [Fixtures.token(1, prefix: "e"), Fixtures.token(2, prefix: "e")])
                }
                let configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                try await withWorker(configuration) { worker in
                    try await waitUntilAllFinal(db, timeout: .seconds(60))
                    // The worker is still claiming: rows enqueued now go out too.
                    try await insertAlerts(db, count: 50, prefix: "3")
                    try await waitUntilAllFinal(db, timeout: .seconds(60))
                    #expect(worker.stats.claimed >= 351)
                }
                #expect(try await statusCounts(db) == ["sent": 351, "failed": 4, "expired": 1])
                let failed = try await db.query("""
                    SELECT device_token, last_reason, topic, attempts, locked_by IS NULL FROM pushq.notifications WHERE status = 'failed' ORDER BY device_token
                    """)
                #expect((0..<failed.count).map { failed.string($0, 0) ?? "" } == bad)
                for row in 0..<failed.count {
                    #expect(failed.string(row, 1) == "ClaimError" && failed.string(row, 2) == Self.badTopic)
                    #expect(failed.string(row, 3) == "0" && failed.string(row, 4) == "t")
                }
                let requests = mock.requests()
                #expect(requests.count == 351, "each good row sent once")
                #expect(Set(requests.map(\.apnsID)).count == 351)
                #expect(!requests.contains { bad.contains($0.deviceToken ?? "") })
                let forever = try #require(requests.first { $0.deviceToken == Fixtures.token(1, prefix: "e") })
                #expect(forever.header("apns-expiration") == nil, "expires_at 'infinity' is no expiry")
            }
        }
    }

    @Test("a claim that fails whatever the row ends nothing and is retried; once it works, every row goes out")
    func brokenClaimEndsNothing() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                // Every claim fails on data (22023); a sequence counts the tries (nextval survives the rollback).
                try await db.execute("""
                    CREATE SEQUENCE public.claim_tries;
                    CREATE FUNCTION public.refuse_sending() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        IF NEW.status = 'sending' THEN
                            PERFORM nextval('public.claim_tries');
                            RAISE EXCEPTION 'no row may be sent' USING ERRCODE = '22023';
                        END IF;
                        RETURN NEW;
                    END $$;
                    CREATE TRIGGER refuse_sending BEFORE UPDATE ON pushq.notifications
                        FOR EACH ROW EXECUTE FUNCTION public.refuse_sending();
                    """)
                try await insertAlerts(db, count: 100, prefix: "4")
                let configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                try await withWorker(configuration) { _ in
                    // Enough tries for several hunts, each ending without a row ended.
                    #expect(try await eventually { try await scalar(db, "SELECT last_value FROM public.claim_tries") >= 300 })
                    #expect(try await statusCounts(db) == ["queued": 100])
                    #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE last_reason IS NOT NULL OR attempts > 0") == 0)
                    try await db.execute("DROP TRIGGER refuse_sending ON pushq.notifications")
                    try await waitUntilAllFinal(db, timeout: .seconds(60))
                }
                #expect(try await statusCounts(db) == ["sent": 100])
                #expect(mock.stats().requests == 100)
            }
        }
    }

    @Test("a bad row among a held endpoint's rows does not keep the hold: the probe ends it and the endpoint resumes")
    func poisonRowInProbe() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                let bad = Fixtures.token(0, prefix: "f")
                try await Self.plantingBadTopics(db) {
                    try await Self.insertBadTopic(db, token: bad, secondsAgo: 60)
                    try await insertAlerts(db, count: 20, prefix: "5")
                }
                // An outage hold on the worker's endpoint whose probe is due: only probes may claim its rows.
                try await db.execute("""
                    INSERT INTO pushq.credential_pauses (credential, environment, kind, reason, message, paused_until)
                    VALUES ('default', 'development', 'outage', 'InternalServerError', 'planted', now() - interval '1 second')
                    """)
                let configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                try await withWorker(configuration) { _ in
                    try await waitUntilAllFinal(db, timeout: .seconds(60))
                }
                #expect(try await statusCounts(db) == ["sent": 20, "failed": 1])
                #expect(try await db.query("SELECT last_reason FROM pushq.notifications WHERE device_token = $1", [bad]).string(0, 0) == "ClaimError")
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.credential_pauses") == 0, "the probe's 200 lifted the hold")
                #expect(mock.stats().requests == 20)
            }
        }
    }
}
