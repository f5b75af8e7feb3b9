import Foundation
import PushCore
@testable import PushServe
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// The dashboard's lanes show each lane's quiet hours and the rows waiting for them (issue 48,
/// item 3), apart from its due rows. The rows are moved by a claim, as a worker's would.
@Suite("Dashboard: quiet hours")
struct QuietHoursDashboardTests {
    /// a lane whose window opened an hour ago in Kolkata: its row waits (not due), the lanes table says
    /// "HH:MM–HH:MM Asia/Kolkata (1 waiting)"
    @Test("the lanes table and the status JSON show a lane's quiet hours and zone, and its rows waiting for them apart from due")
    func lanesTable() async throws {
        try await ServeHarness.with { serve, db in
            try await db.query("""
                INSERT INTO pushq.lanes (name, quiet_start, quiet_end, time_zone)
                VALUES ('night', ((now() AT TIME ZONE 'Asia/Kolkata') - interval '1 hour')::time,
                        ((now() AT TIME ZONE 'Asia/Kolkata') + interval '1 hour')::time, 'Asia/Kolkata')
                """)
            try await db.query("INSERT INTO pushq.notifications (device_token, payload, lane) VALUES (repeat('ab', 32), '{\"aps\":{}}', 'night')")
            let claimed = try await db.claim(limit: 10, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production)
            #expect(claimed.rows.isEmpty)
            let page = try await serve.call("GET", "/dashboard", key: "read", headers: ["Accept": "text/html"])
            #expect(page.status == 200)
            #expect(page.body.contains("id=\"lane-due-night\">0<"))
            #expect(page.body.range(of: #"id="lane-quiet-night">\d\d:\d\d–\d\d:\d\d Asia/Kolkata \(1 waiting\)<"#, options: .regularExpression) != nil,
                    "\(page.body.components(separatedBy: "lane-quiet-night").dropFirst().first?.prefix(80) ?? "no quiet hours cell")")
            // GET /api/v1/status (as pushq status --json): the lane's quiet_rows and quiet_hours.
            let status = try await serve.call("GET", "/api/v1/status", key: "read")
            let json = try JSONSerialization.jsonObject(with: Data(status.body.utf8)) as? [String: Any]
            let lane = (json?["lanes"] as? [[String: Any]])?.first { $0["name"] as? String == "night" }
            #expect(lane?["quiet_rows"] as? Int == 1 && lane?["due_rows"] as? Int == 0, "\(String(describing: lane))")
            #expect((lane?["quiet_hours"] as? String)?.hasSuffix(" Asia/Kolkata") == true)
            let plain = (json?["lanes"] as? [[String: Any]])?.first { $0["name"] as? String == "default" }
            #expect(plain?["quiet_hours"] is NSNull && plain?["quiet_rows"] as? Int == 0)
        }
    }
}
