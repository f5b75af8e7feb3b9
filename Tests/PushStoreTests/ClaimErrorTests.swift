import Foundation
import PushCore
import PushStore
import PushTestSupport
import Testing
import PGClient

/// Rows that could break the claim statement: the ones it now takes in its stride, and the
/// statements that single out and end the ones that still break it.
@Suite("Claim errors")
struct ClaimErrorTests {
    static func token(_ c: Character) -> String { String(repeating: String(c), count: 64) }

    func claim(_ c: PGConnection, limit: Int = 100, only: Endpoint? = nil,
               row: Int64? = nil, excluding: [Int64] = []) async throws -> [ClaimedNotification] {
        try await c.claim(limit: limit, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default", "b"]], defaultEnvironment: .production,
                          only: only, row: row, excluding: excluding).rows
    }

    /// Inserts rows `(token, scheduled_at offset in seconds, credential)`, returning their ids in order.
    func insert(_ c: PGConnection, _ rows: [(Character, Int, String?)]) async throws -> [Int64] {
        var ids: [Int64] = []
        for (t, offset, credential) in rows {
            let r = try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, scheduled_at, credential)
                VALUES ($1, '{}', now() + $2 * interval '1 second', $3) RETURNING id
                """, [Self.token(t), offset, credential])
            ids.append(try r.decode(Int64.self, 0, 0)!)
        }
        return ids
    }

    @Test("an infinite expires_at no longer breaks the claim: 'infinity' is no expiry, '-infinity' has passed")
    func infiniteExpiry() async throws {
        try await TestDatabase.withConnection { c in
            try await TableRules.off(c) {
                try await c.query("""
                    INSERT INTO pushq.notifications (device_token, payload, expires_at)
                    VALUES ($1, '{}', 'infinity'), ($2, '{}', '-infinity'), ($3, '{}', '2100-01-01 00:00:00+00')
                    """, [Self.token("a"), Self.token("b"), Self.token("c")])
            }
            let rows = try await claim(c)
            let byToken = Dictionary(uniqueKeysWithValues: rows.map { ($0.deviceToken, $0) })
            #expect(byToken[Self.token("a")]?.verdict == .send && byToken[Self.token("a")]?.expiresAt == nil)
            #expect(byToken[Self.token("b")]?.verdict == .expired)
            #expect(byToken[Self.token("c")]?.verdict == .send && byToken[Self.token("c")]?.expiresAt == 4_102_444_800)
            let r = try await c.query("SELECT string_agg(status, ',' ORDER BY device_token) FROM pushq.notifications")
            #expect(r.string(0, 0) == "sending,expired,sending")
        }
    }

    @Test("attempts at the smallint maximum cannot overflow the claim: only a row below max_attempts is sent")
    func attemptsAtMaximum() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, attempts, max_attempts, status, locked_by, locked_until)
                VALUES ($1, '{}', 32767, 32767, 'retrying', NULL, NULL),
                       ($2, '{}', 32766, 32767, 'retrying', NULL, NULL),
                       ($3, '{}', 32767, 32767, 'sending', 'dead', now() - interval '1 second'),
                       ($4, '{}', 32767, 10, 'queued', NULL, NULL)
                """, [Self.token("a"), Self.token("b"), Self.token("c"), Self.token("d")])
            try await c.giveLeaseRows() // the claims of the workers that died
            #expect(try await c.recoverLapsedLeases(limit: 100).rows == 1)
            let rows = try await claim(c)
            // c's lease ran out for the first time: that attempt is given back and c sent again at the same count.
            #expect(Dictionary(uniqueKeysWithValues: rows.map { ($0.deviceToken, $0.verdict) }) ==
                    [Self.token("a"): .exhausted, Self.token("b"): .send, Self.token("c"): .send, Self.token("d"): .exhausted])
            #expect(rows.first { $0.deviceToken == Self.token("b") }?.attempts == 32767)
            #expect(rows.first { $0.deviceToken == Self.token("c") }?.attempts == 32767)
            // Both leases run out: b's first lapse is given back again (no overflow), c's second in a row counts, and c ends there.
            try await c.query("UPDATE pushq.notifications SET locked_until = now() - interval '1 second' WHERE status = 'sending'")
            try await c.query("UPDATE pushq.leases SET lease_until = now() - interval '1 second'")
            #expect(try await c.recoverLapsedLeases(limit: 100) == .init(rows: 2, leases: 1))
            let again = try await claim(c)
            #expect(Dictionary(uniqueKeysWithValues: again.map { ($0.deviceToken, $0.verdict) }) ==
                    [Self.token("b"): .send, Self.token("c"): .exhausted])
            #expect(again.first { $0.deviceToken == Self.token("b") }?.attempts == 32767)
        }
    }

    @Test("the heads: the first due row in claim order and the first lapsed row, with the claim's filters")
    func heads() async throws {
        try await TestDatabase.withConnection { c in
            let ids = try await insert(c, [("a", -30, nil), ("b", -60, nil), ("c", 60, nil), ("d", -90, "b"), ("e", -120, "nobody")])
            let (a, b, d) = (ids[0], ids[1], ids[3])
            let lapsed = try await insert(c, [("f", -10, nil), ("9", -10, nil)])
            try await c.query("UPDATE pushq.notifications SET status = 'sending', locked_by = 'x', locked_until = now() - interval '1 second' WHERE id = $1", [lapsed[0]])
            try await c.query("UPDATE pushq.notifications SET status = 'sending', locked_by = 'x', locked_until = now() + interval '1 minute' WHERE id = $1", [lapsed[1]])
            func heads(only: Endpoint? = nil, excluding: [Int64] = []) async throws -> [Int64] {
                try await c.claimHeads(credentials: [.apns: ["default", "b"]], defaultEnvironment: .production, only: only, excluding: excluding)
            }
            func last(excluding: [Int64] = []) async throws -> Int64? {
                try await c.lastDue(credentials: [.apns: ["default", "b"]], defaultEnvironment: .production, excluding: excluding)
            }
            // One lane: its first due entry whose row can go (lapsed[1]'s lease has not ended, e's
            // credential is not this worker's, c is not due).
            #expect(try await heads() == [d])
            #expect(try await heads(excluding: [d]) == [b])
            try await Holds.add(c, [Endpoint(credential: "b", environment: .production)])
            #expect(try await heads() == [b])
            #expect(try await last(excluding: [a, b]) == nil, "a held endpoint's rows are not the last due")
            try await Holds.clear(c)
            #expect(try await heads(only: Endpoint(credential: "default", environment: .production), excluding: [b]) == [a])
            #expect(try await heads(excluding: [d, b, a]) == [lapsed[0]], "a lapsed lease is a head in its due order")
            #expect(try await heads(only: Endpoint(credential: "default", environment: .development)).isEmpty)
            #expect(try await last() == a)
            #expect(try await last(excluding: [a, b]) == d)
            #expect(try await last(excluding: [a, b, d]) == nil)
            // The claim takes exactly that head at a limit of one.
            #expect(try await claim(c, limit: 1).map(\.id) == [d])
        }
    }

    @Test("a claim of one row by id, and a claim that leaves rows out")
    func rowAndExcluding() async throws {
        try await TestDatabase.withConnection { c in
            let ids = try await insert(c, [("a", -30, nil), ("b", -20, nil), ("c", -10, nil), ("d", 60, nil)])
            #expect(try await claim(c, row: ids[1]).map(\.id) == [ids[1]])
            #expect(try await claim(c, row: ids[3]).isEmpty, "not due")
            #expect(try await claim(c, row: ids[1]).isEmpty, "already held")
            #expect(try await claim(c, limit: 1, excluding: [ids[0]]).map(\.id) == [ids[2]])
            #expect(try await claim(c, excluding: [ids[0]]).isEmpty)
            #expect(try await claim(c).map(\.id) == [ids[0]])
        }
    }

    @Test("a row that breaks a constraint added NOT VALID makes the claim fail with 23514; ending it does not fail")
    func endClaimErrors() async throws {
        try await TestDatabase.withConnection { c in
            // A row from before a CHECK constraint that was added NOT VALID (as migration 4 added
            // its own, before schema 56 made them the rules trigger): it breaks the claim's UPDATE.
            let ids = try await insert(c, [("a", -30, nil), ("b", -20, nil), ("c", -10, nil), ("d", -5, nil), ("e", -1, nil)])
            try await TableRules.off(c) {
                try await c.query("UPDATE pushq.notifications SET topic = E'com.example\\r\\nx: y' WHERE id = $1", [ids[0]])
            }
            try await c.execute("""
                ALTER TABLE pushq.notifications ADD CONSTRAINT notifications_topic_shape
                    CHECK (topic IS NULL OR topic ~ '^[A-Za-z0-9._-]{1,255}$' OR status IN ('sent', 'failed', 'expired', 'cancelled')) NOT VALID
                """)
            let error = await #expect(throws: PGError.self) { try await claim(c) }
            #expect(error?.sqlState == "23514" && error?.constraint == "notifications_topic_shape")
            #expect(StatementFailure(sqlState: error?.sqlState) == .deterministic)
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications WHERE status = 'queued'").decode(Int.self, 0, 0) == 5, "rolled back")
            // A lapsed row, a held row and a final row among the ids: only waiting and lapsed rows are ended.
            try await c.query("UPDATE pushq.notifications SET status = 'sending', locked_by = 'x', locked_until = now() - interval '1 second', attempts = 2 WHERE id = $1", [ids[1]])
            try await c.query("UPDATE pushq.notifications SET status = 'sending', locked_by = 'x', locked_until = now() + interval '1 minute' WHERE id = $1", [ids[2]])
            try await c.query("UPDATE pushq.notifications SET status = 'sent', finished_at = now() - interval '1 hour' WHERE id = $1", [ids[3]])
            #expect(Set(try await c.endClaimErrors(ids: Array(ids.prefix(4)), workerID: "w-1")) == [ids[0], ids[1]])
            let r = try await c.query("""
                SELECT status, last_reason, locked_by, locked_until, finished_at > now() - interval '1 minute', attempts, topic
                  FROM pushq.notifications ORDER BY id
                """)
            #expect(r.string(0, 0) == "failed" && r.string(0, 1) == "ClaimError" && r.string(0, 2) == nil && r.string(0, 4) == "t")
            #expect(r.string(0, 6) == "com.example\r\nx: y", "the data that broke the claim is kept")
            #expect(r.string(1, 0) == "failed" && r.string(1, 1) == "ClaimError" && r.string(1, 2) == nil && r.string(1, 3) == nil && r.string(1, 5) == "2")
            #expect(r.string(2, 0) == "sending" && r.string(2, 2) == "x")
            #expect(r.string(3, 0) == "sent" && r.string(3, 4) == "f")
            #expect(r.string(4, 0) == "queued")
            #expect(try await claim(c).map(\.id) == [ids[4]], "the claim works again")
            #expect(try await c.endClaimErrors(ids: [], workerID: "w-1").isEmpty)
        }
    }
}
