import Foundation
import PushCore
import PushStore
import PushTestSupport
import Testing
import PGClient

/// Schema 56: the rules of a producer's row as one trigger (`pushq.notifications_rules()`),
/// run when a row is written by its producer or becomes waiting again, not at every claim and
/// answer.
@Suite("The rules trigger")
struct RulesTriggerTests {
    static func token(_ n: Int) -> String { String(format: "%064x", n) }

    /// Makes the rules function count its runs in `public.rules_calls` (a sequence: a refused
    /// row's run counts too).
    static func countingRuns(_ c: PGConnection) async throws {
        let definition = try await c.query("SELECT pg_get_functiondef('pushq.notifications_rules'::regproc)").string(0, 0) ?? ""
        let begin = try #require(definition.range(of: "\nBEGIN\n"))
        try await c.execute("CREATE SEQUENCE public.rules_calls")
        try await c.execute(definition.replacingCharacters(in: begin, with: "\nBEGIN\n    PERFORM nextval('public.rules_calls');\n"))
    }

    static func runs(_ c: PGConnection) async throws -> Int {
        try await c.query("SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM public.rules_calls").decode(Int.self, 0, 0) ?? -1
    }

    /// The error of `sql`, which must fail.
    static func refusal(_ c: PGConnection, _ sql: String) async -> PGError? {
        await #expect(throws: PGError.self, "\(sql)") { try await c.query(sql) }
    }

