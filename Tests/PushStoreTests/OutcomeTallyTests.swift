import Foundation
import PushCore
@testable import PushStore
import Testing
import PGClient

/// pushq.outcomes (schema 42): every statement that ends a row as sent or failed tallies it, and
/// the dashboard, `pushq status` and the lanes' send rates read the tally.
@Suite("Outcome tally")
struct OutcomeTallyTests {
    static func token(_ c: Character) -> String { String(repeating: String(c), count: 64) }

    /// The tally summed per status, lane, worker and reason, as "status lane worker reason rows".
    static func tally(_ c: PGConnection) async throws -> [String] {
        let r = try await c.query("""
            SELECT status || ' ' || lane || ' ' || worker || ' ' || reason || ' ' || sum(rows) FROM pushq.outcomes
             WHERE minute > now() - interval '5 minutes' GROUP BY status, lane, worker, reason ORDER BY 1
            """)
        return (0..<r.count).map { r.string($0, 0) ?? "" }
    }

    /// the claim (invalid token, attempts used up), the write-back (sent, failed), a poison row's claim and
    /// write-back tally what they end, by lane, worker and reason; expired and cancelled rows are not
    /// tallied; the readers sum it
    @Test("every path that ends a row tallies it by lane, worker and reason, except expiry and cancel; the readers sum it")
    func everyPathTallies() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.devices (device_token, environment, provider, registered_at, invalidated_at, invalid_reason)
                VALUES ($1, 'production', 'apns', NULL, now() - interval '1 minute', 'Unregistered')
                """, [Self.token("c")])
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, attempts, max_attempts, expires_at)
                VALUES ($1, '{}', 'default', 0, 5, NULL), ($2, '{}', 'promo', 0, 5, NULL), ($3, '{}', 'default', 0, 5, NULL),
                       ($4, '{}', 'default', 5, 5, NULL), ($5, '{}', 'default', 0, 5, now() - interval '1 second'),
                       ($6, '{}', 'default', 0, 5, NULL)
                """, [Self.token("a"), Self.token("b"), Self.token("c"), Self.token("d"), Self.token("e"), Self.token("9")])
            let claimed = try await c.claim(limit: 100, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]],
                                            defaultEnvironment: .production).rows
            let byToken = Dictionary(uniqueKeysWithValues: claimed.map { ($0.deviceToken, $0) })
            #expect(byToken[Self.token("c")]?.verdict == .tokenInvalidated && byToken[Self.token("d")]?.verdict == .exhausted
                    && byToken[Self.token("e")]?.verdict == .expired)
            let a = try #require(byToken[Self.token("a")]), b = try #require(byToken[Self.token("b")]), g = try #require(byToken[Self.token("9")])
            #expect(try await c.complete([
                RowCompletion(id: a.id, attempt: a.attempts, lease: a.lease, disposition: Disposition(status: .sent, reason: nil),
                              httpStatus: 200, apnsUniqueID: nil),
                RowCompletion(id: b.id, attempt: b.attempts, lease: b.lease, disposition: Disposition(status: .failed, reason: "BadDeviceToken"),
                              httpStatus: 400, apnsUniqueID: nil),
            ], invalidations: [], holds: [], resumed: [], workerID: "w1").updated == 2)
            #expect(try await c.endWriteBackError(RowClaim(id: g.id, attempt: g.attempts, lease: g.lease), workerID: "w1"))
            // A row that breaks every claim, ended by the worker's hunt; a row a producer cancels.
            let f = try await c.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{}') RETURNING id",
                                      [Self.token("f")]).decode(Int64.self, 0, 0) ?? 0
            #expect(try await c.endClaimErrors(ids: [f], workerID: "w1") == [f])
            try await c.query("INSERT INTO pushq.notifications (device_token, payload, lane) VALUES ($1, '{}', 'promo')", [Self.token("8")])
            try await c.query("UPDATE pushq.notifications SET status = 'cancelled', finished_at = now() WHERE device_token = $1", [Self.token("8")])

            #expect(try await Self.tally(c) == [
                "failed default w1 WriteBackError 1",
                "failed default w1/claim AttemptsExhausted 1",
                "failed default w1/claim ClaimError 1",
                "failed default w1/claim TokenInvalidated 1",
                "failed promo w1 BadDeviceToken 1",
                "sent default w1  1",
            ])
            // A second write-back of the same minute adds to the rows it tallies into.
            try await c.query("INSERT INTO pushq.notifications (device_token, payload) SELECT lpad(to_hex(g), 64, '0'), '{}' FROM generate_series(1, 3) g")
            let more = try await c.claim(limit: 100, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production).rows
            #expect(more.count == 3)
            #expect(try await c.complete(more.map {
                RowCompletion(id: $0.id, attempt: $0.attempts, lease: $0.lease, disposition: Disposition(status: .sent, reason: nil),
                              httpStatus: 200, apnsUniqueID: nil)
            }, invalidations: [], holds: [], resumed: [], workerID: "w1").updated == 3)
            #expect(try await Self.tally(c).last == "sent default w1  4")
            #expect(try await c.complete(more.map {
                RowCompletion(id: $0.id, attempt: $0.attempts, lease: $0.lease, disposition: Disposition(status: .sent, reason: nil),
                              httpStatus: 200, apnsUniqueID: nil)
            }, invalidations: [], holds: [], resumed: [], workerID: "w1").updated == 0, "a write-back run twice tallies nothing the second time")
            #expect(try await Self.tally(c).last == "sent default w1  4")

            // The readers, in one transaction (one now()).
            try await c.execute("BEGIN")
            let series = try await c.minuteSeries()
            #expect(series.minutes.map(\.sent).reduce(0, +) == 4 && series.minutes.map(\.failed).reduce(0, +) == 5)
            #expect(series.minutes.map(\.invalidated).reduce(0, +) == 1, "BadDeviceToken invalidates")
            let reasons = try await c.failureReasons(minutes: 60).reasons
            #expect(Set(reasons.map(\.reason)) == ["WriteBackError", "AttemptsExhausted", "ClaimError", "TokenInvalidated", "BadDeviceToken"]
                    && reasons.allSatisfy { $0.rows == 1 })
            try await c.execute("COMMIT")
        }
    }

    /// the chart: every minute of the last hour, oldest first, summed over workers and lanes; invalidating
    /// reasons counted apart; older minutes left out
    @Test("the chart: every minute of the last hour, oldest first, summed; invalidating reasons apart; older minutes left out")
    func minuteSeries() async throws {
        try await TestDatabase.withConnection { c in
            // One transaction: the rows and the reads see the same now().
            try await c.execute("BEGIN")
            try await Self.add(c, [("sent", 2, "default", "w1", "", 4), ("sent", 2, "promo", "w2", "", 3),
                                   ("failed", 2, "default", "w1", "Unregistered", 3), ("failed", 2, "default", "w1", "PayloadTooLarge", 2),
                                   ("sent", 40, "default", "w1", "", 5), ("failed", 40, "default", "w2/claim", "UNREGISTERED", 4),
                                   ("sent", 60, "default", "w1", "", 8), ("sent", 90, "default", "w1", "", 9)])
            let reference = try await c.query("SELECT extract(epoch FROM date_trunc('minute', now()))::float8").decode(Double.self, 0, 0) ?? 0
            let series = try await c.minuteSeries()
            try await c.execute("COMMIT")
            #expect(series.minutes.count == 60)
            #expect(zip(series.minutes, series.minutes.dropFirst()).allSatisfy { $1.start.timeIntervalSince($0.start) == 60 })
            #expect(series.minutes.last?.start.timeIntervalSince1970 == reference, "the current minute last")
            let byStart = Dictionary(uniqueKeysWithValues: series.minutes.map { ($0.start.timeIntervalSince1970, $0) })
            #expect(byStart[reference - 120].map { ($0.sent, $0.failed, $0.invalidated) } ?? (0, 0, 0) == (7, 5, 3))
            #expect(byStart[reference - 2_400].map { ($0.sent, $0.failed, $0.invalidated) } ?? (0, 0, 0) == (5, 4, 4))
            #expect(series.minutes.map(\.sent).reduce(0, +) == 12, "the minutes of 60 and 90 minutes ago are out of the window")
            #expect(series.minutes.map(\.failed).reduce(0, +) == 9)
        }
    }

    /// failure reasons of the last hour and of the day, most frequent first, in the dashboard and in pushq
    /// status; the lanes' send rate over the last 60 s; tally rows deleted after a day and an hour
    @Test("failure reasons of the hour and the day, most frequent first; lanes' send rate over 60 s; old tally rows deleted")
    func reasonsRatesAndAge() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, rank) VALUES ('campaign', 200)")
            // One transaction: the rows and the reads see the same now().
            try await c.execute("BEGIN")
            try await Self.add(c, [("failed", 10, "default", "w1", "TransportTimeout", 20), ("failed", 10, "default", "w2", "BadDeviceToken", 10),
                                   ("failed", 120, "default", "w1", "TransportTimeout", 20), ("failed", 1_500, "default", "w1", "Old", 7),
                                   ("sent", 10, "default", "w1", "", 500),
                                   ("sent", 0, "campaign", "w1", "", 90), ("sent", 0, "campaign", "w2", "", 30), ("sent", 5, "campaign", "w1", "", 999),
                                   ("failed", 0, "campaign", "w1", "BadDeviceToken", 40), ("sent", 0, "gone", "w1", "", 60),
                                   ("sent", 1, "promo", "w1", "", 600)])
            let hour = try await c.failureReasons(minutes: 60).reasons
            let day = try await c.failureReasons(minutes: 1_440).reasons
            let status = try await c.query(PGConnection.reasonsSQL, [60])
            let lanes = try await c.laneStatus()
            let share = try await c.query("SELECT 1 - extract(epoch FROM now() - date_trunc('minute', now()))::float8 / 60").decode(Double.self, 0, 0) ?? 0
            try await c.execute("COMMIT")
            #expect(hour == [.init(reason: "BadDeviceToken", rows: 50), .init(reason: "TransportTimeout", rows: 20)])
            #expect(day == [.init(reason: "BadDeviceToken", rows: 50), .init(reason: "TransportTimeout", rows: 40)])
            #expect((0..<status.count).map { "\(status.string($0, 0) ?? "") \(status.string($0, 1) ?? "") \(status.string($0, 2) ?? "")" }
                    == ["failed BadDeviceToken 50", "failed TransportTimeout 20"])
            let byName = Dictionary(uniqueKeysWithValues: lanes.map { ($0.gauges.name, $0) })
            // This minute's 120, nothing of 5 minutes ago; failed rows are not sends.
            #expect(abs((byName["campaign"]?.sentPerSecond ?? 0) - 120.0 / 60) < 0.001)
            #expect(byName["default"]?.sentPerSecond == 0, "ten minutes ago is out of the window")
            #expect(byName["gone"].map { !$0.gauges.configured && $0.gauges.dueRows == 0 && abs($0.sentPerSecond - 1) < 0.001 } == true)
            // The previous minute counts for the share of it within the last 60 seconds.
            #expect(abs((byName["promo"]?.sentPerSecond ?? 0) - 600 * share / 60) < 0.001, "against a share of \(share)")

            #expect(try await c.deleteOldOutcomes(limit: 100) == 1, "the row of 1 500 minutes ago")
            #expect(try await c.query("SELECT count(*) FROM pushq.outcomes WHERE reason = 'Old'").decode(Int.self, 0, 0) == 0)
            #expect(try await c.deleteOldOutcomes(limit: 100) == 0)
        }
    }

    /// Tally rows: (status, minutes before the current minute, lane, worker, reason, rows).
    static func add(_ c: PGConnection, _ rows: [(String, Int, String, String, String, Int)]) async throws {
        for (status, ago, lane, worker, reason, n) in rows {
            try await c.query("""
                INSERT INTO pushq.outcomes (status, minute, lane, worker, reason, rows)
                VALUES ($1, date_trunc('minute', now()) - $2 * interval '1 minute', $3, $4, $5, $6)
                """, [status, ago, lane, worker, reason, n])
        }
    }
}
