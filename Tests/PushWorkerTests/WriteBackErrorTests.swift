import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// Write-backs that fail: on a row's data (a trigger added by the test refuses one row's
/// answer, as an odd reason or timestamp would), or transiently (a killed connection, 40001).
@Suite("Write-back errors", .serialized)
struct WriteBackErrorTests {
    /// Adds a trigger that refuses the write-back of the rows of `tokens`: the first `stall`
    /// tries sleep a minute (for the test to kill), the next up to `limit` raise `sqlState`;
    /// `public.refusals` counts the tries. Ending a row `WriteBackError` is never refused.
    static func refuseAnswers(_ db: PGConnection, tokens: [String], sqlState: String, stall: Int = 0, limit: Int = 1_000_000) async throws {
        try await db.execute("""
            CREATE TABLE public.refused_tokens (token text PRIMARY KEY);
            CREATE SEQUENCE public.refusals;
            CREATE FUNCTION public.refuse_answer() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE n bigint;
            BEGIN
                IF OLD.status = 'sending' AND NEW.status <> 'sending' AND NEW.last_reason IS DISTINCT FROM 'WriteBackError'
                   AND NEW.device_token IN (SELECT token FROM public.refused_tokens) THEN
                    n := nextval('public.refusals');
                    IF n <= \(stall) THEN PERFORM pg_sleep(60); END IF;
                    IF n <= \(stall + limit) THEN RAISE EXCEPTION 'answer refused' USING ERRCODE = '\(sqlState)'; END IF;
                END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER refuse_answer BEFORE UPDATE ON pushq.notifications FOR EACH ROW EXECUTE FUNCTION public.refuse_answer();
            """)
        for token in tokens { try await db.query("INSERT INTO public.refused_tokens VALUES ($1)", [token]) }
    }

