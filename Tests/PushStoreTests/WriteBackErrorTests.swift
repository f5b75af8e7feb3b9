import Foundation
import PushCore
import PushStore
import Testing
import PGClient

/// The statements behind a write-back that fails on data, and rows a worker cannot read.
@Suite("Write-back errors and unreadable rows")
struct WriteBackErrorTests {
    static func token(_ c: Character) -> String { String(repeating: String(c), count: 64) }

    func claim(_ c: PGConnection, id: String = "w1") async throws -> [ClaimedNotification] {
        try await c.claim(limit: 100, workerID: id, leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production).rows
    }

    @Test("the schema refuses a push_type or environment the worker does not know")
    func schemaRefusesUnknownValues() async throws {
        try await TestDatabase.withConnection { c in
            for (column, value, constraint) in [("push_type", "hologram", "notifications_push_type_known"),
                                                ("environment", "staging", "notifications_environment_known")] {
                do {
                    try await c.query("INSERT INTO pushq.notifications (device_token, payload, \(column)) VALUES ($1, '{}', $2)",
                                      [Self.token("a"), value])
                    Issue.record("\(column) \(value) was accepted")
                } catch let error as PGError {
                    #expect(error.sqlState == "23514" && error.constraint == constraint)
                }
            }
        }
    }

    /// a row of a push_type this version does not know waits for a newer worker; an unknown environment comes
    /// back unreadable, held, without its payload; the rest of the claim stands
    @Test("an unknown push_type waits for a newer worker; an unknown environment comes back unreadable and held; the rest stands")
    func unreadableRowsComeBack() async throws {
        try await TestDatabase.withConnection { c in
            // As with a schema newer than this worker, or rows written around the rules by hand.
            try await TableRules.off(c) {
                try await c.query("""
                    INSERT INTO pushq.notifications (device_token, payload, push_type, environment)
                    VALUES ($1, '{"a":1}', 'hologram', NULL), ($2, '{"b":2}', 'alert', 'staging'), ($3, '{"c":3}', 'alert', NULL)
                    """, [Self.token("a"), Self.token("b"), Self.token("c")])
                try await c.query("""
                    INSERT INTO pushq.notifications (device_token, payload, push_type, expires_at) VALUES ($1, '{}', 'hologram', now() - interval '1 second')
                    """, [Self.token("d")])
            }
            let rows = try await claim(c)
            #expect(Dictionary(uniqueKeysWithValues: rows.map { ($0.deviceToken, $0.verdict) }) ==
                    [Self.token("b"): .unreadable, Self.token("c"): .send])
            let waiting = try await c.query("SELECT string_agg(status, ',' ORDER BY device_token) FROM pushq.notifications WHERE push_type = 'hologram'")
            #expect(waiting.string(0, 0) == "queued,queued", "left for a worker that knows the type (the upkeep still expires d)")
            for row in rows where row.verdict == .unreadable { #expect(row.payload.isEmpty && row.attempts == 1) }
            #expect(rows.first { $0.deviceToken == Self.token("c") }?.payload == Array(#"{"c":3}"#.utf8))
            let sending = try await c.query("SELECT count(*) FROM pushq.notifications WHERE status = 'sending' AND locked_by = 'w1'")
            #expect(try sending.decode(Int.self, 0, 0) == 2)
        }
    }

    @Test("ending a row is fenced on its lease: another worker's, a newer attempt's or a final row is left alone")
    func endIsFenced() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, status, attempts, locked_by, locked_until)
                VALUES ($1, '{}', 'sending', 1, 'w1', now() + interval '1 minute'),
                       ($2, '{}', 'sending', 1, 'w2', now() + interval '1 minute'),
                       ($3, '{}', 'sending', 2, 'w1', now() + interval '1 minute')
                """, [Self.token("a"), Self.token("b"), Self.token("c")])
            try await c.query("INSERT INTO pushq.notifications (device_token, payload, status, attempts) VALUES ($1, '{}', 'sent', 1)", [Self.token("d")])
            let ids = try await c.query("SELECT id, COALESCE((extract(epoch FROM locked_until) * 1000000)::bigint, 0) FROM pushq.notifications ORDER BY device_token")
            let id = try (0..<ids.count).map { try ids.decode(Int64.self, $0, 0) ?? 0 }
            let lease = try (0..<ids.count).map { try ids.decode(Int64.self, $0, 1) ?? 0 }
            #expect(try await c.endWriteBackError(RowClaim(id: id[0], attempt: 1, lease: lease[0] + 1), workerID: "w1") == false,
                    "another claim of the same row by the same worker, at the same attempt (a lease that ran out and was taken again)")
            #expect(try await c.endWriteBackError(RowClaim(id: id[0], attempt: 1, lease: lease[0]), workerID: "w1"))
            #expect(try await c.endWriteBackError(RowClaim(id: id[0], attempt: 1, lease: lease[0]), workerID: "w1") == false, "a second run changes nothing")
            #expect(try await c.endWriteBackError(RowClaim(id: id[1], attempt: 1, lease: lease[1]), workerID: "w1") == false)
            #expect(try await c.endWriteBackError(RowClaim(id: id[2], attempt: 1, lease: lease[2]), workerID: "w1") == false)
            #expect(try await c.endWriteBackError(RowClaim(id: id[3], attempt: 1, lease: lease[3]), workerID: "w1") == false)
            let r = try await c.query("SELECT status, last_reason, locked_by, finished_at IS NOT NULL, attempts FROM pushq.notifications ORDER BY device_token")
            #expect(r.string(0, 0) == "failed" && r.string(0, 1) == "WriteBackError" && r.string(0, 2) == nil && r.string(0, 3) == "t" && r.string(0, 4) == "1")
            #expect(r.string(1, 0) == "sending" && r.string(2, 0) == "sending" && r.string(3, 0) == "sent")
        }
    }
}
