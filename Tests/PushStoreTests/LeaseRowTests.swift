import Foundation
import PushCore
@testable import PushStore
import Testing
import PGClient

/// Leases as rows of pushq.leases (schema 35): written by the claim, read by the upkeep once
/// they end, and what becomes of their rows.
@Suite("Lease rows")
struct LeaseRowTests {
    static func token(_ i: Int) -> String { String(format: "%064x", 0xA000 + i) }

    func insert(_ c: PGConnection, _ count: Int) async throws {
        for i in 1...count {
            try await c.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{}')", [Self.token(i)])
        }
    }

    func claim(_ c: PGConnection, worker: String, limit: Int = 100) async throws -> [ClaimedNotification] {
        try await c.claim(limit: limit, workerID: worker, leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production).rows
    }

    /// a claim writes one lease row: its worker, the ids it sends and the rows' own lease end; a claim that
    /// sends nothing writes none
    @Test("a claim writes one lease row (worker, ids, lease end); a claim that sends nothing writes none")
    func claimWritesLease() async throws {
        try await TestDatabase.withConnection { c in
            try await insert(c, 3)
            try await c.query("UPDATE pushq.notifications SET expires_at = now() - interval '1 second' WHERE device_token = $1", [Self.token(3)])
            let rows = try await claim(c, worker: "w1")
            #expect(rows.map(\.verdict).sorted { "\($0)" < "\($1)" } == [.expired, .send, .send])
            let lease = try await c.query("""
                SELECT l.worker, array_to_string(l.ids, ','),
                       (SELECT bool_and(n.locked_until = l.lease_until AND n.locked_by = l.worker) FROM pushq.notifications n WHERE n.id = ANY (l.ids))
                  FROM pushq.leases l
                """)
            let sent = rows.filter { $0.verdict == .send }.map(\.id).sorted()
            #expect(lease.count == 1 && lease.string(0, 0) == "w1")
            #expect(lease.string(0, 1) == sent.map(String.init).joined(separator: ","), "the rows it sends, not the one it ended")
            #expect(lease.string(0, 2) == "t", "the same end as the rows' locked_until")
            #expect(try await claim(c, worker: "w1").isEmpty)
            #expect(try await c.query("SELECT count(*) FROM pushq.leases").decode(Int.self, 0, 0) == 1, "an empty claim writes no lease")
        }
    }

