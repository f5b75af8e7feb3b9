import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// Frequency caps per recipient (issue 48, item 4) where a row's reservation outlives or misses
/// its claim (R2's review): a lapsed lease sent again, a failed re-send, a lane cancelled while its
/// rows wait in a sender, a prune that commits while a claim waits for the claim lock, and what a
/// retrying row keeps when it is capped.
///
/// No test waits for a window to pass: reservations' `sent_at` are moved into the past instead.
@Suite("Frequency caps: reservations that outlive their claim")
struct FrequencyCapReviewTests {
    typealias T = FrequencyCapClaimTests

    /// Every lease now running has run out, and the upkeep gives its rows back to the claim.
    static func lapse(_ c: PGConnection) async throws {
        try await c.query("UPDATE pushq.notifications SET locked_until = now() - interval '1 second' WHERE status = 'sending'")
        try await c.query("UPDATE pushq.leases SET lease_until = now() - interval '1 second'")
        _ = try await c.recoverLapsedLeases(limit: 10)
    }

    /// `id`'s reservations, newest first, as seconds before now (rounded).
    static func reservationAges(_ c: PGConnection, _ id: Int64) async throws -> [Int] {
        try await c.query("""
            SELECT round(extract(epoch FROM now() - sent_at))::int AS age FROM pushq.recipient_sends WHERE id = $1 ORDER BY sent_at DESC
            """, [id]).rows.map { try $0.decode(Int?.self, "age") ?? -1 }
    }

    static func writeBack(_ c: PGConnection, _ row: ClaimedNotification, _ disposition: Disposition, http: Int = 400) async throws {
        try await c.complete([RowCompletion(id: row.id, attempt: row.attempts, lease: row.lease, disposition: disposition,
                                            httpStatus: http, apnsUniqueID: nil)],
                             invalidations: [], holds: [], resumed: [], workerID: "w1")
    }

