import Foundation
import PushCore
@testable import PushServe
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// The dashboard's lanes show each lane's frequency cap and the rows waiting for it (issue 48,
/// item 4), apart from its due rows and from rows waiting for quiet hours. The rows are deferred
/// by a claim, as a worker's would be.
@Suite("Dashboard: frequency caps")
struct FrequencyCapDashboardTests {
    /// a lane capped at 1 an hour (defer) with 3 rows for one user: one goes, two wait for the cap; the lanes table
    /// says "1 per 1 h, defer (2 waiting)" in the cap's column and nothing in the quiet hours' one
    @Test("the lanes table and the status JSON show a lane's cap per recipient and its rows waiting, apart from due and quiet")
    func lanesTable() async throws {
        try await ServeHarness.with { serve, db in
            try await db.query("""
                INSERT INTO pushq.lanes (name, recipient_cap, recipient_window, over_cap) VALUES ('digest', 1, interval '1 hour', 'defer')
                """)
            try await db.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, user_ref)
                SELECT repeat('ab', 32), '{"aps":{}}', 'digest', 'u1' FROM generate_series(1, 3)
                """)
            let claimed = try await db.claim(limit: 10, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production)
            #expect(claimed.rows.count == 1)
            let page = try await serve.call("GET", "/dashboard", key: "read", headers: ["Accept": "text/html"])
            #expect(page.status == 200)
            #expect(page.body.contains("id=\"lane-due-digest\">0<"))
            #expect(page.body.contains("id=\"lane-recipient-cap-digest\">1 per 1 h, defer (2 waiting)<"),
                    "\(page.body.components(separatedBy: "lane-recipient-cap-digest").dropFirst().first?.prefix(80) ?? "no cap cell")")
            #expect(page.body.contains("id=\"lane-quiet-digest\"><"), "not waiting for quiet hours")
            #expect(page.body.contains("id=\"lane-recipient-cap-default\"><"), "default has no cap")
            let gauges = try await db.laneGauges().first { $0.name == "digest" }
            #expect(gauges?.cappedRows == 2 && gauges?.quietRows == 0 && gauges?.dueRows == 0)
            #expect(gauges?.recipientCap == RecipientCap(cap: 1, windowSeconds: 3600, overCap: "defer"))
            // GET /api/v1/status (as pushq status --json): the lane's capped_rows and recipient_cap.
            let status = try await serve.call("GET", "/api/v1/status", key: "read")
            let json = try JSONSerialization.jsonObject(with: Data(status.body.utf8)) as? [String: Any]
            let lanes = json?["lanes"] as? [[String: Any]]
            let lane = lanes?.first { $0["name"] as? String == "digest" }
            let cap = lane?["recipient_cap"] as? [String: Any]
            #expect(lane?["capped_rows"] as? Int == 2 && lane?["due_rows"] as? Int == 0 && lane?["quiet_rows"] as? Int == 0, "\(String(describing: lane))")
            #expect(cap?["cap"] as? Int == 1 && cap?["window_seconds"] as? Double == 3600 && cap?["over_cap"] as? String == "defer", "\(String(describing: cap))")
            let plain = lanes?.first { $0["name"] as? String == "default" }
            #expect(plain?["recipient_cap"] is NSNull && plain?["capped_rows"] as? Int == 0)
        }
    }

    @Test("a cap's window reads in the largest whole unit", arguments: [
        (3600.0, "1 h"), (86400, "1 d"), (7 * 86400, "7 d"), (90, "90 s"), (120, "2 min"), (5400, "90 min"), (0.5, "0.5 s"),
    ] as [(Double, String)])
    func window(seconds: Double, text: String) {
        #expect(RecipientCap(cap: 3, windowSeconds: seconds, overCap: "skip").description == "3 per \(text), skip")
    }
}
