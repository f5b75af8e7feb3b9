import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// Quiet hours per lane (issue 48, item 3) in the store: `pushq.quiet_window` (the server's
/// `AT TIME ZONE`), the claim that moves a quiet lane's due entries to the window's end instead of
/// taking them, the expiry sweep that still reaches them, the give-back of a row whose window
/// opened before it started, and the gate that keeps a 0.4.0 worker from ignoring them.
///
/// No test depends on the time of day it runs at: windows are set relative to the server's
/// `now()` in the zone at hand (a window that opened an hour ago there), or the zone is chosen
/// among pushq.time_zones by its local hour now (every hour is some zone's).
@Suite("Quiet hours in the claim")
struct QuietHoursClaimTests {
    static func token(_ n: Int) -> String { String(repeating: String(format: "%02x", n), count: 32) }

    static func claim(_ c: PGConnection, limit: Int = 50) async throws -> ClaimBatch {
        try await c.claim(limit: limit, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production)
    }

    /// `quiet_window(at, zone, start, end)` as `lower|upper` in UTC (`YYYY-MM-DD HH:MI`), or "-" for NULL.
    static func window(_ c: PGConnection, _ at: String, _ zone: String?, _ start: String, _ end: String) async throws -> String {
        try await c.query("""
            SELECT COALESCE(to_char(lower(w) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') || '|' || to_char(upper(w) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), '-')
              FROM pushq.quiet_window($1::timestamptz, $2, $3::time, $4::time) w
            """, [at, zone, start, end]).string(0, 0) ?? "?"
    }

    /// `quiet_until(at, zone, start, end)` in UTC (`YYYY-MM-DD HH:MI`), or "-" outside the window.
    static func until(_ c: PGConnection, _ at: String, _ zone: String?, _ start: String = "21:00", _ end: String = "08:00") async throws -> String {
        try await c.query("""
            SELECT COALESCE(to_char(pushq.quiet_until($1::timestamptz, $2, $3::time, $4::time) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), '-')
            """, [at, zone, start, end]).string(0, 0) ?? "?"
    }

