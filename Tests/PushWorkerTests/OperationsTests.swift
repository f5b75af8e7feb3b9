import ChildProcess
import Foundation
import Logging
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Synchronization
import Testing
import PGClient

/// Outcomes of rounds tried while another round ran.
private final class Outcomes: Sendable {
    let value = Mutex<[Pruner.Outcome]>([])
    func append(_ o: Pruner.Outcome) { value.withLock { $0.append(o) } }
}

/// Retention, logs and status as an operator runs them: `pushq prune`, `pushq status --json`,
/// `PUSHQ_LOG_FORMAT`, `PUSHQ_LOG_LEVEL`, and the worker's elected pruner.
@Suite("Operations", .serialized)
struct OperationsTests {
    func pushq(_ arguments: [String], databaseURL: String, _ extra: [String: String] = [:]) async throws -> (ChildProcess.Termination, String, String) {
        var env = ProcessInfo.processInfo.environment
        env["PUSHQ_DATABASE_URL"] = databaseURL
        for (k, v) in extra { env[k] = v }
        return try await ChildProcess.run(pushqBinary, arguments, environment: env)
    }

    /// Inserts `count` rows of `status` that finished (or, open, were created) `ago` seconds ago.
    func insert(_ c: PGConnection, _ count: Int, _ status: String, ago: Double) async throws {
        try await c.query("""
            INSERT INTO pushq.notifications (device_token, payload, status, finished_at, created_at, scheduled_at)
            SELECT lpad(to_hex(g), 64, 'c'), '{}', $2,
                   CASE WHEN $2 IN ('sent', 'failed', 'expired', 'cancelled') THEN now() - $3 * interval '1 second' END,
                   now() - $3 * interval '1 second', now() - $3 * interval '1 second'
              FROM generate_series(1, $1) g
            """, [count, status, ago])
    }

    /// two pruners never run at once: a round started while another holds the lock does nothing; after it,
    /// the next one finds nothing left
    @Test("two pruners never run at once: a round started during another does nothing; after it, the next finds nothing left")
    func oneRoundAtATime() async throws {
        try await TestDatabase.with { url in
            let a = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let b = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await insert(a, 25, "sent", ago: 60)
            try await insert(a, 5, "queued", ago: 400 * 86_400)
            let pruner = Pruner(policy: RetentionPolicy(sentSeconds: 0, finalSeconds: 0, batchSize: 10))
            let during = Outcomes()
            var walkA = PruneWalk()
            let outcome = try await pruner.round(a, walk: &walkA, now: 0, rest: { _ in
                // Mid-round (between full batches of A): B tries its own round.
                var walkB = PruneWalk()
                let other = try? await pruner.round(b, walk: &walkB, now: 0, rest: { _ in })
                during.append(other ?? .notElected)
            })
            // A's walk of sent rows reads 30 rows (the 5 old queued ones first) in batches of 10,
            // 10, 10 and 0, the walk of ended rows the 5 queued ones, the retirement of tokens one.
            #expect(during.value.withLock { $0 } == [.notElected, .notElected, .notElected], "A rested three times, B was refused each time")
            guard case .pruned(let deleted, let batches, let retired) = outcome else { Issue.record("A was not elected"); return }
            #expect(deleted[.sent] == 25 && batches == 4 + 1 + 1 && retired == 0)
            var walkB = PruneWalk()
            let after = try await pruner.round(b, walk: &walkB, now: 0, rest: { _ in })
            #expect(after == .pruned(deleted: [.sent: 0, .ended: 0], batches: 3, retiredTokens: 0))
            #expect(try await statusCounts(a) == ["queued": 5])
            await a.close()
            await b.close()
        }
    }

