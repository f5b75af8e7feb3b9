import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// The next entry of pushq.due to come due (``PGConnection/secondsUntilNextDue()``), which a
/// drained worker waits for instead of its whole poll.
@Suite("The next due entry")
struct NextDueTests {
    /// the earliest entry due after now() over every lane — scheduled rows, retries, entries held for quiet
    /// hours or a cap alike; entries already due never count (nil when only they are left), nor a paused lane's (R3)
    @Test("the seconds until the earliest entry due after now, any lane but a paused one, held or not; due ones never count")
    func earliestAfterNow() async throws {
        try await TestDatabase.withConnection { c in
            #expect(try await c.secondsUntilNextDue() == nil, "an empty queue")
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, scheduled_at)
                SELECT lpad(to_hex(g), 64, '0'), '{}', l, now() + s * interval '1 second'
                  FROM (VALUES (1, 'default', -60), (2, 'bulk', -1), (3, 'bulk', 300), (4, 'later', 7200), (5, 'quiet', 5),
                               (6, 'paused', 2)) v(g, l, s)
                """)
            try await c.query("INSERT INTO pushq.lanes (name, paused) VALUES ('paused', true)")
            // The quiet lane's entry as a claim leaves it: held to its window's end, 40 s away.
            try await c.query("UPDATE pushq.due SET held = 'quiet', due_at = now() + interval '40 seconds' WHERE lane = 'quiet'")
            let held = try await c.secondsUntilNextDue() ?? 0
            #expect(held > 30 && held <= 40, "\(held)")
            try await c.query("UPDATE pushq.due SET held = 'cap', due_at = now() + interval '20 seconds' WHERE lane = 'later'")
            let capped = try await c.secondsUntilNextDue() ?? 0
            #expect(capped > 10 && capped <= 20, "\(capped)")
            try await c.query("UPDATE pushq.due SET due_at = now() - interval '1 second' WHERE due_at > now()")
            #expect(try await c.secondsUntilNextDue() == nil, "every entry is due: none comes due later")
        }
    }

    /// on 30 000 entries in 30 lanes (most due, some later), analysed: one index descent of due_order per lane
    /// for the lanes and one for each lane's next entry, never a scan of pushq.due whole
    @Test("it reads due_order by index, never pushq.due whole")
    func indexBacked() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, scheduled_at)
                SELECT lpad(to_hex(g), 64, '0'), '{}', 'lane-' || (g % 30), now() + (CASE WHEN g % 10 = 0 THEN 60 ELSE -60 END) * interval '1 second'
                  FROM generate_series(1, 30000) g
                """)
            try await c.execute("VACUUM ANALYZE pushq.due")
            let r = try await c.query("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " + PGConnection.nextDueSQL)
            let plan = (0..<r.count).map { r.string($0, 0) ?? "" }.joined(separator: "\n")
            #expect(!plan.contains("Seq Scan on due"), "\(plan)")
            #expect(plan.contains("due_order"), "\(plan)")
            // Each descent reads one entry: far fewer than the table's 30 000.
            let rows = plan.split(separator: "\n").filter { $0.contains("Index") }.compactMap { line -> Int? in
                guard let r = line.range(of: "rows=") else { return nil }
                return Int(line[r.upperBound...].prefix { $0.isNumber })
            }
            #expect(!rows.isEmpty && rows.allSatisfy { $0 <= 1 }, "\(plan)")
            let seconds = try await c.secondsUntilNextDue() ?? 0
            #expect(seconds > 50 && seconds <= 60)
        }
    }
}