    // The cases of QuietHoursTests (PushCore), now computed by the server: instants in UTC.
    @Test("quiet_until: half-hour and +14 h zones, New York's and Berlin's clock changes, a wrapping window, given `now`")
    func serverWindow() async throws {
        try await TestDatabase.withConnection { c in
            // The session's zone must not matter.
            try await c.query("SET TimeZone = 'Pacific/Chatham'")
            // UTC, 21:00–08:00 wraps midnight.
            #expect(try await Self.until(c, "2026-12-01 22:00Z", nil) == "2026-12-02 08:00")
            #expect(try await Self.until(c, "2026-12-02 07:59:59Z", "UTC") == "2026-12-02 08:00")
            #expect(try await Self.until(c, "2026-12-02 08:00Z", "UTC") == "-")
            #expect(try await Self.until(c, "2026-12-02 20:59:59Z", "UTC") == "-")
            // Kolkata (+05:30): 16:00Z is 21:30 there; 08:00 there is 02:30Z.
            #expect(try await Self.until(c, "2026-12-01 16:00Z", "Asia/Kolkata") == "2026-12-02 02:30")
            #expect(try await Self.until(c, "2026-12-01 15:29:59Z", "Asia/Kolkata") == "-")
            #expect(try await Self.until(c, "2026-12-01 15:30Z", "Asia/Kolkata") == "2026-12-02 02:30")
            // Kiritimati (+14) and Pago Pago (-11): the same instant, local dates a day apart.
            #expect(try await Self.until(c, "2026-12-01 08:00Z", "Pacific/Kiritimati") == "2026-12-01 18:00")
            #expect(try await Self.until(c, "2026-12-01 08:00Z", "Pacific/Pago_Pago") == "2026-12-01 19:00")
            #expect(try await Self.until(c, "2026-12-01 18:00Z", "Pacific/Kiritimati") == "-")
            // New York: spring forward 2026-03-08 (08:00 EDT is 12:00Z), fall back 2026-11-01 (08:00 EST is 13:00Z).
            #expect(try await Self.until(c, "2026-03-08 02:00Z", "America/New_York") == "2026-03-08 12:00")
            #expect(try await Self.until(c, "2026-11-01 01:00Z", "America/New_York") == "2026-11-01 13:00")
            // Berlin: spring forward, an end the jump skips (22:00–02:30 ends at the jump, 01:00Z).
            #expect(try await Self.until(c, "2026-03-28 21:00Z", "Europe/Berlin") == "2026-03-29 06:00")
            #expect(try await Self.until(c, "2026-03-29 00:30Z", "Europe/Berlin", "22:00", "02:30") == "2026-03-29 01:00")
            #expect(try await Self.until(c, "2026-03-29 01:00Z", "Europe/Berlin", "22:00", "02:30") == "-")
            // Berlin: fall back; a window over the repeated hour is entered again when the clock goes back.
            #expect(try await Self.until(c, "2026-10-24 20:00Z", "Europe/Berlin") == "2026-10-25 07:00")
            #expect(try await Self.until(c, "2026-10-24 23:30Z", "Europe/Berlin", "01:00", "02:30") == "2026-10-25 00:30")
            #expect(try await Self.until(c, "2026-10-25 00:45Z", "Europe/Berlin", "01:00", "02:30") == "-")
            #expect(try await Self.until(c, "2026-10-25 01:00Z", "Europe/Berlin", "01:00", "02:30") == "2026-10-25 01:30")
            // Lord Howe's half-hour change: 21:00 +11 is 10:00Z; 08:00 +10:30 is 21:30Z.
            #expect(try await Self.until(c, "2026-04-04 10:00Z", "Australia/Lord_Howe") == "2026-04-04 21:30")
            // Outside, the window is the next one: when it opens and closes (what the worker gets).
            #expect(try await Self.window(c, "2026-12-01 12:00Z", "Asia/Kolkata", "21:00", "08:00") == "2026-12-01 15:30|2026-12-02 02:30")
            #expect(try await Self.window(c, "2026-03-07 18:00Z", "America/New_York", "21:00", "08:00") == "2026-03-08 02:00|2026-03-08 12:00")
            #expect(try await Self.window(c, "2026-10-25 00:45Z", "Europe/Berlin", "01:00", "02:30") == "2026-10-25 01:00|2026-10-25 01:30")
            #expect(try await Self.window(c, "2026-12-01 12:00Z", "UTC", "09:00", "09:00") == "-", "equal bounds: no window")
        }
    }

    /// Lane `quiet` with a window from an hour ago to an hour from now in `zone` (its time_zone),
    /// the server's now() read there: inside for a row in that zone, whatever the time of day.
    static func quietLane(_ c: PGConnection, zone: String, startOffset: String = "-1 hour", endOffset: String = "1 hour") async throws {
        try await c.query("""
            INSERT INTO pushq.lanes (name, quiet_start, quiet_end, time_zone)
            VALUES ('quiet', ((now() AT TIME ZONE $1) + $2::interval)::time, ((now() AT TIME ZONE $1) + $3::interval)::time, $1)
            """, [zone, startOffset, endOffset])
    }

    /// The due entry of row `id`: `held|due_at = until(now in zone)` (true when the entry is at the window's end there).
    static func entry(_ c: PGConnection, _ id: Int64, zone: String) async throws -> String {
        try await c.query("""
            SELECT COALESCE(d.held, '-') || '|' || (d.due_at = pushq.quiet_until(now(), $2, l.quiet_start, l.quiet_end))::text
              FROM pushq.due d, pushq.lanes l WHERE d.id = $1 AND l.name = 'quiet'
            """, [id, zone]).string(0, 0) ?? "no entry"
    }