    /// rows a round passed over while they waited are deleted by a later round once final and aged: with
    /// retention 0, the next round; with a day, not before the walk starts again
    @Test("rows a round passed over while they waited are deleted by a later round once final and aged")
    func passedOverRowsAreDeletedLater() async throws {
        try await TestDatabase.withConnection { c in
            try await insert(c, 5, "queued", ago: 60)
            try await insert(c, 3, "sent", ago: 30)
            var walk = PruneWalk()
            let now = Pruner(policy: RetentionPolicy(sentSeconds: 0, finalSeconds: 0, batchSize: 10))
            #expect(try await now.round(c, walk: &walk, now: 0, rest: { _ in }) == .pruned(deleted: [.sent: 3, .ended: 0], batches: 3, retiredTokens: 0))
            try await c.query("UPDATE pushq.notifications SET status = 'sent', finished_at = now() - interval '1 minute' WHERE status = 'queued'")
            #expect(try await now.round(c, walk: &walk, now: 1, rest: { _ in }) == .pruned(deleted: [.sent: 5, .ended: 0], batches: 3, retiredTokens: 0),
                    "retention 0: each round walks from the first row")
            #expect(try await statusCounts(c) == [:])

            try await insert(c, 5, "queued", ago: 2 * 86_400)
            var dayWalk = PruneWalk()
            let day = Pruner(policy: RetentionPolicy(batchSize: 10))
            #expect(try await day.round(c, walk: &dayWalk, now: 0, rest: { _ in }) == .pruned(deleted: [.sent: 0, .ended: 0], batches: 3, retiredTokens: 0))
            try await c.query("UPDATE pushq.notifications SET status = 'sent', finished_at = now() - interval '2 days' WHERE status = 'queued'")
            #expect(try await day.round(c, walk: &dayWalk, now: 1, rest: { _ in }) == .pruned(deleted: [.sent: 0, .ended: 0], batches: 3, retiredTokens: 0),
                    "a day's retention: the walk goes on past them")
            #expect(try await day.round(c, walk: &dayWalk, now: 1 + PruneWalk.rescanSeconds, rest: { _ in })
                    == .pruned(deleted: [.sent: 5, .ended: 0], batches: 3, retiredTokens: 0), "and deletes them when it starts again")
        }
    }

    @Test("a worker prunes what it sent once retention passes, but not while another session holds the pruner's lock")
    func workerPrunes() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { _, apnsURL in
                var configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                configuration.heartbeatSeconds = 0.2
                configuration.retention = RetentionPolicy(sentSeconds: 0, finalSeconds: 3600)
                #expect(try await db.tryLockPruner())
                try await insert(db, 3, "failed", ago: 60)  // younger than its retention: stays
                try await withWorker(configuration) { _ in
                    try await insertAlerts(db, count: 50, prefix: "e")
                    try await waitUntilAllFinal(db)
                    // Several upkeep rounds pass; the lock is ours, so no worker may prune.
                    let heartbeats = try await eventually { try await scalar(db, "SELECT count(*) FROM pushq.workers") == 1 }
                    #expect(heartbeats)
                    // Two prune attempts after every row was prunable, both refused the lock (a worker that took
                    // it would have gone on to DELETE, not be idle after the attempt): nothing may go.
                    let attempts = try await twoStatements(db, startingWith: "SELECT pg_try_advisory_lock", after: try await databaseNow(db))
                    #expect(attempts)
                    #expect(try await statusCounts(db) == ["sent": 50, "failed": 3])
                    try await db.unlockPruner()
                    let pruned = try await eventually(timeout: .seconds(10)) { try await statusCounts(db) == ["failed": 3] }
                    let left = try await statusCounts(db)
                    #expect(pruned, "\(left)")
                }
            }
        }
    }

    @Test("pushq prune --dry-run prints the counts and deletes nothing; pushq prune deletes them; a held lock makes it do nothing")
    func pruneCommand() async throws {
        try await TestDatabase.withConnection { db in
            let url = try await databaseURL(db)
            try await insert(db, 4, "sent", ago: 2 * 86_400)
            try await insert(db, 2, "sent", ago: 60)
            try await insert(db, 3, "expired", ago: 8 * 86_400)
            try await insert(db, 1, "failed", ago: 86_400)
            try await insert(db, 6, "queued", ago: 30 * 86_400)
            let before = try await statusCounts(db)

            let (dry, dryOut, dryErr) = try await pushq(["prune", "--dry-run"], databaseURL: url)
            #expect(dry == .exit(0), "\(dryErr)")
            #expect(dryOut == "would delete 7 rows: 4 sent, 3 failed/expired/cancelled (sent older than 86400 s, failed/expired/cancelled older than 604800 s); deleted nothing (dry run)\n")
            #expect(try await statusCounts(db) == before)

            let (_, shorter, _) = try await pushq(["prune", "--dry-run"], databaseURL: url, ["PUSHQ_RETAIN_FINAL_SECONDS": "3600", "PUSHQ_RETAIN_SENT_SECONDS": ""])
            #expect(shorter.hasPrefix("would delete 8 rows: 4 sent, 4 failed/expired/cancelled"), "\(shorter)")

            let (bad, _, badErr) = try await pushq(["prune"], databaseURL: url, ["PUSHQ_RETAIN_SENT_SECONDS": "a day"])
            #expect(bad != .exit(0))
            #expect(badErr.contains("PUSHQ_RETAIN_SENT_SECONDS=a day: expected seconds from 0 to 315360000, decimals allowed"), "\(badErr)")

            #expect(try await db.tryLockPruner())
            let (busy, busyOut, _) = try await pushq(["prune"], databaseURL: url)
            #expect(busy == .exit(0))
            #expect(busyOut == "another pruner is running (a worker or another pushq prune); deleted nothing\n")
            #expect(try await statusCounts(db) == before)
            try await db.unlockPruner()

            let (ok, out, err) = try await pushq(["prune"], databaseURL: url)
            #expect(ok == .exit(0), "\(err)")
            #expect(out.hasPrefix("deleted 7 rows: 4 sent, 3 failed/expired/cancelled"), "\(out)")
            #expect(try await statusCounts(db) == ["sent": 2, "failed": 1, "queued": 6])
        }
    }

    @Test("pushq status --json: one JSON object whose counts match the rows")
    func statusJSON() async throws {
        try await TestDatabase.withConnection { db in
            let url = try await databaseURL(db)
            try await insert(db, 7, "sent", ago: 60)
            try await insert(db, 2, "failed", ago: 60)
            try await insert(db, 1, "cancelled", ago: 60)
            try await insert(db, 4, "queued", ago: 5)
            try await db.query("UPDATE pushq.notifications SET last_reason = 'BadDeviceToken' WHERE status = 'failed'")
            // As the worker that failed them tallied them (pushq.outcomes).
            try await db.query("""
                INSERT INTO pushq.outcomes (status, minute, lane, worker, reason, rows)
                VALUES ('failed', date_trunc('minute', now()), 'default', 'w', 'BadDeviceToken', 2)
                """)
            let (status, out, err) = try await pushq(["status", "--json"], databaseURL: url)
            #expect(status == .exit(0), "\(err)")
            let object = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any]
            let counts = object?["counts"] as? [String: Int]
            #expect(counts == ["queued": 4, "sending": 0, "retrying": 0, "sent": 7, "failed": 2, "expired": 0, "cancelled": 1], "\(out)")
            #expect(object?["final_counts_exact"] as? Bool == true)
            #expect((object?["oldest_due_seconds"] as? Int).map { (4...30).contains($0) } == true, "\(out)")
            let reasons = object?["failure_reasons"] as? [[String: Any]]
            #expect(reasons?.count == 1 && reasons?[0]["reason"] as? String == "BadDeviceToken" && reasons?[0]["rows"] as? Int == 2, "\(out)")
            #expect((object?["workers"] as? [Any])?.isEmpty == true)
            #expect((object?["rows_without_worker"] as? [[String: Any]])?.first?["rows"] as? Int == 4, "no live worker serves default")
            for key in ["held_by_workers", "invalid_tokens", "holds", "failure_window_minutes"] { #expect(object?[key] != nil, "\(key)") }
        }
    }

    /// docs/status.md: every key is always present; what has no value is null, not left out.
    @Test("pushq status --json: with nothing waiting, oldest_due_seconds is null, not left out")
    func statusJSONNull() async throws {
        try await TestDatabase.withConnection { db in
            let url = try await databaseURL(db)
            try await insert(db, 2, "sent", ago: 60)
            let (status, out, err) = try await pushq(["status", "--json"], databaseURL: url)
            #expect(status == .exit(0), "\(err)")
            let object = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any]
            #expect(object?.keys.contains("oldest_due_seconds") == true && object?["oldest_due_seconds"] is NSNull, "\(out)")
            #expect((object?["counts"] as? [String: Int])?["sent"] == 2, "\(out)")
        }
    }

    /// PUSHQ_LOG_FORMAT=json: every line of a running worker is one JSON object with time, level, label,
    /// message, metadata; PUSHQ_LOG_LEVEL sets the level; the database password never shows
    @Test("PUSHQ_LOG_FORMAT=json: every line is one JSON object; PUSHQ_LOG_LEVEL sets the level; the password never shows")
    func jsonLogsOfAWorker() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { _, apnsURL in
                let plain = try await databaseURL(db)
                var url = plain + " password=db-s3cret-pw"  // a conninfo string
                if var components = URLComponents(string: plain), plain.hasPrefix("postgres") {
                    components.user = components.user ?? "postgres"
                    components.password = "db-s3cret-pw"
                    url = components.string ?? url
                }
                for (level, expectDebug) in [("debug", true), ("warning", false)] {
                    let log = NSTemporaryDirectory() + "pushq-json-\(UUID().uuidString.prefix(8)).log"
                    let env = workerEnvironment(databaseURL: url, apnsURL: apnsURL, workerID: "json-\(level)",
                                                extra: ["PUSHQ_LOG_FORMAT": "json", "PUSHQ_LOG_LEVEL": level])
                    let worker = try ChildProcess(pushqBinary, ["worker"], environment: env, stdout: .null, stderr: .file(log))
                    try await insertAlerts(db, count: 5, prefix: level == "debug" ? "d" : "f")
                    try await waitUntilAllFinal(db)
                    worker.kill(SIGTERM)
                    #expect(await worker.wait() == .exit(0))
                    let text = try String(contentsOfFile: log, encoding: .utf8)
                    #expect(!text.contains("db-s3cret-pw"))
                    let lines = text.split(separator: "\n")
                    var levels: Set<String> = []
                    var messages: [String] = []
                    for line in lines {
                        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                        #expect(object.map { Set($0.keys) } == ["time", "level", "label", "message", "metadata"], "\(line)")
                        #expect(object?["label"] as? String == "pushq.worker")
                        #expect((object?["time"] as? String).flatMap { try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse($0) } != nil, "\(line)")
                        #expect(object?["metadata"] is [String: Any])
                        levels.insert(object?["level"] as? String ?? "")
                        messages.append(object?["message"] as? String ?? "")
                    }
                    if expectDebug {
                        #expect(levels.contains("debug") && levels.contains("info"), "\(levels)")
                        #expect(messages.contains("worker started"))
                    } else {
                        #expect(!messages.contains("worker started"), "info is below warning: \(text)")
                        #expect(levels.isSubset(of: ["warning", "error", "critical"]))
                    }
                }
            }
        }
    }

    @Test("bad PUSHQ_LOG_FORMAT or PUSHQ_LOG_LEVEL: a clear error naming the variable")
    func badLogSettings() async throws {
        let url = "postgresql://127.0.0.1:1/unused"
        let (f, _, fErr) = try await pushq(["status"], databaseURL: url, ["PUSHQ_LOG_FORMAT": "xml"])
        #expect(f != .exit(0))
        #expect(fErr.contains("PUSHQ_LOG_FORMAT=xml: expected text or json"), "\(fErr)")
        let (l, _, lErr) = try await pushq(["status"], databaseURL: url, ["PUSHQ_LOG_LEVEL": "loud"])
        #expect(l != .exit(0))
        #expect(lErr.contains("PUSHQ_LOG_LEVEL=loud: expected one of trace, debug, info, notice, warning, error, critical"), "\(lErr)")
    }
}
