import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// Frequency caps per recipient (issue 48, item 4) in the store: the claim's cap step (skip and
/// defer), the reservations in pushq.recipient_sends that the write-back and the give-back free,
/// the prune, the lane columns' checks and the gate that keeps older workers from ignoring caps.
///
/// No test waits for a window to pass: reservations' `sent_at` and held entries' `due_at` are
/// moved into the past instead.
@Suite("Frequency caps in the claim")
struct FrequencyCapClaimTests {
    static func token(_ n: Int) -> String { String(repeating: String(format: "%02x", n % 256), count: 32) }

    static func claim(_ c: PGConnection, limit: Int = 50) async throws -> ClaimBatch {
        try await c.claim(limit: limit, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production)
    }

    /// Inserts a row of `lane` for `user` (nil: none, the token is the recipient), due `offset` seconds ago.
    @discardableResult
    static func insert(_ c: PGConnection, lane: String, user: String?, token: Int, offset: Int = 0,
                       notify: String? = nil, expires: String? = nil) async throws -> Int64 {
        try await c.query("""
            INSERT INTO pushq.notifications (device_token, payload, lane, user_ref, scheduled_at, notify_channel, expires_at)
            VALUES ($1, '{"aps":{}}', $2, $3, now() - interval '1 hour' + $4 * interval '1 second', $5, $6::timestamptz)
            RETURNING id
            """, [Self.token(token), lane, user, offset, notify, expires]).decode(Int64.self, 0, 0) ?? 0
    }

    /// Reservations of `lane`, or of every lane.
    static func reservations(_ c: PGConnection, lane: String? = nil) async throws -> Int {
        try await c.query("SELECT count(*)::int FROM pushq.recipient_sends WHERE $1::text IS NULL OR lane = $1", [lane]).decode(Int.self, 0, 0) ?? -1
    }

    static func row(_ c: PGConnection, _ id: Int64) async throws -> String {
        try await c.query("SELECT status || '/' || COALESCE(last_reason, '-') || '/' || attempts FROM pushq.notifications WHERE id = $1", [id])
            .string(0, 0) ?? "?"
    }

    /// cap 3 per hour, skip: of 5 rows each for two users, the first 3 of each go and the others end
    /// cancelled/FrequencyCapped with attempts 0 and no lease, one of them notifying its channel; an uncapped
    /// lane's rows of the same user all go and are never counted; a later claim counts the earlier claim's sends
    @Test("skip: 3 of 5 per user go, 2 end FrequencyCapped (NOTIFY sent); an uncapped lane is never counted")
    func skip() async throws {
        try await TestDatabase.with { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let listener = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await listener.listen("caps")
            try await c.query("INSERT INTO pushq.lanes (name, recipient_cap, recipient_window) VALUES ('promo', 3, interval '1 hour')")
            var promo: [String: [Int64]] = [:]
            for i in 0..<5 {
                for user in ["u1", "u2"] {
                    let notify = user == "u1" && i == 4 ? "caps" : nil
                    promo[user, default: []].append(try await Self.insert(c, lane: "promo", user: user, token: user == "u1" ? 1 : 2,
                                                                          offset: i, notify: notify))
                }
            }
            var orders: [Int64] = []
            for i in 0..<5 { orders.append(try await Self.insert(c, lane: "orders", user: "u1", token: 1, offset: i)) }

            let batch = try await Self.claim(c)
            let verdicts = Dictionary(uniqueKeysWithValues: batch.rows.map { ($0.id, $0.verdict) })
            for user in ["u1", "u2"] {
                let ids = promo[user]!
                #expect(ids.prefix(3).allSatisfy { verdicts[$0] == .send }, "the first three in due order go")
                #expect(ids.suffix(2).allSatisfy { verdicts[$0] == .capped }, "\(ids.map { verdicts[$0].map { "\($0)" } ?? "-" })")
                for id in ids.suffix(2) {
                    #expect(try await Self.row(c, id) == "cancelled/FrequencyCapped/0")
                }
            }
            #expect(orders.allSatisfy { verdicts[$0] == .send }, "an uncapped lane's rows all go")
            #expect(batch.rows.filter { $0.verdict == .capped }.allSatisfy { $0.payload.isEmpty })
            let capped = try await c.query("""
                SELECT count(*)::int FROM pushq.notifications
                 WHERE last_reason = 'FrequencyCapped' AND locked_by IS NULL AND locked_until IS NULL AND finished_at IS NOT NULL
                """).decode(Int.self, 0, 0)
            #expect(capped == 4)
            #expect(try await Self.reservations(c, lane: "promo") == 6)
            #expect(try await Self.reservations(c) == 6, "none for the uncapped lane")
            #expect(try await c.query("SELECT count(*)::int FROM pushq.due").decode(Int.self, 0, 0) == 0, "capped rows leave pushq.due")

            let received = try await CompletionSignal.receive(on: listener) { $0.count >= 1 }
            let signal = try CompletionSignal(payload: received[0].payload)
            #expect(signal.id == promo["u1"]![4] && signal.status == "cancelled" && signal.lastReason == "FrequencyCapped" && signal.attempts == 0)

            // The next claim counts the first one's sends: u1 is at its cap, u3 is not.
            let later = try await Self.insert(c, lane: "promo", user: "u1", token: 1, offset: 10)
            let other = try await Self.insert(c, lane: "promo", user: "u3", token: 3, offset: 11)
            let next = Dictionary(uniqueKeysWithValues: try await Self.claim(c).rows.map { ($0.id, $0.verdict) })
            #expect(next == [later: .capped, other: .send])
            await c.close()
            await listener.close()
        }
    }