    /// a quiet lane's rows inside the window where their recipient is are not taken: their entries move to the
    /// window's end there (held quiet), rows untouched; rows of a zone outside it, and of other lanes, go
    @Test("inside the window where the recipient is (row's zone, else the lane's): not taken, moved to the window's end")
    func claimMovesInsideRows() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.quietLane(c, zone: "Asia/Kolkata")
            // Kiritimati is 8 h 30 min ahead of Kolkata: outside a two-hour window there.
            let ids = try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, time_zone, scheduled_at) VALUES
                    ($1, '{}', 'quiet', 'Asia/Kolkata', now() - interval '3 hours'),
                    ($2, '{}', 'quiet', NULL, now() - interval '2 hours'),
                    ($3, '{}', 'quiet', 'Pacific/Kiritimati', now() - interval '1 hour'),
                    ($4, '{}', 'default', 'Asia/Kolkata', now() - interval '1 hour')
                RETURNING id
                """, [Self.token(1), Self.token(2), Self.token(3), Self.token(4)]).rows.map { try $0.decode(Int64.self, "id") }
            let before = try await c.query("SELECT string_agg(scheduled_at::text, ',' ORDER BY id) FROM pushq.notifications").string(0, 0)
            let batch = try await Self.claim(c)
            #expect(batch.rows.map(\.deviceToken).sorted() == [Self.token(3), Self.token(4)], "the Kiritimati row and the other lane's")
            // The row that goes carries its next window, computed by the server; the other lane's none.
            let kiritimati = try #require(batch.rows.first { $0.deviceToken == Self.token(3) })
            let next = try #require(kiritimati.quietWindow)
            let expected = try await c.query("""
                SELECT (extract(epoch FROM lower(w)) * 1000000)::bigint AS opens, (extract(epoch FROM upper(w)) * 1000000)::bigint AS closes,
                       now() < lower(w) AS later
                  FROM pushq.lanes l, pushq.quiet_window(now(), 'Pacific/Kiritimati', l.quiet_start, l.quiet_end) w WHERE l.name = 'quiet'
                """).firstRow()
            let (opens, closes) = (try expected.decode(Int64.self, "opens"), try expected.decode(Int64.self, "closes"))
            #expect(next.opens == opens && next.closes == closes)
            #expect(try expected.decode(Bool.self, "later"), "it opens after the claim")
            #expect(batch.rows.first { $0.deviceToken == Self.token(4) }?.quietWindow == nil)
            // The Kolkata row and the row without a zone (the lane's, Kolkata) wait, untouched.
            #expect(try await Self.entry(c, ids[0], zone: "Asia/Kolkata") == "quiet|true")
            #expect(try await Self.entry(c, ids[1], zone: "Asia/Kolkata") == "quiet|true")
            let rows = try await c.query("SELECT string_agg(status || '/' || attempts, ',' ORDER BY id) FROM pushq.notifications WHERE lane = 'quiet'")
            #expect(rows.string(0, 0) == "queued/0,queued/0,sending/1")
            let after = try await c.query("SELECT string_agg(scheduled_at::text, ',' ORDER BY id) FROM pushq.notifications").string(0, 0)
            #expect(after == before, "scheduled_at unchanged")
            // Moved out of the walk: the next claim takes nothing.
            #expect(try await Self.claim(c).rows.isEmpty)
            // Rescheduled by a producer: the entry follows the row again, no longer held.
            try await c.query("UPDATE pushq.notifications SET scheduled_at = now() + interval '1 day' WHERE id = $1", [ids[0]])
            #expect(try await c.query("SELECT COALESCE(held, '-') FROM pushq.due WHERE id = $1", [ids[0]]).string(0, 0) == "-")
        }
    }

    /// a zone the server no longer lists (removed by the refresh) is the lane's: one stale name fails no claim
    @Test("a row whose zone pushq.time_zones no longer lists is judged in the lane's zone, and fails no claim")
    func staleZone() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.quietLane(c, zone: "Asia/Kolkata")
            let id = try await c.query("INSERT INTO pushq.notifications (device_token, payload, lane, time_zone) VALUES ($1, '{}', 'quiet', 'Pacific/Kiritimati') RETURNING id",
                                       [Self.token(1)]).decode(Int64.self, 0, 0) ?? 0
            try await c.query("DELETE FROM pushq.time_zones WHERE name = 'Pacific/Kiritimati'")
            #expect(try await Self.claim(c).rows.isEmpty)
            #expect(try await Self.entry(c, id, zone: "Asia/Kolkata") == "quiet|true")
        }
    }

    /// 21:00–08:00 in the lane's zone: a zone where it is night now holds its row until 08:00 there; a zone
    /// where it is afternoon sends
    @Test("a window wrapping midnight (21:00–08:00): a zone where it is night now holds its row until 08:00 there")
    func wrappingWindow() async throws {
        try await TestDatabase.withConnection { c in
            // Every local hour is some zone's now: pick one at night and one in the afternoon.
            let night = try #require(try await c.query("""
                SELECT name FROM pushq.time_zones WHERE name LIKE '%/%' AND name NOT LIKE 'posix/%' AND name NOT LIKE 'right/%'
                   AND extract(hour FROM now() AT TIME ZONE name) IN (23, 0, 1, 2) ORDER BY name LIMIT 1
                """).string(0, 0))
            let day = try #require(try await c.query("""
                SELECT name FROM pushq.time_zones WHERE name LIKE '%/%' AND name NOT LIKE 'posix/%' AND name NOT LIKE 'right/%'
                   AND extract(hour FROM now() AT TIME ZONE name) IN (12, 13, 14, 15) ORDER BY name LIMIT 1
                """).string(0, 0))
            try await c.query("INSERT INTO pushq.lanes (name, quiet_start, quiet_end) VALUES ('quiet', '21:00', '08:00')")
            let ids = try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, time_zone) VALUES ($1, '{}', 'quiet', $3), ($2, '{}', 'quiet', $4)
                RETURNING id
                """, [Self.token(1), Self.token(2), night, day]).rows.map { try $0.decode(Int64.self, "id") }
            #expect(try await Self.claim(c).rows.map(\.deviceToken) == [Self.token(2)], "night: \(night), day: \(day)")
            // Held until 08:00 in its zone: the next 08:00 there after now, within the next 10 hours.
            let held = try await c.query("""
                SELECT d.held, (d.due_at AT TIME ZONE $2)::time = '08:00' AS at8, d.due_at > now() AS later, d.due_at < now() + interval '10 hours' AS soon
                  FROM pushq.due d WHERE d.id = $1
                """, [ids[0], night]).firstRow()
            #expect(try held.decode(String?.self, "held") == "quiet")
            #expect(try held.decode(Bool.self, "at8") && held.decode(Bool.self, "later") && held.decode(Bool.self, "soon"), "\(night)")
        }
    }

    /// a backlog due before the window opened waits too: 30 rows due hours ago, claims of 5 move them all
    /// (at most 5 × 5 entries a claim), none taken
    @Test("a backlog due before the window opened waits too: claims of 5 move 30 rows in two claims, none taken")
    func backlogReachesWindow() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.quietLane(c, zone: "UTC")
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, scheduled_at)
                SELECT lpad(to_hex(g), 64, '0'), '{}', 'quiet', now() - interval '5 hours' + g * interval '1 second' FROM generate_series(1, 30) g
                """)
            #expect(try await Self.claim(c, limit: 5).rows.isEmpty)
            #expect(try await c.query("SELECT count(*) FROM pushq.due WHERE held = 'quiet'").decode(Int.self, 0, 0) == 25, "4 × 5 and the lane's 5")
            #expect(try await Self.claim(c, limit: 5).rows.isEmpty)
            #expect(try await c.query("SELECT count(*) FROM pushq.due WHERE held = 'quiet' AND due_at > now()").decode(Int.self, 0, 0) == 30)
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications WHERE status = 'queued' AND attempts = 0").decode(Int.self, 0, 0) == 30)
        }
    }

    /// a row whose expires_at passes while it waits for the window's end ends expired then, by the upkeep's
    /// expiry sweep; one already expired when claimed ends expired at once
    @Test("a row whose expires_at passes while it waits for the window's end ends expired then, not at the window's end")
    func expiresWhileWaiting() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.quietLane(c, zone: "UTC")
            let ids = try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, expires_at) VALUES
                    ($1, '{}', 'quiet', now() + interval '2 seconds'), ($2, '{}', 'quiet', now() - interval '1 second')
                RETURNING id
                """, [Self.token(1), Self.token(2)]).rows.map { try $0.decode(Int64.self, "id") }
            let batch = try await Self.claim(c)
            #expect(batch.rows.map(\.id) == [ids[1]] && batch.rows.first?.verdict == .expired, "the one already expired ends now")
            #expect(try await c.query("SELECT held FROM pushq.due WHERE id = $1", [ids[0]]).string(0, 0) == "quiet")
            // The sweep reads due_expiry, which the moved entry is still in: it ends the row once its
            // expires_at has passed (by the server's clock), an hour before the window ends.
            var status = ""
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                try await c.expireWaiting(limit: 100)
                status = try await c.query("SELECT status FROM pushq.notifications WHERE id = $1", [ids[0]]).string(0, 0) ?? ""
                if status == "expired" { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(status == "expired")
            #expect(try await c.query("SELECT count(*) FROM pushq.due").decode(Int.self, 0, 0) == 0)
        }
    }

    /// a worker gives back a row whose window opened before it started: queued, attempt refunded, its entry at
    /// the window's end (held quiet), scheduled_at untouched; a plain give-back stays due at once
    @Test("a row given back with its window's end: queued, attempt refunded, its entry held to that instant")
    func giveBackToWindowEnd() async throws {
        try await TestDatabase.withConnection { c in
            // The window opens in an hour: the claim takes the rows.
            try await Self.quietLane(c, zone: "UTC", startOffset: "1 hour", endOffset: "3 hours")
            try await c.query("INSERT INTO pushq.notifications (device_token, payload, lane) VALUES ($1, '{}', 'quiet'), ($2, '{}', 'quiet')",
                              [Self.token(1), Self.token(2)])
            let before = try await c.query("SELECT string_agg(scheduled_at::text, ',' ORDER BY id) FROM pushq.notifications").string(0, 0)
            let rows = try await Self.claim(c).rows
            #expect(rows.count == 2)
            let window = try #require(rows.first?.quietWindow)
            let claims = rows.map { RowClaim(id: $0.id, attempt: $0.attempts, lease: $0.lease) }
            #expect(try await c.release([claims[0].with(quietUntil: window.closes), claims[1]], workerID: "w1") == 2)
            let entries = try await c.query("""
                SELECT string_agg(COALESCE(d.held, '-') || '/' || (extract(epoch FROM d.due_at) * 1000000)::bigint::text || '/' || n.status || '/' || n.attempts, ','
                                  ORDER BY n.id)
                  FROM pushq.notifications n JOIN pushq.due d ON d.id = n.id
                """).string(0, 0)
            let plainDue = try await c.query("SELECT (extract(epoch FROM scheduled_at) * 1000000)::bigint FROM pushq.notifications WHERE id = $1",
                                             [rows[1].id]).decode(Int64.self, 0, 0) ?? 0
            #expect(entries == "quiet/\(window.closes)/queued/0,-/\(plainDue)/queued/0")
            let after = try await c.query("SELECT string_agg(scheduled_at::text, ',' ORDER BY id) FROM pushq.notifications").string(0, 0)
            #expect(after == before, "scheduled_at unchanged")
        }
    }

    /// with no lane given quiet hours the claim reads nothing for them: the quiet step's walk never runs and the
    /// lanes' walk is the one it was (a one-time filter per lane); with 100 quiet lanes over a large table, every
    /// read is index-backed
    @Test("the claim's plan: no quiet lane, the quiet walk never runs; 100 quiet lanes over 20 000 rows, no table read whole")
    func plan() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, status, finished_at)
                SELECT lpad(to_hex(g), 64, '0'), '{}', 'l' || (g % 100), CASE WHEN g % 10 = 0 THEN 'queued' ELSE 'sent' END,
                       CASE WHEN g % 10 = 0 THEN NULL ELSE now() END
                  FROM generate_series(1, 20000) g
                """)
            try await c.query("ANALYZE pushq.notifications")
            try await c.query("ANALYZE pushq.due")
            let claim = ClaimStatement.bound(limit: 50, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]],
                                             defaultEnvironment: .production, only: nil, row: nil, excluding: [], rotation: 0, budget: nil, belowRank: nil)
            func plan() async throws -> [[String: Any]] {
                try await c.execute("BEGIN")
                let r = try await c.query("EXPLAIN (ANALYZE, FORMAT JSON) " + claim.sql, claim.parameters)
                try await c.execute("ROLLBACK")
                return ClaimPlanTests.nodes(try ClaimPlanTests.json(r))
            }
            // No quiet lane: the quiet walk's index scan never runs, and the lanes' walk reads 50 entries.
            let plain = try await plan()
            // (Not the tenant walk's probes of due_tenant: ClaimPlanTests.laneWalks says why.)
            let quietWalk = plain.filter { !ClaimPlanTests.isTenantWalk($0) && "\($0["Index Cond"] ?? "")".contains("ql.lane") }
            #expect(quietWalk.count == 1 && quietWalk.allSatisfy { ($0["Actual Loops"] as? Int) == 0 }, "\(quietWalk)")
            #expect(plain.filter { $0["Node Type"] as? String == "Seq Scan" && ["notifications", "due", "time_zones"].contains($0["Relation Name"] as? String ?? "") }.isEmpty)

            // 100 lanes with quiet hours (in force in half the zones), rows in several zones.
            try await c.query("""
                INSERT INTO pushq.lanes (name, quiet_start, quiet_end, time_zone)
                SELECT 'l' || g, ((now() AT TIME ZONE 'UTC') - interval '1 hour')::time, ((now() AT TIME ZONE 'UTC') + interval '1 hour')::time,
                       CASE WHEN g % 2 = 0 THEN 'Asia/Kolkata' ELSE 'UTC' END
                  FROM generate_series(0, 99) g
                """)
            let quiet = try await plan()
            let scans = quiet.filter { $0["Node Type"] as? String == "Seq Scan" && ["notifications", "due", "time_zones"].contains($0["Relation Name"] as? String ?? "") }
            #expect(scans.isEmpty, "\(scans.map { $0["Relation Name"] ?? "" })")
            let walks = quiet.filter { !ClaimPlanTests.isTenantWalk($0) && "\($0["Index Cond"] ?? "")".contains("ql.lane") }
            #expect(walks.count == 1 && walks.first?["Index Name"] as? String == "due_order", "\(walks)")
            // The generic plan, which the worker's prepared claims run from 10 000 rows, reads no table whole either.
            let name = "quiet_claim"
            try await c.query("PREPARE \(name) AS " + claim.sql)
            let generic = ClaimPlanTests.nodes(try await ClaimPlanTests.explainGeneric(c, statement: name, parameters: claim.parameters))
            let genericScans = generic.filter { $0["Node Type"] as? String == "Seq Scan" && ["notifications", "due"].contains($0["Relation Name"] as? String ?? "") }
            #expect(genericScans.isEmpty, "\(genericScans.map { $0["Relation Name"] ?? "" })")
        }
    }

    /// 109 is gated on workers that know it: with a 0.4.0 worker live it waits and no lane can be given quiet
    /// hours; once that worker is gone it applies, and its floor stops a 0.4.0 worker from starting on it
    @Test("with a 0.4.0 worker live, 109 waits (no lane can get quiet hours); applied, its floor keeps 0.4.0 workers out")
    func olderWorkerCannotIgnoreQuietHours() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await c.migrate(Migration.all.filter { $0.version < 109 }, logger: TestDatabase.logger).last == 108)
            try await c.query("""
                INSERT INTO pushq.workers (id, host, pid, version, credentials, schema_known) VALUES ('old', 'host-a', 11, '0.4.0', '[]', 104)
                """)
            // Later migrations that are not gated (this release's workers need them) apply; the gated wait.
            var ungated: [Int] = []
            for m in Migration.all where m.version > 109 && (try? MigrationGate(of: m)) == nil { ungated.append(m.version) }
            #expect(try await c.migrate(logger: TestDatabase.logger) == ungated)
            let wait = try await c.migrationWait()
            #expect(wait?.version == 109 && wait?.workers.map(\.id) == ["old"])
            let refused = await #expect(throws: PGError.self) {
                try await c.query("INSERT INTO pushq.lanes (name, quiet_start, quiet_end) VALUES ('marketing', '21:00', '08:00')")
            }
            #expect(refused?.sqlState == "42703", "no such column yet: \(String(describing: refused))")
            // This release's claim runs without 109 (lane_rules answers nothing).
            try await c.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{}')", [Self.token(1)])
            #expect(try await Self.claim(c).rows.count == 1)

            try await c.query("DELETE FROM pushq.workers WHERE id = 'old'")
            #expect(try await c.migrate(logger: TestDatabase.logger).first == 109)
            #expect(try await c.workerFloor() >= 109 && 104 < 109, "a worker knowing 104 (0.4.0) refuses to start on it")
            try await c.query("INSERT INTO pushq.lanes (name, quiet_start, quiet_end, time_zone) VALUES ('marketing', '21:00', '08:00', 'Asia/Kolkata')")
            await c.close()
        }
    }

    @Test("lane quiet hours: both or neither, never equal; an unknown time_zone refused naming the column")
    func laneRules() async throws {
        try await TestDatabase.withConnection { c in
            for (start, end) in [("21:00", nil), (nil, "08:00"), ("09:00", "09:00")] as [(String?, String?)] {
                let e = await #expect(throws: PGError.self) {
                    try await c.query("INSERT INTO pushq.lanes (name, quiet_start, quiet_end) VALUES ('q', $1::time, $2::time)", [start, end])
                }
                #expect(e?.sqlState == "23514" && e?.constraint == "lanes_quiet_hours", "\(String(describing: e))")
            }
            let zone = await #expect(throws: PGError.self) {
                try await c.query("INSERT INTO pushq.lanes (name, quiet_start, quiet_end, time_zone) VALUES ('q', '21:00', '08:00', 'asia/kolkata')")
            }
            #expect(zone?.sqlState == "23514" && zone?.constraint == "lanes_time_zone_known", "\(String(describing: zone))")
            #expect(zone?.message.contains("time_zone") == true && zone?.hint?.contains("Asia/Kolkata") == true)
            try await c.query("INSERT INTO pushq.lanes (name, quiet_start, quiet_end, time_zone) VALUES ('q', '21:00', '08:00', 'Asia/Kolkata')")
        }
    }
}

extension RowClaim {
    func with(quietUntil: Int64) -> RowClaim {
        RowClaim(id: id, attempt: attempt, lease: lease, quietUntil: quietUntil)
    }
}