    /// R2's repro, cap 1 an hour, skip: row a's first claim reserved two hours ago and its lease lapsed; claimed
    /// again with b and c of the same user, a goes (its first worker may have sent it) and counts now, so b and c
    /// are capped; a keeps its old reservation and gets one at the claim's instant
    @Test("a lapsed lease whose reservation left the window goes, counted anew: the user's next rows are capped")
    func lapsedLeaseOutsideWindow() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, recipient_cap, recipient_window) VALUES ('promo', 1, interval '1 hour')")
            let a = try await T.insert(c, lane: "promo", user: "u1", token: 1, offset: 0)
            #expect(try await T.claim(c).rows.map(\.id) == [a])
            try await Self.lapse(c)
            try await c.query("UPDATE pushq.recipient_sends SET sent_at = sent_at - interval '2 hours'")
            let b = try await T.insert(c, lane: "promo", user: "u1", token: 1, offset: 1)
            let d = try await T.insert(c, lane: "promo", user: "u1", token: 1, offset: 2)
            let verdicts = Dictionary(uniqueKeysWithValues: try await T.claim(c).rows.map { ($0.id, $0.verdict) })
            #expect(verdicts == [a: .send, b: .capped, d: .capped])
            #expect(try await Self.reservationAges(c, a) == [0, 7200], "a fresh reservation now; the first one kept")
            #expect(try await T.reservations(c) == 2)
        }
    }

    /// a row claimed before its lane had a cap (or by a worker that did not count) has no reservation: its lease
    /// lapses, the lane gets a cap of 1 an hour, and it is claimed again with a new row of the user; it goes and
    /// counts, so the new row is capped. A lapsed lease goes even when its recipient is at the cap already.
    @Test("a lapsed lease claimed before the cap goes and counts; it goes even with its recipient at the cap")
    func lapsedLeaseNeverReserved() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name) VALUES ('promo')")
            let a = try await T.insert(c, lane: "promo", user: "u1", token: 1, offset: 0)
            let e = try await T.insert(c, lane: "promo", user: "u2", token: 2, offset: 1)
            #expect(try await T.claim(c).rows.map(\.id) == [a, e])
            #expect(try await T.reservations(c) == 0, "no cap yet")
            try await Self.lapse(c)
            try await c.query("UPDATE pushq.lanes SET recipient_cap = 1, recipient_window = interval '1 hour' WHERE name = 'promo'")
            // u2 reached its cap meanwhile (another row sent a minute ago).
            try await c.query("""
                INSERT INTO pushq.recipient_sends (lane, recipient, sent_at, id)
                VALUES ('promo', pushq.recipient_key('u2', 'apns', NULL), now() - interval '1 minute', 999999)
                """)
            let b = try await T.insert(c, lane: "promo", user: "u1", token: 1, offset: 2)
            let verdicts = Dictionary(uniqueKeysWithValues: try await T.claim(c).rows.map { ($0.id, $0.verdict) })
            #expect(verdicts == [a: .send, e: .send, b: .capped])
            #expect(try await Self.reservationAges(c, a) == [0])
            #expect(try await Self.reservationAges(c, e) == [0], "counted, though over the cap: it may have been sent already")
        }
    }

    /// cap 1 a day: a's first claim reserved it and its lease lapsed (its worker may have sent it); claimed again,
    /// the re-send fails: the write-back frees the re-send's reservation only, so u1's next row is still capped
    @Test("a failed re-send of a lapsed lease frees its own reservation only, not the first claim's")
    func failedResendKeepsFirstReservation() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, recipient_cap, recipient_window) VALUES ('promo', 1, interval '1 day')")
            let a = try await T.insert(c, lane: "promo", user: "u1", token: 1, offset: 0)
            #expect(try await T.claim(c).rows.map(\.id) == [a])
            try await c.query("UPDATE pushq.recipient_sends SET sent_at = sent_at - interval '10 minutes'")
            try await Self.lapse(c)
            let again = try await T.claim(c).rows
            #expect(again.map(\.id) == [a])
            try await Self.writeBack(c, again[0], Disposition(status: .failed, reason: "BadDeviceToken"))
            #expect(try await Self.reservationAges(c, a) == [600], "the first claim's reservation stays")
            let b = try await T.insert(c, lane: "promo", user: "u1", token: 1, offset: 1)
            #expect(try await T.claim(c).rows.map(\.id) == [b])
            #expect(try await T.row(c, b) == "cancelled/FrequencyCapped/0")
        }
    }

    /// cap 1 a day: a claimed row whose lane is cancelled before it starts ends cancelled by its worker
    /// (endCancelled) and frees its reservation: it was never sent, so u1's next row goes
    @Test("rows of a cancelled lane ended by their worker unsent free their reservations")
    func cancelledUnsentFreesReservation() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, recipient_cap, recipient_window) VALUES ('promo', 1, interval '1 day')")
            let a = try await T.insert(c, lane: "promo", user: "u1", token: 1, offset: 0)
            let claimed = try await T.claim(c).rows
            #expect(claimed.map(\.id) == [a])
            #expect(try await T.reservations(c) == 1)
            #expect(try await c.endCancelled(claimed.map { RowClaim(id: $0.id, attempt: $0.attempts, lease: $0.lease) }, workerID: "w1") == 1)
            #expect(try await T.row(c, a) == "cancelled/-/0")
            #expect(try await T.reservations(c) == 0, "never sent: not counted")
            let b = try await T.insert(c, lane: "promo", user: "u1", token: 1, offset: 1)
            let next = try await T.claim(c).rows
            #expect(next.map(\.id) == [b] && next.first?.verdict == .send)
        }
    }

    /// cap 1 an hour: a claim takes its now() when its transaction begins, then waits for the claim lock. A
    /// reservation just inside that claim's window (its now() less the window, plus a microsecond) is older than
    /// one window by the time a prune runs during the wait; the prune keeps it (its margin), so the claim counts it
    /// and caps u1's row. The order is forced: the claim is seen waiting on the lock (pg_stat_activity) before the
    /// reservation is written and the prune runs, and the lock is released only after the prune.
    @Test("a prune while a claim waits for the claim lock keeps reservations that claim's window still reaches")
    func pruneKeepsMargin() async throws {
        try await TestDatabase.with { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let holder = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let claimer = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await c.query("INSERT INTO pushq.lanes (name, recipient_cap, recipient_window) VALUES ('promo', 1, interval '1 hour')")
            let a = try await T.insert(c, lane: "promo", user: "u1", token: 1)
            let pid = try await claimer.query("SELECT pg_backend_pid()").decode(Int.self, 0, 0)
            try await holder.execute("BEGIN; SELECT pg_advisory_xact_lock(\(PGConnection.claimLockKey))")
            async let batch = T.claim(claimer)
            let waiting = try await LockWait.until(timeout: .seconds(30)) {
                try await c.query("""
                    SELECT count(*) > 0 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock' AND wait_event = 'advisory'
                    """, [pid]).decode(Bool.self, 0, 0) == true
            }
            var pruned = -1
            var premise = false
            if waiting {
                try await c.query("""
                    INSERT INTO pushq.recipient_sends (lane, recipient, sent_at, id)
                    SELECT 'promo', pushq.recipient_key('u1', 'apns', NULL), a.xact_start - interval '1 hour' + interval '1 microsecond', 999999
                      FROM pg_stat_activity a WHERE a.pid = $1
                    """, [pid])
                premise = try await c.query("SELECT bool_and(sent_at < now() - interval '1 hour') FROM pushq.recipient_sends")
                    .decode(Bool.self, 0, 0) == true
                pruned = try await c.pruneRecipientSends(limit: 100)
            }
            try await holder.execute("COMMIT")  // before any expectation can end the test: the claim waits for it
            let rows = (try await batch).rows
            #expect(waiting, "the claim waits for the claim lock")
            #expect(premise, "by the prune's clock the reservation is older than the window")
            #expect(pruned == 0, "kept: the waiting claim's window reaches it")
            #expect(rows.map(\.id) == [a] && rows.first?.verdict == .capped, "\(rows.map { "\($0.id) \($0.verdict)" })")
            for connection in [c, holder, claimer] { await connection.close() }
        }
    }

    /// a row retrying after a failed attempt, capped by a later claim, ends cancelled/FrequencyCapped with the
    /// attempts it made and its last HTTP status (its history is kept: the attempt was made)
    @Test("a retrying row over the cap ends FrequencyCapped keeping its earlier attempts and last status")
    func retryingRowCappedKeepsAttempts() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.lanes (name, recipient_cap, recipient_window) VALUES ('promo', 1, interval '1 day')")
            let x = try await T.insert(c, lane: "promo", user: "u1", token: 1, offset: 100)
            let first = try await T.claim(c).rows
            #expect(first.map(\.id) == [x])
            try await Self.writeBack(c, first[0], Disposition(status: .retrying, reason: "InternalServerError", retryDelay: 0), http: 500)
            // Due before x's retry: it goes first and takes u1's place.
            let y = try await T.insert(c, lane: "promo", user: "u1", token: 1, offset: 0)
            let verdicts = Dictionary(uniqueKeysWithValues: try await T.claim(c).rows.map { ($0.id, $0.verdict) })
            #expect(verdicts == [y: .send, x: .capped])
            #expect(try await T.row(c, x) == "cancelled/FrequencyCapped/1")
            #expect(try await c.query("SELECT last_status FROM pushq.notifications WHERE id = $1", [x]).decode(Int.self, 0, 0) == 500)
        }
    }
}