    /// a producer's INSERT runs the rules once a row; the claim and a sent answer never do; a retry and a
    /// give-back do, as the row waits again
    @Test("a producer's INSERT runs the rules once a row; the claim and a sent answer never do; a retry and a give-back do")
    func runsWhenWritten() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.countingRuns(c)
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload) SELECT lpad(to_hex(g), 64, '0'), '{"aps":{}}' FROM generate_series(1, 3) g
                """)
            #expect(try await Self.runs(c) == 3)
            let rows = try await c.claim(limit: 3, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production).rows
            #expect(rows.count == 3)
            #expect(try await Self.runs(c) == 3, "the claim sets no column a rule reads and no status a rule waits for")
            let (sent, retried, given) = (rows[0], rows[1], rows[2])
            let written = try await c.complete([
                RowCompletion(id: sent.id, attempt: sent.attempts, lease: sent.lease, disposition: Disposition(status: .sent, reason: nil),
                              httpStatus: 200, apnsUniqueID: nil),
                RowCompletion(id: retried.id, attempt: retried.attempts, lease: retried.lease,
                              disposition: Disposition(status: .retrying, reason: "InternalServerError", retryDelay: 60),
                              httpStatus: 500, apnsUniqueID: nil),
            ], invalidations: [], holds: [], resumed: [], workerID: "w1")
            #expect(written.updated == 2)
            #expect(try await Self.runs(c) == 4, "the retry: its row waits again")
            #expect(try await c.release([RowClaim(id: given.id, attempt: given.attempts, lease: given.lease)], workerID: "w1") == 1)
            #expect(try await Self.runs(c) == 5, "the give-back: its row waits again")
            let r = try await c.query("SELECT string_agg(status, ',' ORDER BY id) FROM pushq.notifications")
            #expect(r.string(0, 0) == "sent,retrying,queued")
        }
    }

    @Test("an UPDATE that sets a column a rule reads is checked, under the rule's name and PostgreSQL's own message for a check")
    func updatesOfRuledColumns() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{}')", [Self.token(1)])
            let cases = [("payload = '[]'", "notifications_payload_object"), ("lane = 'a lane'", "notifications_lane_name"),
                         ("max_attempts = 0", "notifications_max_attempts_positive"), ("topic = 'a topic'", "notifications_topic_shape"),
                         ("device_token = 'xyz'", "notifications_device_token_hex")]
            for (set, rule) in cases {
                let error = await Self.refusal(c, "UPDATE pushq.notifications SET \(set)")
                #expect(error?.sqlState == "23514" && error?.constraint == rule, "\(set)")
                #expect(error?.message == "new row for relation \"notifications\" violates check constraint \"\(rule)\"", "\(set)")
                #expect(error?.table == "notifications", "\(set)")
            }
            try await c.query("UPDATE pushq.notifications SET lane = 'campaign', max_attempts = 3")
            #expect(try await c.query("SELECT lane FROM pushq.notifications").string(0, 0) == "campaign")
        }
    }

    /// a row whose status makes a relaxed rule apply again is checked: out of a final status, and back to
    /// waiting from sending; final to final is not
    @Test("a status change that makes a relaxed rule apply again is checked (out of final, back to waiting); final to final is not")
    func statusThatRelaxed() async throws {
        try await TestDatabase.withConnection { c in
            // Final rows are not checked for their topic; live-activity rules hold for waiting rows only.
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, status, topic, finished_at) VALUES ($1, '{}', 'failed', 'a topic', now())
                """, [Self.token(1)])
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, status, push_type, topic, locked_by, locked_until, attempts)
                VALUES ($1, '{"aps":{}}', 'sending', 'liveactivity', 'com.example.app.push-type.liveactivity', 'w', now() + interval '1 minute', 1)
                """, [Self.token(2)])
            for (id, to, rule) in [(1, "queued", "notifications_topic_shape"), (1, "sending", "notifications_topic_shape"),
                                   (2, "retrying", "notifications_liveactivity_event"), (2, "queued", "notifications_liveactivity_event")] {
                let error = await Self.refusal(c, "UPDATE pushq.notifications SET status = '\(to)' WHERE device_token = '\(Self.token(id))'")
                #expect(error?.sqlState == "23514" && error?.constraint == rule, "\(id) to \(to)")
            }
            try await c.query("UPDATE pushq.notifications SET status = 'cancelled' WHERE device_token = $1", [Self.token(1)])
            try await c.query("UPDATE pushq.notifications SET status = 'expired', finished_at = now() WHERE device_token = $1", [Self.token(2)])
            let r = try await c.query("SELECT string_agg(status, ',' ORDER BY device_token) FROM pushq.notifications")
            #expect(r.string(0, 0) == "cancelled,expired")
        }
    }

    @Test("a row that breaks several rules is refused under the first by name, as PostgreSQL orders a table's CHECK constraints")
    func firstByName() async throws {
        try await TestDatabase.withConnection { c in
            let error = await Self.refusal(c, "INSERT INTO pushq.notifications (device_token, payload, priority) VALUES ('xyz', '[]', 7)")
            #expect(error?.constraint == "notifications_device_token_hex")
            let other = await Self.refusal(c, "INSERT INTO pushq.notifications (device_token, payload, priority) VALUES (repeat('a', 64), '[]', 7)")
            #expect(other?.constraint == "notifications_payload_object")
        }
    }

    // The release's part 1 drops 0.3.0's checks (ACCESS EXCLUSIVE) before it creates the rules' triggers.
    @Test("the upgrade from 0.3.0 takes the strongest lock first: a claim that locked rows and updates them is not deadlocked")
    func migrationLockOrder() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let migrator = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let before = Migration.all.filter { $0.version <= SchemaHistory.release030 }
            #expect(try await migrator.migrate(before, logger: TestDatabase.logger) == before.map(\.version))
            try await migrator.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{}')", [Self.token(1)])
            // A claim's transaction: the row locked (ROW SHARE on the table), its update still to come.
            // Deadlocks found after 10 ms instead of 1 s, well within the migration's 200 ms lock wait.
            let claimer = try await PGConnection.connect(url, logger: TestDatabase.logger, statementTimeout: .seconds(30))
            try await claimer.execute("BEGIN")
            try await claimer.execute("SET LOCAL deadlock_timeout = '10ms'")
            try await claimer.query("SELECT id FROM pushq.notifications FOR UPDATE")
            async let applied = migrator.migrate(logger: TestDatabase.logger)
            let observer = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await LockWait.untilWaiting(observer, on: "pushq.notifications"), "the migration waits for the claim")
            // Had the migration locked the table less strongly first (CREATE TRIGGER: SHARE ROW
            // EXCLUSIVE) and then waited for more, this update would wait for it while it waited
            // for the claim: a deadlock, the claim ended with SQLSTATE 40P01.
            let updated = try await claimer.query("UPDATE pushq.notifications SET status = 'sending', locked_by = 'w', locked_until = now() + interval '1 minute', attempts = 1")
            #expect(updated.affectedRows == 1)
            try await claimer.execute("COMMIT")
            #expect(try await applied == Migration.all.map(\.version).filter { $0 > SchemaHistory.release030 })
            #expect(try await migrator.query("SELECT status FROM pushq.notifications").string(0, 0) == "sending")
            for c in [migrator, claimer, observer] { await c.close() }
        }
    }
}