    /// a lease's ids are stored as they are (schema 57): a claim of 600 rows keeps them uncompressed in its
    /// row, one of 1 200 (over a page) uncompressed in the TOAST table, and both read back whole
    @Test("a lease's ids are stored uncompressed, in its row or in TOAST, and read back whole")
    func leaseIDsStoredUncompressed() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload) SELECT lpad(to_hex(g), 64, 'b'), '{}' FROM generate_series(1, 1800) g
                """)
            let small = try await claim(c, worker: "w1", limit: 600).map(\.id)
            let large = try await claim(c, worker: "w2", limit: 1200).map(\.id)
            #expect(small.count == 600 && large.count == 1200)
            let stored = try await c.query("""
                SELECT l.worker, pg_column_size(l.ids), cardinality(l.ids),
                       (SELECT pg_relation_size(c.reltoastrelid) FROM pg_class c WHERE c.oid = 'pushq.leases'::regclass)
                  FROM pushq.leases l ORDER BY l.worker
                """)
            #expect(stored.count == 2)
            // An int8 array stores 8 bytes an element after a 24-byte header; compressed it is smaller.
            #expect(try stored.decode(Int.self, 0, 1) == 24 + 8 * 600, "the 600 ids uncompressed: \(stored.string(0, 1) ?? "")")
            // Out of its row, pg_column_size gives the bytes stored there: the same less the 4-byte length word.
            #expect(try stored.decode(Int.self, 1, 1) == 20 + 8 * 1200, "the 1 200 ids uncompressed: \(stored.string(1, 1) ?? "")")
            #expect(try stored.decode(Int.self, 0, 2) == 600 && stored.decode(Int.self, 1, 2) == 1200)
            #expect(try stored.decode(Int.self, 0, 3) ?? 0 > 0, "the larger one out of its row, in the TOAST table")
            let inline = try await c.query("""
                SELECT count(*) FROM pushq.leases l WHERE l.worker = 'w1'
                   AND pg_column_size(l.*) > 24 + 8 * 600
                """)
            #expect(try inline.decode(Int.self, 0, 0) == 1, "the smaller one in its row")
        }
    }

    /// once a lease ends, the upkeep gives its rows still in flight an entry in pushq.due, due when it ended,
    /// and keeps the lease, recovered, while they are in flight; the sweep keeps those entries; the claim
    /// takes them again, LeaseExpired, and the lease row goes; rows written back meanwhile are left alone
    @Test("once a lease ends, its rows in flight get due entries and are claimed again (LeaseExpired); the lease row then goes")
    func endedLeaseRowsAreClaimedAgain() async throws {
        try await TestDatabase.withConnection { c in
            try await insert(c, 3)
            let rows = try await claim(c, worker: "dead")
            #expect(rows.count == 3)
            // One row was answered before the worker died.
            let answered = rows[0]
            let done = RowCompletion(id: answered.id, attempt: answered.attempts, lease: answered.lease,
                                     disposition: Disposition(status: .sent, reason: nil), httpStatus: 200, apnsUniqueID: nil)
            #expect(try await c.complete([done], invalidations: [], holds: [], resumed: [], workerID: "dead").updated == 1)
            #expect(try await c.recoverLapsedLeases(limit: 10) == .init(rows: 0, leases: 0), "a lease that has not ended is left")

            // The lease ends. Without notifications_lease (schema 41 dropped it), the lease row alone finds them.
            #expect(try await c.query("SELECT to_regclass('pushq.notifications_lease') IS NULL").decode(Bool.self, 0, 0) == true)
            try await c.query("UPDATE pushq.notifications SET locked_until = now() - interval '5 seconds' WHERE status = 'sending'")
            try await c.query("UPDATE pushq.leases SET lease_until = now() - interval '5 seconds'")
            #expect(try await c.recoverLapsedLeases(limit: 10) == .init(rows: 2, leases: 1))
            #expect(try await c.recoverLapsedLeases(limit: 10) == .init(rows: 0, leases: 0), "a recovered lease is read once")
            let entries = try await c.query("""
                SELECT string_agg(d.id::text, ',' ORDER BY d.id), bool_and(d.due_at = n.locked_until AND d.lane = n.lane)
                  FROM pushq.due d JOIN pushq.notifications n ON n.id = d.id
                """)
            #expect(entries.string(0, 0) == rows[1...].map(\.id).sorted().map(String.init).joined(separator: ","))
            #expect(entries.string(0, 1) == "t", "due when the lease ended, in the row's lane")
            #expect(try await c.query("SELECT count(*) FROM pushq.leases WHERE recovered_at IS NOT NULL").decode(Int.self, 0, 0) == 1,
                    "kept while its rows are in flight, so that they are listed so")
            #expect(try await c.queueStatus(failureMinutes: 60).counts["sending"] == 2)
            #expect(try await c.releaseRecoveredLeases(limit: 10) == 0, "its rows are still in flight under it")
            #expect(try await c.sweepDue(limit: 100) == 0, "an entry of a lapsed lease waits to be claimed: the sweep keeps it")

            let again = try await claim(c, worker: "w2")
            #expect(again.map(\.id).sorted() == rows[1...].map(\.id).sorted())
            #expect(again.allSatisfy { $0.verdict == .send && $0.lastReason == "LeaseExpired" && $0.attempts == 1 },
                    "the first lapse gives its attempt back")
            #expect(try await c.query("SELECT count(*) FROM pushq.due").decode(Int.self, 0, 0) == 0)
            let state = try await c.query("SELECT string_agg(status || '/' || COALESCE(locked_by, '-'), ',' ORDER BY id) FROM pushq.notifications")
            #expect(state.string(0, 0) == "sent/-,sending/w2,sending/w2")
            #expect(try await c.releaseRecoveredLeases(limit: 10) == 1, "claimed again: the recovered lease goes")
            #expect(try await c.query("SELECT string_agg(worker, ',') FROM pushq.leases").string(0, 0) == "w2")
            let status = try await c.queueStatus(failureMinutes: 60)
            #expect(status.counts["sending"] == 2 && status.holders.map(\.worker) == ["w2"])
        }
    }

    @Test("an entry given to a lapsed lease whose row is then written back is skipped by the claim and deleted by the sweep")
    func answeredAfterRecovery() async throws {
        try await TestDatabase.withConnection { c in
            try await insert(c, 1)
            let row = try #require(try await claim(c, worker: "slow").first)
            try await c.query("UPDATE pushq.leases SET lease_until = now() - interval '1 second'")
            try await c.query("UPDATE pushq.notifications n SET locked_until = l.lease_until FROM pushq.leases l WHERE n.id = ANY (l.ids)")
            #expect(try await c.recoverLapsedLeases(limit: 10) == .init(rows: 1, leases: 1))
            // The slow worker's answer lands after all: the row is still in flight under its claim (whose
            // lease end, the fence, this test moved back).
            let lease = try await c.query("SELECT (extract(epoch FROM locked_until) * 1000000)::bigint FROM pushq.notifications").decode(Int64.self, 0, 0)
            let done = RowCompletion(id: row.id, attempt: row.attempts, lease: try #require(lease),
                                     disposition: Disposition(status: .sent, reason: nil), httpStatus: 200, apnsUniqueID: nil)
            #expect(try await c.complete([done], invalidations: [], holds: [], resumed: [], workerID: "slow").updated == 1)
            #expect(try await claim(c, worker: "w2").isEmpty, "the row was answered: nothing to send again")
            #expect(try await c.sweepDue(limit: 100) == 1)
            #expect(try await c.query("SELECT count(*) FROM pushq.due").decode(Int.self, 0, 0) == 0)
            #expect(try await c.releaseRecoveredLeases(limit: 10) == 1, "written back: its recovered lease goes")
            #expect(try await c.query("SELECT count(*) FROM pushq.leases").decode(Int.self, 0, 0) == 0)
        }
    }

    /// an older entry of a row in flight is the sweep's to delete; once the row's lease ends the upkeep moves
    /// it to the lease's end, and the sweep keeps it
    @Test("a row in flight's older entry is the sweep's to delete; when the lease ends the upkeep moves it, and the sweep keeps it")
    func olderEntryMovedToLeaseEnd() async throws {
        try await TestDatabase.withConnection { c in
            try await insert(c, 2)
            let rows = try await claim(c, worker: "dead")
            #expect(rows.count == 2)
            // Entries older than the rows' leases (as a claim of the previous release leaves them).
            try await c.query("INSERT INTO pushq.due (id, lane, due_at) SELECT id, lane, now() - interval '1 hour' FROM pushq.notifications")
            try await c.query("UPDATE pushq.notifications SET locked_until = now() - interval '5 seconds'")
            try await c.query("UPDATE pushq.leases SET lease_until = now() - interval '5 seconds'")
            // One row's entry is swept before the upkeep runs: older than its lease, it is stale.
            try await c.query("UPDATE pushq.due SET due_at = now() - interval '2 hours' WHERE id = $1", [rows[0].id])
            #expect(try await c.sweepDue(limit: 1) == 1)
            #expect(try await c.recoverLapsedLeases(limit: 10) == .init(rows: 2, leases: 1), "one entry added, one moved")
            let moved = try await c.query("SELECT count(*) FILTER (WHERE d.due_at = n.locked_until), count(*) FROM pushq.due d JOIN pushq.notifications n ON n.id = d.id")
            #expect(moved.string(0, 0) == "2" && moved.string(0, 1) == "2")
            #expect(try await c.sweepDue(limit: 100) == 0, "entries not older than the lease stay")
            #expect(try await claim(c, worker: "w2").count == 2)
        }
    }

    @Test("the upkeep reads at most its limit of ended leases, oldest first, and leaves leases that have not ended")
    func limitOldestFirst() async throws {
        try await TestDatabase.withConnection { c in
            try await insert(c, 4)
            for i in 0..<4 { #expect(try await claim(c, worker: "w\(i)", limit: 1).count == 1) }
            try await c.query("""
                UPDATE pushq.leases SET lease_until = now() - (CASE worker WHEN 'w0' THEN 3 WHEN 'w1' THEN 1 WHEN 'w2' THEN 2 ELSE -60 END) * interval '1 second'
                """)
            try await c.query("UPDATE pushq.notifications n SET locked_until = l.lease_until FROM pushq.leases l WHERE n.id = ANY (l.ids)")
            #expect(try await c.recoverLapsedLeases(limit: 2) == .init(rows: 2, leases: 2))
            let left = try await c.query("SELECT string_agg(worker, ',' ORDER BY worker) FROM pushq.leases WHERE recovered_at IS NULL")
            #expect(left.string(0, 0) == "w1,w3", "w0 and w2 ended first")
            #expect(try await c.recoverLapsedLeases(limit: 2) == .init(rows: 1, leases: 1))
            #expect(try await c.query("SELECT string_agg(worker, ',') FROM pushq.leases WHERE recovered_at IS NULL").string(0, 0) == "w3")
        }
    }

    /// the recovered leases are checked longest ago first, at most the limit at a time: one still in flight
    /// is kept and checked again after the others
    @Test("recovered leases are checked longest ago first, at most the limit at a time; one still in flight is checked again later")
    func recoveredLeasesRotate() async throws {
        try await TestDatabase.withConnection { c in
            try await insert(c, 3)
            for i in 0..<3 { #expect(try await claim(c, worker: "w\(i)", limit: 1).count == 1) }
            try await c.query("UPDATE pushq.leases SET lease_until = now() - interval '5 seconds'")
            try await c.query("UPDATE pushq.notifications n SET locked_until = l.lease_until FROM pushq.leases l WHERE n.id = ANY (l.ids)")
            #expect(try await c.recoverLapsedLeases(limit: 10) == .init(rows: 3, leases: 3))
            try await c.query("""
                UPDATE pushq.leases SET recovered_at = now() - (CASE worker WHEN 'w0' THEN 3 WHEN 'w1' THEN 2 ELSE 1 END) * interval '1 minute'
                """)
            // w1's row is written back (by SQL standing for its late answer); w0's and w2's stay in flight.
            try await c.query("UPDATE pushq.notifications SET status = 'sent', locked_by = NULL, locked_until = NULL WHERE locked_by = 'w1'")
            #expect(try await c.releaseRecoveredLeases(limit: 1) == 0, "w0's, checked longest ago, is still in flight: kept, checked now")
            #expect(try await c.releaseRecoveredLeases(limit: 1) == 1, "then w1's: gone")
            #expect(try await c.releaseRecoveredLeases(limit: 1) == 0, "then w2's: kept")
            let left = try await c.query("SELECT string_agg(worker, ',' ORDER BY recovered_at) FROM pushq.leases")
            #expect(left.string(0, 0) == "w0,w2")
        }
    }

    // 0.3.0 wrote no lease rows: the release's part 4 (gated) gives its rows in flight one, part 5 drops notifications_lease.
    /// a row a 0.3.0 worker left in flight is found through notifications_lease, then gets a lease row from
    /// the gated release part
    @Test("a row a 0.3.0 worker left in flight is found through notifications_lease, then gets a lease row from the gated part")
    func previousReleaseRows() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            // What this release's workers need (the gated parts wait for the 0.3.0 worker).
            let ungated = Migration.all.filter { (try? MigrationGate(of: $0)) == nil }
            #expect(try await c.migrate(ungated, logger: TestDatabase.logger) == ungated.map(\.version))
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, status, attempts, locked_by, locked_until)
                VALUES ($1, '{}', 'sending', 1, 'old', now() - interval '1 second'), ($2, '{}', 'sending', 1, 'old', now() + interval '1 minute')
                """, [Self.token(1), Self.token(2)])
            let before = try await c.queueStatus(failureMinutes: 60)
            #expect(before.counts["sending"] == 2 && before.holders.map(\.rows) == [2], "listed in flight through notifications_lease")
            #expect(try await c.recoverLapsedLeases(limit: 10) == .init(rows: 1, leases: 0))
            #expect(try await c.recoverLapsedLeases(limit: 10) == .init(rows: 0, leases: 0), "given an entry once")
            #expect(try await claim(c, worker: "w1").map(\.deviceToken) == [Self.token(1)])

            #expect(try await c.workerFloor() == 0, "no gated migration applied yet")
            let gated = Migration.all.filter { (try? MigrationGate(of: $0)) != nil }.map(\.version)
            #expect(try await c.migrate(logger: TestDatabase.logger) == gated)
            // 0.4.0's gated parts need 0.4.0's required schema; 113 (frequency caps) needs workers that know it.
            let release = Migration.requiredVersion(of: Migration.all.filter { $0.version <= SchemaHistory.releaseVersions.last! })
            #expect(try await c.workerFloor() == 113, "each recorded the schema its workers must know")
            let floors = try await c.query("SELECT min(workers_know), max(workers_know) FROM pushq.schema_migrations WHERE workers_know IS NOT NULL")
            #expect(floors.string(0, 0) == "\(release)" && floors.string(0, 1) == "113")
            #expect(try await c.query("SELECT to_regclass('pushq.notifications_lease') IS NULL").decode(Bool.self, 0, 0) == true)
            let leases = try await c.query("SELECT worker, array_length(ids, 1) FROM pushq.leases ORDER BY worker")
            #expect(leases.count == 2 && leases.string(0, 0) == "old" && leases.string(0, 1) == "1" && leases.string(1, 0) == "w1",
                    "the old worker's row in flight got a lease row; w1's claim had its own")
            let after = try await c.queueStatus(failureMinutes: 60)
            #expect(after.counts["sending"] == 2 && Set(after.holders.map(\.worker)) == ["old", "w1"], "listed through pushq.leases")
            try await c.query("UPDATE pushq.notifications SET locked_until = now() - interval '1 second' WHERE locked_by = 'old'")
            try await c.query("UPDATE pushq.leases SET lease_until = now() - interval '1 second' WHERE worker = 'old'")
            #expect(try await c.recoverLapsedLeases(limit: 10) == .init(rows: 1, leases: 1))
            #expect(try await claim(c, worker: "w2").map(\.deviceToken) == [Self.token(2)])
            await c.close()
        }
    }
}