    /// cap 2 per hour, defer: of 5 rows of one user, 2 go and 3 wait, unclaimed and untouched, their entries held
    /// 'cap' one, one and two windows after the sends; with the window moved into the past, the two due go and the
    /// third still waits
    @Test("defer: 2 of 5 go, 3 wait held 'cap' at +1 h, +1 h, +2 h; once the window has room the due ones go")
    func deferSpacing() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.lanes (name, recipient_cap, recipient_window, over_cap) VALUES ('digest', 2, interval '1 hour', 'defer')
                """)
            var ids: [Int64] = []
            for i in 0..<5 { ids.append(try await Self.insert(c, lane: "digest", user: "u1", token: 1, offset: i)) }
            let first = try await Self.claim(c)
            #expect(first.rows.map(\.id) == Array(ids.prefix(2)) && first.rows.allSatisfy { $0.verdict == .send })
            #expect(!first.claimAgain, "nothing else waits")
            for id in ids.suffix(3) { #expect(try await Self.row(c, id) == "queued/-/0") }
            let held = try await c.query("""
                SELECT d.held, round(extract(epoch FROM d.due_at - (SELECT max(s.sent_at) FROM pushq.recipient_sends s)))::int AS after
                  FROM pushq.due d ORDER BY d.due_at, d.id
                """)
            #expect(held.rows.count == 3)
            #expect(try held.rows.map { try $0.string("held") ?? "-" } == ["cap", "cap", "cap"])
            #expect(try held.rows.map { try $0.decode(Int?.self, "after") ?? -1 } == [3600, 3600, 7200])

            // The window passes: the sends and the held entries an hour and a second earlier.
            try await c.query("UPDATE pushq.recipient_sends SET sent_at = sent_at - interval '3601 seconds'")
            try await c.query("UPDATE pushq.due SET due_at = due_at - interval '3601 seconds'")
            let second = try await Self.claim(c)
            #expect(second.rows.map(\.id) == Array(ids[2..<4]) && second.rows.allSatisfy { $0.verdict == .send })
            #expect(try await Self.reservations(c) == 4)
            #expect(try await Self.row(c, ids[4]) == "queued/-/0")
            #expect(try await c.query("SELECT held FROM pushq.due WHERE id = $1 AND due_at > now()", [ids[4]]).string(0, 0) == "cap")
        }
    }

    /// a claim whose rows were deferred while other due rows wait behind them says so (the worker claims again at
    /// once rather than at its poll); the next claim takes those rows
    @Test("a claim that deferred rows while more are due says so; the next claim takes the rows behind them")
    func deferredClaimsAgain() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.lanes (name, recipient_cap, recipient_window, over_cap) VALUES ('digest', 1, interval '1 hour', 'defer')
                """)
            let a = [try await Self.insert(c, lane: "digest", user: "a", token: 1, offset: 0),
                     try await Self.insert(c, lane: "digest", user: "a", token: 1, offset: 1),
                     try await Self.insert(c, lane: "digest", user: "a", token: 1, offset: 2)]
            let b = try await Self.insert(c, lane: "digest", user: "b", token: 2, offset: 3)
            let first = try await Self.claim(c, limit: 3)
            #expect(first.rows.map(\.id) == [a[0]])
            #expect(first.claimAgain, "b's row is due behind a's deferred ones")
            let second = try await Self.claim(c, limit: 3)
            #expect(second.rows.map(\.id) == [b] && !second.claimAgain)
        }
    }

    /// a reservation counts only a row sent: the write-back of a failure, of a retry that expires, of a retry, and a
    /// give-back each free it (the row's next claim counts again); a row written back sent keeps it
    @Test("failed, expired and retried rows and give-backs free their reservation; a sent row keeps it")
    func onlySentCount() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, recipient_cap, recipient_window) VALUES ('promo', 1, interval '1 day')")
            func claimOne(_ id: Int64) async throws -> ClaimedNotification {
                let rows = try await Self.claim(c).rows
                #expect(rows.map(\.id) == [id] && rows.first?.verdict == .send)
                #expect(try await Self.reservations(c) == 1)
                return rows[0]
            }
            func writeBack(_ row: ClaimedNotification, _ disposition: Disposition) async throws {
                try await c.complete([RowCompletion(id: row.id, attempt: row.attempts, lease: row.lease, disposition: disposition,
                                                    httpStatus: 400, apnsUniqueID: nil)],
                                     invalidations: [], holds: [], resumed: [], workerID: "w1")
            }
            let failed = try await Self.insert(c, lane: "promo", user: "u1", token: 1)
            try await writeBack(try await claimOne(failed), Disposition(status: .failed, reason: "BadDeviceToken"))
            #expect(try await Self.reservations(c) == 0, "a failed row is not counted")

            let expiring = try await Self.insert(c, lane: "promo", user: "u1", token: 1, expires: "2100-01-01")
            try await c.query("UPDATE pushq.notifications SET expires_at = now() + interval '10 minutes' WHERE id = $1", [expiring])
            try await writeBack(try await claimOne(expiring), Disposition(status: .retrying, reason: "InternalServerError", retryDelay: 3600))
            #expect(try await Self.row(c, expiring) == "expired/InternalServerError/1")
            #expect(try await Self.reservations(c) == 0, "an expired row is not counted")

            let retried = try await Self.insert(c, lane: "promo", user: "u1", token: 1)
            try await writeBack(try await claimOne(retried), Disposition(status: .retrying, reason: "InternalServerError", retryDelay: 0))
            #expect(try await Self.reservations(c) == 0, "a row waiting to be retried is not counted")
            let again = try await claimOne(retried)
            #expect(try await c.release([RowClaim(id: again.id, attempt: again.attempts, lease: again.lease)], workerID: "w1") == 1)
            #expect(try await Self.reservations(c) == 0, "a row given back was never handed to a provider")
            try await writeBack(try await claimOne(retried), Disposition(status: .sent, reason: nil))
            #expect(try await Self.reservations(c) == 1, "a sent row counts")
            let over = try await Self.insert(c, lane: "promo", user: "u1", token: 1)
            #expect(try await Self.claim(c).rows.map(\.verdict) == [.capped])
            #expect(try await Self.row(c, over) == "cancelled/FrequencyCapped/0")
        }
    }

    /// a lapsed lease was reserved when first claimed (its worker may have sent it): claimed again it goes and is
    /// counted again (a second reservation, the first kept), while a new row of the same user at the cap is skipped;
    /// its write-back as a retry frees the second only
    @Test("a lapsed lease is taken again and counted again; a new row of the user at the cap is skipped")
    func lapsedLease() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, recipient_cap, recipient_window) VALUES ('promo', 2, interval '1 day')")
            let ids = [try await Self.insert(c, lane: "promo", user: "u1", token: 1, offset: 0),
                       try await Self.insert(c, lane: "promo", user: "u1", token: 1, offset: 1)]
            #expect(try await Self.claim(c).rows.map(\.id) == ids)
            try await c.query("UPDATE pushq.notifications SET locked_until = now() - interval '1 second' WHERE status = 'sending'")
            try await c.query("UPDATE pushq.leases SET lease_until = now() - interval '1 second'")
            _ = try await c.recoverLapsedLeases(limit: 10)
            let fresh = try await Self.insert(c, lane: "promo", user: "u1", token: 1, offset: 2)
            let again = try await Self.claim(c).rows
            let verdicts = Dictionary(uniqueKeysWithValues: again.map { ($0.id, $0.verdict) })
            #expect(verdicts == [ids[0]: .send, ids[1]: .send, fresh: .capped])
            #expect(again.filter { $0.verdict == .send }.allSatisfy { $0.lastReason == "LeaseExpired" })
            #expect(try await Self.reservations(c) == 4, "each sent again, each counted again")
            let first = again.first { $0.id == ids[0] }!
            try await c.complete([RowCompletion(id: first.id, attempt: first.attempts, lease: first.lease,
                                                disposition: Disposition(status: .retrying, reason: "InternalServerError", retryDelay: 60),
                                                httpStatus: 500, apnsUniqueID: nil)],
                                 invalidations: [], holds: [], resumed: [], workerID: "w1")
            #expect(try await Self.reservations(c) == 3, "the first claim's reservation stays")
        }
    }

    /// the cap is applied after the other verdicts: an expired row of the user takes no place, the next row goes
    @Test("an expired row takes no place in its recipient's cap: the user's next row goes")
    func afterOtherVerdicts() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, recipient_cap, recipient_window) VALUES ('promo', 1, interval '1 hour')")
            let expired = try await Self.insert(c, lane: "promo", user: "u1", token: 1, offset: 0, expires: "2000-01-01")
            let next = try await Self.insert(c, lane: "promo", user: "u1", token: 1, offset: 1)
            let verdicts = Dictionary(uniqueKeysWithValues: try await Self.claim(c).rows.map { ($0.id, $0.verdict) })
            #expect(verdicts == [expired: .expired, next: .send])
            #expect(try await Self.reservations(c) == 1)
        }
    }

    /// a lane without a row in pushq.lanes has default's cap; a lane with a row and no cap has none
    @Test("a lane without a row in pushq.lanes takes default's cap; a configured lane without one is never capped")
    func defaultCap() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("UPDATE pushq.lanes SET recipient_cap = 1, recipient_window = interval '1 hour' WHERE name = 'default'")
            try await c.query("INSERT INTO pushq.lanes (name) VALUES ('orders')")
            let unknown = [try await Self.insert(c, lane: "misc", user: "u1", token: 1, offset: 0),
                           try await Self.insert(c, lane: "misc", user: "u1", token: 1, offset: 1)]
            let orders = [try await Self.insert(c, lane: "orders", user: "u1", token: 1, offset: 2),
                          try await Self.insert(c, lane: "orders", user: "u1", token: 1, offset: 3)]
            let verdicts = Dictionary(uniqueKeysWithValues: try await Self.claim(c).rows.map { ($0.id, $0.verdict) })
            #expect(verdicts == [unknown[0]: .send, unknown[1]: .capped, orders[0]: .send, orders[1]: .send])
            #expect(try await c.query("SELECT string_agg(DISTINCT lane, ',') FROM pushq.recipient_sends").string(0, 0) == "misc",
                    "counted under the row's own lane")
        }
    }

    /// the recipient is the user, else the token (an APNs token in any case is one recipient); a broadcast has none
    /// and is never capped
    @Test("the recipient: user_ref, else the token (APNs tokens in any case); user and token never collide")
    func recipient() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, recipient_cap, recipient_window) VALUES ('promo', 1, interval '1 hour')")
            let upper = try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, scheduled_at) VALUES (upper($1), '{}', 'promo', now() - interval '2 seconds')
                RETURNING id
                """, [Self.token(0xab)]).decode(Int64.self, 0, 0)!
            let lower = try await Self.insert(c, lane: "promo", user: nil, token: 0xab, offset: 3599)
            // A user whose name is the token's text is another recipient.
            let user = try await Self.insert(c, lane: "promo", user: Self.token(0xab), token: 0xcd, offset: 3599)
            let verdicts = Dictionary(uniqueKeysWithValues: try await Self.claim(c).rows.map { ($0.id, $0.verdict) })
            #expect(verdicts == [upper: .send, lower: .capped, user: .send])
        }
    }

    /// with no capped lane the cap step runs no node (a one-time filter): the claim costs what it did
    @Test("the claim's plan: with no capped lane the cap step never runs; with one, it probes recipient_sends' key")
    func plan() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, user_ref)
                SELECT lpad(to_hex(g), 64, '0'), '{}', 'l' || (g % 3), 'u' || (g % 7) FROM generate_series(1, 200) g
                """)
            let claim = ClaimStatement.bound(limit: 50, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]],
                                             defaultEnvironment: .production, only: nil, row: nil, excluding: [], rotation: 0, budget: nil, belowRank: nil)
            func plan() async throws -> [[String: Any]] {
                // As the worker claims on a table under 10 000 rows (PGConnection.planSettings).
                try await c.execute("BEGIN; SET LOCAL enable_seqscan = off")
                let r = try await c.query("EXPLAIN (ANALYZE, FORMAT JSON) " + claim.sql, claim.parameters)
                try await c.execute("ROLLBACK")
                return ClaimPlanTests.nodes(try ClaimPlanTests.json(r))
            }
            func probes(_ nodes: [[String: Any]]) -> [[String: Any]] {
                nodes.filter { ($0["Relation Name"] as? String) == "recipient_sends" && ($0["Index Name"] as? String) == "recipient_sends_pkey" }
            }
            // The cap step's first CTE: a one-time filter false, every node below it never executed.
            func capRows(_ nodes: [[String: Any]]) -> [String: Any]? { nodes.first { ($0["Subplan Name"] as? String) == "CTE cap_rows" } }
            let plain = try await plan()
            let found = capRows(plain)
            #expect(found != nil, "the cap step is in the plan")
            let step = found ?? [:]
            #expect(step["One-Time Filter"] != nil, "\(step)")
            // Below it, but for the InitPlan that decides the filter (is any lane of the claim capped?).
            func work(_ plan: Any) -> [[String: Any]] {
                guard let list = plan as? [[String: Any]] else { return [] }
                return list.filter { ($0["Parent Relationship"] as? String) != "InitPlan" }.flatMap { [$0] + work($0["Plans"] ?? []) }
            }
            let below = work(step["Plans"] ?? [])
            #expect(!below.isEmpty && below.allSatisfy { ($0["Actual Loops"] as? Int) == 0 }, "\(below)")
            #expect(probes(plain).allSatisfy { ($0["Actual Loops"] as? Int) == 0 }, "\(probes(plain))")

            try await c.query("INSERT INTO pushq.lanes (name, recipient_cap, recipient_window) SELECT 'l' || g, 2, interval '1 hour' FROM generate_series(0, 2) g")
            let capped = try await plan()
            #expect(probes(capped).contains { ($0["Actual Loops"] as? Int ?? 0) > 0 }, "\(probes(capped))")
            #expect(capped.filter { $0["Node Type"] as? String == "Seq Scan" && ["notifications", "due", "recipient_sends"].contains($0["Relation Name"] as? String ?? "") }.isEmpty)
        }
    }

    @Test("lane caps: cap and window both or neither, each above 0; over_cap 'skip' or 'defer', refused naming the check")
    func laneChecks() async throws {
        try await TestDatabase.withConnection { c in
            for (cap, window) in [(3, nil), (nil, "1 hour"), (0, "1 hour"), (-1, "1 hour"), (3, "0 seconds"), (3, "-1 hour")] as [(Int?, String?)] {
                let e = await #expect(throws: PGError.self) {
                    try await c.query("INSERT INTO pushq.lanes (name, recipient_cap, recipient_window) VALUES ('q', $1::int, $2::interval)", [cap, window])
                }
                #expect(e?.sqlState == "23514" && e?.constraint == "lanes_recipient_cap", "\(String(describing: e))")
            }
            let e = await #expect(throws: PGError.self) {
                try await c.query("INSERT INTO pushq.lanes (name, recipient_cap, recipient_window, over_cap) VALUES ('q', 3, '1 hour', 'queue')")
            }
            #expect(e?.sqlState == "23514" && e?.constraint == "lanes_over_cap", "\(String(describing: e))")
            try await c.query("INSERT INTO pushq.lanes (name, recipient_cap, recipient_window, over_cap) VALUES ('q', 3, '1 day', 'defer')")
            try await c.query("INSERT INTO pushq.lanes (name) VALUES ('plain')")
            #expect(try await c.query("SELECT over_cap FROM pushq.lanes WHERE name = 'plain'").string(0, 0) == "skip")
        }
    }

    /// 113 is gated on workers that count: with a worker that knows only 112 (or 0.4.0) live it waits and no lane
    /// can be given a cap, while this release's claim runs on 112 alone; once none runs it applies and its floor
    /// keeps such workers from starting
    @Test("with a worker below 113 live, 113 waits (no lane can get a cap) and the claim runs on 112; then it applies")
    func gate() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await c.migrate(Migration.all.filter { $0.version < 113 }, logger: TestDatabase.logger).last == 112)
            try await c.query("""
                INSERT INTO pushq.workers (id, host, pid, version, credentials, schema_known) VALUES
                    ('old', 'host-a', 11, '0.4.0', '[]', 104), ('quiet', 'host-b', 12, '0.5.0-dev', '[]', 109)
                """)
            // The later ungated migrations apply while 113 waits (114: enqueue_for_user's tenant).
            #expect(try await c.migrate(logger: TestDatabase.logger) == Migration.all.filter { $0.version > 113 && (try? MigrationGate(of: $0)) == nil }.map(\.version))
            let wait = try await c.migrationWait()
            #expect(wait?.version == 113 && wait?.workers.map(\.id).sorted() == ["old", "quiet"])
            let refused = await #expect(throws: PGError.self) {
                try await c.query("INSERT INTO pushq.lanes (name, recipient_cap, recipient_window) VALUES ('promo', 3, '1 hour')")
            }
            #expect(refused?.sqlState == "42703", "no such column yet: \(String(describing: refused))")
            try await c.query("INSERT INTO pushq.lanes (name) VALUES ('promo')")
            for i in 0..<3 { try await Self.insert(c, lane: "promo", user: "u1", token: 1, offset: i) }
            #expect(try await Self.claim(c).rows.map(\.verdict) == [.send, .send, .send], "lane_caps answers nothing")
            #expect(try await Self.reservations(c) == 0)

            try await c.query("DELETE FROM pushq.workers WHERE id = 'old'")
            #expect(try await c.migrate(logger: TestDatabase.logger) == [], "a worker that knows quiet hours but not caps still holds it")
            try await c.query("DELETE FROM pushq.workers WHERE id = 'quiet'")
            #expect(try await c.migrate(logger: TestDatabase.logger) == [113])
            #expect(try await c.workerFloor() == 113, "a worker knowing less refuses to start on it")
            try await c.query("UPDATE pushq.lanes SET recipient_cap = 3, recipient_window = '1 hour' WHERE name = 'promo'")
            await c.close()
        }
    }

    /// the upkeep's prune deletes reservations older than the longest window, in batches, and keeps the others
    @Test("the prune deletes reservations older than the longest window, at most its limit, and keeps the rest")
    func prune() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, recipient_cap, recipient_window) VALUES ('a', 1, '1 hour'), ('b', 1, '1 day')")
            try await c.query("""
                INSERT INTO pushq.recipient_sends (lane, recipient, sent_at, id)
                SELECT 'a', pushq.recipient_key('u' || g, 'apns', NULL), now() - g * interval '1 hour' + interval '30 minutes', g
                  FROM generate_series(1, 30) g
                """)
            #expect(try await c.pruneRecipientSends(limit: 5) == 5)
            #expect(try await c.pruneRecipientSends(limit: 100) == 1, "older than a day: 25 to 30")
            #expect(try await Self.reservations(c) == 24)
            try await c.query("DELETE FROM pushq.lanes WHERE name = 'b'")
            #expect(try await c.pruneRecipientSends(limit: 100) == 23, "older than an hour, now the longest window")
        }
    }
}
