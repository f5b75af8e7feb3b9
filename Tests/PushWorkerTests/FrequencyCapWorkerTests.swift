import ChildProcess
import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// Frequency caps per recipient (issue 48, item 4) with workers and the mock: exact with two
/// workers racing, and a claim whose rows were deferred claiming again at once.
@Suite("Frequency caps in the worker")
struct FrequencyCapWorkerTests {
    /// two workers race over 300 users × 5 rows of a lane capped at 3 an hour (skip): exactly 900 requests reach
    /// the mock, 600 rows end cancelled/FrequencyCapped with attempts 0, and each user gets 3
    ///
    /// The rows are in due order such that every 50 consecutive rows hold one row of each of 50 users, and the
    /// workers claim 50 at a time: two claims at once always meet the same users. Which worker takes which rows is
    /// theirs to decide; the counts hold whatever they do. The reservations are checked too: their instants are the
    /// claims' (the cap holds for claim instants), at most 3 per user in any hour. `notifications.sent_at` is the
    /// write-back's, later by a variable delay, so it is not what the cap is measured on.
    @Test("two workers racing over 300 users x 5 rows, cap 3 skip: exactly 900 requests, 600 FrequencyCapped, 3 per user")
    func exactWithTwoWorkers() async throws {
        try await TestDatabase.withConnection { db in
            try await db.query("INSERT INTO pushq.lanes (name, recipient_cap, recipient_window) VALUES ('promo', 3, interval '1 hour')")
            // Block b holds users 50b…50b+49; within it, round r's 50 rows (one per user) come before round r + 1's.
            try await db.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, user_ref, scheduled_at)
                SELECT lpad(to_hex(b * 250 + r * 50 + k + 1), 64, '0'), '{"aps":{}}', 'promo', 'user-' || (b * 50 + k),
                       now() - interval '1 hour' + (b * 250 + r * 50 + k) * interval '1 millisecond'
                  FROM generate_series(0, 5) b, generate_series(0, 4) r, generate_series(0, 49) k
                """)
            let url = try await databaseURL(db)
            try await withMock({ $0.recordBodies = false }) { server, apnsURL in
                var first = try workerConfiguration(databaseURL: url, apnsURL: apnsURL, workerID: "racer-a")
                first.claimBatchSize = 50
                first.withoutProbes()
                var second = first
                second.workerID = "racer-b"
                try await withWorker(first) { _ in
                    try await withWorker(second) { _ in
                        let ended = try await eventually(timeout: .seconds(120)) {
                            try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status IN ('sent', 'cancelled')") == 1500
                        }
                        #expect(ended, "every row ends sent or cancelled")
                    }
                }
                #expect(server.stats().requests == 900)
            }
            #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sent'") == 900)
            #expect(try await scalar(db, """
                SELECT count(*) FROM pushq.notifications WHERE status = 'cancelled' AND last_reason = 'FrequencyCapped' AND attempts = 0
                """) == 600)
            #expect(try await scalar(db, """
                SELECT count(*) FROM (SELECT user_ref FROM pushq.notifications WHERE status = 'sent' GROUP BY user_ref HAVING count(*) = 3) u
                """) == 300, "3 sent to each user")
            #expect(try await scalar(db, "SELECT count(*) FROM pushq.recipient_sends") == 900)
            #expect(try await scalar(db, """
                SELECT max(n) FROM (
                    SELECT count(*) OVER (PARTITION BY lane, recipient ORDER BY sent_at RANGE BETWEEN interval '1 hour' PRECEDING AND CURRENT ROW) AS n
                      FROM pushq.recipient_sends) w
                """) == 3, "at most 3 per user in any hour of claim instants")
        }
    }

    /// rows deferred by a cap are not returned; when a claim deferred rows while another is due behind them, the
    /// worker claims again at once: with the poll an hour away and no NOTIFY after it started, the row behind is
    /// sent only because of that
    @Test("a claim that deferred rows while more are due is followed by another at once, not at the poll")
    func deferredClaimsAgain() async throws {
        try await TestDatabase.withConnection { db in
            try await db.query("""
                INSERT INTO pushq.lanes (name, recipient_cap, recipient_window, over_cap) VALUES ('digest', 1, interval '1 hour', 'defer')
                """)
            // Inserted before the worker starts: their NOTIFYs reach nobody. a's three rows come first.
            try await db.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, user_ref, scheduled_at)
                SELECT lpad(to_hex(g), 64, '0'), '{"aps":{}}', 'digest', CASE WHEN g <= 3 THEN 'a' ELSE 'b' END,
                       now() - interval '1 minute' + g * interval '1 millisecond'
                  FROM generate_series(1, 4) g
                """)
            let url = try await databaseURL(db)
            try await withMock { server, apnsURL in
                var configuration = try workerConfiguration(databaseURL: url, apnsURL: apnsURL)
                configuration.claimBatchSize = 3
                configuration.pollSeconds = 3600
                configuration.withoutProbes()
                try await withWorker(configuration) { _ in
                    let sent = try await eventually(timeout: .seconds(60)) {
                        try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sent'") == 2
                    }
                    #expect(sent, "a's first row and b's row are sent")
                }
                #expect(Set(server.requests().compactMap(\.deviceToken)) == [String(repeating: "0", count: 63) + "1",
                                                                               String(repeating: "0", count: 63) + "4"])
            }
            #expect(try await scalar(db, """
                SELECT count(*) FROM pushq.notifications n JOIN pushq.due d ON d.id = n.id
                 WHERE n.user_ref = 'a' AND n.status = 'queued' AND n.attempts = 0 AND d.held = 'cap' AND d.due_at > now()
                """) == 2, "a's other two wait, held 'cap', untouched")
        }
    }

    /// rows a worker's claim deferred for a cap are counted apart from due and quiet rows: pushq_lane_capped_rows
    /// and pushq status (with the lane's cap)
    @Test("rows waiting for a cap: pushq status and pushq_lane_capped_rows count them apart from due and quiet rows")
    func visible() async throws {
        typealias M = MetricsEndpointTests
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { server, apnsURL in
                try await db.query("""
                    INSERT INTO pushq.lanes (name, recipient_cap, recipient_window, over_cap) VALUES ('digest', 1, interval '1 day', 'defer')
                    """)
                try await db.query("""
                    INSERT INTO pushq.notifications (device_token, payload, lane, user_ref)
                    SELECT '7' || lpad(to_hex(g), 63, '0'), '{"aps":{}}', 'digest', 'u1' FROM generate_series(0, 3) g
                    """)
                let url = try await databaseURL(db)
                let (worker, log, base) = try await M().startWorker(url, apnsURL, id: "caps", extra: [:])
                let text = try await M().poll(timeout: .seconds(60)) { () -> String? in
                    let text = try await M().get(base + "/metrics").1
                    return M.value(text, "pushq_lane_capped_rows", ["lane": "digest"]) == 3 ? text : nil
                }
                #expect(text != nil, "pushq_lane_capped_rows{lane=\"digest\"} never 3")
                #expect(M.value(text ?? "", "pushq_lane_due_rows", ["lane": "digest"]) == 0, "not due")
                #expect(M.value(text ?? "", "pushq_lane_quiet_rows", ["lane": "digest"]) == 0, "not waiting for quiet hours")
                #expect(M.value(text ?? "", "pushq_lane_capped_rows", ["lane": "other"]) == 0)
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE lane = 'digest' AND status = 'sent'") == 1)
                #expect(server.stats().requests == 1)
                worker.kill(SIGTERM)
                #expect(await worker.wait() == .exit(0), "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")

                var env = ProcessInfo.processInfo.environment
                env["PUSHQ_DATABASE_URL"] = url
                let (ok, out, _) = try await ChildProcess.run(pushqBinary, ["status"], environment: env)
                #expect(ok == .exit(0))
                let line = out.split(separator: "\n").first { $0.hasPrefix("  digest ") }.map(String.init) ?? ""
                #expect(line.contains("due 0") && line.contains("recipient cap 1 per 1 d, defer: 3 waiting") && !line.contains("quiet"), "\(out)")
            }
        }
    }
}