    /// a row whose answer cannot be recorded ends failed/WriteBackError; the rest of its batch is recorded
    /// once, and the worker keeps draining
    @Test("a row whose answer cannot be recorded ends failed/WriteBackError; the rest of its batch is recorded once")
    func badAnswerIsolated() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                let bad = Fixtures.token(0, prefix: "f")
                let gone = Fixtures.token(1, prefix: "e")
                mock.setRule(forToken: gone, .always(.unregistered(at: 1_700_000_000_000)))
                try await Self.refuseAnswers(db, tokens: [bad], sqlState: "23514")
                try await insertAlerts(db, count: 100, prefix: "1")
                try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\":{}}'), ($2, '{\"aps\":{}}')", [bad, gone])
                try await insertAlerts(db, count: 100, prefix: "2")
                let configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                try await withWorker(configuration) { worker in
                    try await waitUntilAllFinal(db, timeout: .seconds(60))
                    try await insertAlerts(db, count: 50, prefix: "3")
                    try await waitUntilAllFinal(db, timeout: .seconds(60))
                    // The worker counts a batch after its write-back commits: the rows can be
                    // final in the table a moment before the last batch is counted.
                    #expect(try await LockWait.until(timeout: .seconds(60)) { worker.stats.sent + worker.stats.failed >= 252 })
                    let stats = worker.stats
                    #expect(stats.sent == 250 && stats.failed == 2)
                }
                #expect(try await statusCounts(db) == ["sent": 250, "failed": 2])
                let r = try await db.query("""
                    SELECT last_reason, last_status, attempts, locked_by IS NULL, finished_at IS NOT NULL, sent_at IS NULL
                      FROM pushq.notifications WHERE device_token = $1
                    """, [bad])
                #expect(r.string(0, 0) == "WriteBackError" && r.string(0, 1) == nil && r.string(0, 2) == "1")
                #expect(r.string(0, 3) == "t" && r.string(0, 4) == "t" && r.string(0, 5) == "t")
                #expect(try await db.query("SELECT last_reason FROM pushq.notifications WHERE device_token = $1", [gone]).string(0, 0) == "Unregistered")
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.devices WHERE invalidated_at IS NOT NULL") == 1,
                        "the invalidation of another row of the batch is written")
                let requests = mock.requests()
                #expect(requests.count == 252 && Set(requests.map(\.apnsID)).count == 252, "every row sent once, the bad one too")
                // The bad row's answer was tried in the batch and in each half holding it, down to itself: ⌈log2 202⌉ + 1 at most.
                let refusals = try await scalar(db, "SELECT last_value FROM public.refusals")
                #expect(refusals >= 1 && refusals <= 9)
            }
        }
    }

    /// a row whose answer can be neither recorded nor ended stays sending, and its claim's lease row stays
    /// for the upkeep; every other lease row is deleted
    @Test("a row that can be neither recorded nor ended stays sending with its lease row for the upkeep; other lease rows go")
    func unendableRowKeepsItsLease() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { _, apnsURL in
                let bad = Fixtures.token(0, prefix: "d")
                // Every write of the bad row's answer is refused, WriteBackError included.
                try await db.execute("""
                    CREATE FUNCTION public.refuse_all() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        IF OLD.status = 'sending' AND NEW.status <> 'sending' AND NEW.device_token = '\(bad)' THEN
                            RAISE EXCEPTION 'answer refused' USING ERRCODE = '23514';
                        END IF;
                        RETURN NEW;
                    END $$;
                    CREATE TRIGGER refuse_all BEFORE UPDATE ON pushq.notifications FOR EACH ROW EXECUTE FUNCTION public.refuse_all();
                    """)
                try await insertAlerts(db, count: 30, prefix: "4")
                let id = try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\":{}}') RETURNING id", [bad])
                    .decode(Int64.self, 0, 0)
                try await insertAlerts(db, count: 30, prefix: "5")
                var configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                configuration.leaseSeconds = 600
                configuration.claimBatchSize = 10
                try await withWorker(configuration) { _ in
                    let settled = try await LockWait.until(timeout: .seconds(60)) {
                        let sent = try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sent'")
                        let leases = try await scalar(db, "SELECT count(*) FROM pushq.leases")
                        return sent == 60 && leases == 1
                    }
                    #expect(settled, "every lease row but one deleted by the worker")
                }
                let lease = try await db.query("SELECT $1::int8 = ANY (ids), lease_until > now() FROM pushq.leases", [id])
                #expect(lease.string(0, 0) == "t" && lease.string(0, 1) == "t", "the bad row's claim keeps its lease row")
                let row = try await db.query("SELECT status FROM pushq.notifications WHERE id = $1", [id])
                #expect(row.string(0, 0) == "sending", "its lease brings it back once it ends")
            }
        }
    }

    /// an Unregistered answer whose timestamp PostgreSQL cannot hold (22008) ends that row
    /// failed/WriteBackError, token not invalidated; the rest are recorded
    @Test("an Unregistered answer with a timestamp PostgreSQL cannot hold ends that row WriteBackError; the rest are recorded")
    func timestampOutOfRange() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                // 18 digits, the most the parser reads: year 31 690 000, past PostgreSQL's 294276.
                let odd = Fixtures.token(0, prefix: "f")
                mock.setRule(forToken: odd, .always(.unregistered(at: 999_999_999_999_999_999)))
                try await insertAlerts(db, count: 30, prefix: "1")
                try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\":{}}')", [odd])
                try await insertAlerts(db, count: 30, prefix: "2")
                let configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                try await withWorker(configuration) { _ in
                    let drained = try await waitUntilAllFinal(db, timeout: .seconds(30))
                    #expect(drained)
                }
                #expect(try await statusCounts(db) == ["sent": 60, "failed": 1])
                #expect(try await db.query("SELECT last_reason FROM pushq.notifications WHERE device_token = $1", [odd]).string(0, 0) == "WriteBackError")
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.devices") == 0)
                #expect(mock.requests().count == 61)
            }
        }
    }

    /// a transient failure of the write-back (a killed connection, then 40001 six times) is retried, never
    /// split: every row ends sent
    @Test("a transient write-back failure (a killed connection, then 40001 six times) is retried, never split: all rows sent")
    func transientRetried() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                let slow = Fixtures.token(0, prefix: "f")
                try await Self.refuseAnswers(db, tokens: [slow], sqlState: "40001", stall: 1, limit: 6)
                try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\":{}}')", [slow])
                try await insertAlerts(db, count: 7, prefix: "1")
                let configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                try await withWorker(configuration) { _ in
                    // The write-back holding the row sleeps in the trigger: kill its connection.
                    #expect(try await eventually {
                        try await scalar(db, "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND datname = current_database()") == 1
                    })
                    #expect(try await db.query("""
                        SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND datname = current_database()
                        """).string(0, 0) == "t")
                    try await waitUntilAllFinal(db, timeout: .seconds(60))
                }
                // Split on 40001, 8 rows would reach the row alone within 4 tries and end it.
                #expect(try await statusCounts(db) == ["sent": 8])
                #expect(try await scalar(db, "SELECT last_value FROM public.refusals") == 8, "killed once, refused six times, then recorded")
                #expect(mock.requests().count == 8, "recorded, not resent")
            }
        }
    }

    /// a row of a push_type this version does not know waits for a newer worker, untouched; a row of an
    /// unknown environment ends failed/InvalidRow; the others go out
    @Test("an unknown push_type waits untouched; an unknown environment ends failed/InvalidRow; the others go out")
    func unreadableRowEnded() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                let newer = Fixtures.token(0, prefix: "f")
                let odd = Fixtures.token(0, prefix: "e")
                try await insertAlerts(db, count: 20, prefix: "1")
                try await TableRules.off(db) {
                    try await db.query("INSERT INTO pushq.notifications (device_token, payload, push_type) VALUES ($1, '{\"aps\":{}}', 'hologram')", [newer])
                    try await db.query("INSERT INTO pushq.notifications (device_token, payload, environment) VALUES ($1, '{\"aps\":{}}', 'staging')", [odd])
                }
                try await insertAlerts(db, count: 20, prefix: "2")
                let configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                try await withWorker(configuration) { _ in
                    let settled = try await eventually(timeout: .seconds(30)) { try await statusCounts(db) == ["sent": 40, "failed": 1, "queued": 1] }
                    #expect(settled)
                }
                #expect(try await statusCounts(db) == ["sent": 40, "failed": 1, "queued": 1])
                let r = try await db.query("SELECT last_reason, attempts, locked_by IS NULL FROM pushq.notifications WHERE device_token = $1", [odd])
                #expect(r.string(0, 0) == "InvalidRow" && r.string(0, 1) == "1" && r.string(0, 2) == "t")
                let w = try await db.query("SELECT status, attempts, last_reason FROM pushq.notifications WHERE device_token = $1", [newer])
                #expect(w.string(0, 0) == "queued" && w.string(0, 1) == "0" && w.string(0, 2) == nil, "never claimed: a newer worker sends it")
                #expect(mock.requests().count == 40 && !mock.requests().contains { $0.deviceToken == odd || $0.deviceToken == newer })
            }
        }
    }
}
