import ChildProcess
import Foundation
import MockPush
import PushStore
import PushTestSupport
import Testing
import PGClient

/// `/metrics` per lane, from a real worker process: labels are the lanes of `pushq.lanes` only,
/// every other lane is `other`.
@Suite("Lane metrics", .serialized)
struct LaneMetricsTests {
    typealias M = MetricsEndpointTests

    /// Rows of `lane` for `credential` (one no worker serves waits for ever), due `ago` seconds.
    func insert(_ db: PGConnection, _ count: Int, lane: String, credential: String? = nil, prefix: String) async throws {
        try await db.query("""
            INSERT INTO pushq.notifications (device_token, payload, lane, credential, scheduled_at)
            SELECT $2 || lpad(to_hex(g), 63, '0'), '{"aps":{"alert":"lane"}}', $3, $4, now() - interval '90 seconds'
              FROM generate_series(0, $1 - 1) g
            """, [count, prefix, lane, credential])
    }

    /// sent rows counted by lane, due rows and oldest age by lane, rank, cap and pause of pushq.lanes; lanes
    /// without a row there are lane="other", never a label of their own
    @Test("lane metrics: sent, due and oldest age, rank, cap and pause; lanes without a row are labelled other")
    func perLane() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { _, apnsURL in
                try await db.query("""
                    INSERT INTO pushq.lanes (name, rank, max_per_second, paused)
                    VALUES ('campaign', 200, 1000, false), ('quiet', 10, NULL, true)
                    """)
                try await insert(db, 7, lane: "campaign", credential: "nobody", prefix: "1")
                try await insert(db, 3, lane: "promo", credential: "nobody", prefix: "2")
                try await insert(db, 2, lane: "typo-lane", credential: "nobody", prefix: "3")
                try await insert(db, 4, lane: "campaign", prefix: "4")
                try await insert(db, 5, lane: "promo", prefix: "5")
                try await insert(db, 6, lane: "default", prefix: "6")
                let (worker, log, base) = try await M().startWorker(try await databaseURL(db), apnsURL, id: "lanes",
                                                                    extra: [:])
                let seen = try await M().poll(timeout: .seconds(60)) { () -> String? in
                    let text = try await M().get(base + "/metrics").1
                    func v(_ name: String, _ lane: String) -> Double { M.value(text, name, ["lane": lane]) }
                    return v("pushq_lane_sent_total", "campaign") == 4 && v("pushq_lane_sent_total", "other") == 5
                        && v("pushq_lane_sent_total", "default") == 6
                        && v("pushq_lane_due_rows", "campaign") == 7 && v("pushq_lane_due_rows", "other") == 5
                        && text.contains("pushq_lane_due_rows{lane=\"default\"} 0") ? text : nil
                }
                var text = seen ?? ""
                if seen == nil { text = try await M().get(base + "/metrics").1 }
                #expect(seen != nil, "\(text.split(separator: "\n").filter { $0.hasPrefix("pushq_lane") })")
                func v(_ name: String, _ lane: String) -> Double { M.value(text, name, ["lane": lane]) }
                #expect(v("pushq_lane_oldest_due_age_seconds", "campaign") >= 80)
                #expect(v("pushq_lane_oldest_due_age_seconds", "other") >= 80)
                #expect(v("pushq_lane_oldest_due_age_seconds", "default") == 0)
                #expect(v("pushq_lane_rank", "campaign") == 200 && v("pushq_lane_rank", "quiet") == 10 && v("pushq_lane_rank", "default") == 100)
                #expect(v("pushq_lane_max_per_second", "campaign") == 1000 && v("pushq_lane_max_per_second", "default") == 0)
                #expect(v("pushq_lane_paused", "quiet") == 1 && v("pushq_lane_paused", "campaign") == 0)
                #expect(text.contains("pushq_lane_sent_total{lane=\"quiet\"} 0"), "a lane of pushq.lanes has its series from the start")
                #expect(!text.contains("promo") && !text.contains("typo-lane"), "producers' lane names are never labels")
                #expect(!text.contains("pushq_lane_rank{lane=\"other\"}"), "other has no settings of its own")
                worker.kill(SIGTERM)
                #expect(await worker.wait() == .exit(0), "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }
        }
    }
}
