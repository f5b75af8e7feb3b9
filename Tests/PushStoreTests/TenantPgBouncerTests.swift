import ChildProcess
import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// Tenant turns (issue 48, item 5) behind a real PgBouncer: the claim keeps where a lane's next
/// tenant cycle starts in a session setting (`pushq.tenant_turn_<md5(lane)>`,
/// ``ClaimStatement/tenantTurnKey(_:)``), and a pooler decides which server session, with whose
/// setting, each of a client's transactions runs on.
///
/// Every claim is the worker's (``PGConnection/claim(limit:workerID:leaseSeconds:credentials:defaultEnvironment:only:row:excluding:rotation:budget:belowRank:considerate:)``,
/// rotation its count), through the pooler; rows are set up and checked straight at PostgreSQL.
/// Fairness is checked by structure, never by time: with `T` tenants due and claims of `L`, every
/// tenant with rows left is in one of the next ceil(T / L) claims (``checkTurns(_:rows:limit:sessions:)``;
/// × the server sessions the claims spread over, each of which keeps a cycle of its own).
///
/// (A worker refuses to start behind a transaction pool, docs/deploy.md; these tests show what the
/// claim itself does there.)
@Suite("Tenant turns behind PgBouncer", .serialized)
struct TenantPgBouncerTests {
    /// The session setting that holds lane `default`'s cycle start.
    static let turnKey = "'pushq.tenant_turn_' || md5('default')"

    /// What a run of claims took: each claim's tenants (`-` for NULL), the rows, and the prepared-statement
    /// errors met on the way (see ``claim(_:limit:rotation:errors:)``).
    struct Run {
        var claims: [[String]] = []
        var ids: [Int64] = []
        var errors: [String] = []
    }

    /// One claim as the worker's claim turn makes it: the plain claim first, then, when it asks for
    /// it (a lane has rows with a tenant), the considerate one.
    ///
    /// A pooler in transaction mode does not keep a client's prepared statements (PgBouncer 1.18
    /// passes them through to whichever server session the transaction lands on): a claim then
    /// fails with 26000 (not there) or 42P05 (another client's of the same name there). Such a
    /// claim took nothing (its transaction rolled back); it is recorded in `errors` and made again
    /// (``retried(errors:_:)``): these tests are about which rows claims take.
    static func claim(_ c: PGConnection, limit: Int, rotation: Int, errors: inout [String]) async throws -> ClaimBatch {
        let plain = try await retried(errors: &errors) {
            try await c.claim(limit: limit, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]],
                              defaultEnvironment: .production, rotation: rotation, considerate: false)
        }
        guard plain.needsConsiderate else { return plain }
        #expect(plain.rows.isEmpty, "a plain claim that asks for the considerate one took nothing")
        return try await retried(errors: &errors) {
            try await c.claim(limit: limit, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]],
                              defaultEnvironment: .production, rotation: rotation, considerate: true)
        }
    }

    /// `body`, made again when it fails for want of its prepared statement (see
    /// ``claim(_:limit:rotation:errors:)``), up to 4 times: each 42P05 moves the connection on to
    /// its next statement name (`pushq_<n>`), which another client sharing the session may hold too.
    static func retried(errors: inout [String], _ body: () async throws -> ClaimBatch) async throws -> ClaimBatch {
        for _ in 0..<4 {
            do {
                return try await body()
            } catch let error as PGError where error.sqlState == "26000" || error.sqlState == "42P05" {
                errors.append(error.sqlState ?? "")
            }
        }
        return try await body()
    }

    /// Claims through `clients` in turn (claim `k` through `clients[k % count]`, rotation `k`),
    /// `before` run ahead of each claim, until a claim takes nothing.
    static func drain(_ clients: [PGConnection], limit: Int, maxClaims: Int = 400,
                      before: (Int) async throws -> Void = { _ in }, after: (Int) async throws -> Void = { _ in }) async throws -> Run {
        var run = Run()
        for k in 0..<maxClaims {
            try await before(k)
            let batch = try await claim(clients[k % clients.count], limit: limit, rotation: k, errors: &run.errors)
            try await after(k)
            #expect(batch.rows.allSatisfy { $0.verdict == .send })
            if batch.rows.isEmpty { break }
            run.claims.append(batch.rows.map { $0.tenant ?? "-" })
            run.ids += batch.rows.map(\.id)
        }
        return run
    }

    /// The rows of each tenant (`-` for NULL) in the database, as a run starts.
    static func tenantRows(_ db: PGConnection) async throws -> [String: Int] {
        var rows: [String: Int] = [:]
        for row in try await db.query("SELECT COALESCE(tenant, '-') AS t, count(*)::int AS n FROM pushq.notifications GROUP BY 1").rows {
            rows[try row.decode(String.self, "t")] = try row.decode(Int.self, "n")
        }
        return rows
    }

    /// Where a tenant that had rows left (of `rows`, less what earlier claims took) was in none of
    /// the next `sessions` × ceil(T / L) claims of `run` (`T` the tenants with rows left, `L` = `limit`), as
    /// `claim:tenant`. Empty: every tenant got its turn.
    static func checkTurns(_ run: Run, rows: [String: Int], limit: Int, sessions: Int = 1) -> [String] {
        var left = rows
        var missed: [String] = []
        for k in run.claims.indices {
            let due = left.filter { $0.value > 0 }.keys.sorted()
            let window = sessions * ((due.count + limit - 1) / limit)
            if k + window <= run.claims.count {
                let served = Set(run.claims[k..<(k + window)].joined())
                missed += due.filter { !served.contains($0) }.map { "\(k):\($0)" }
            }
            for t in run.claims[k] { left[t, default: 0] -= 1 }
        }
        return missed
    }

    /// The claim at which each of `tenants` had its last row taken (1-based), as `B:5,C:5`.
    static func finished(_ run: Run, _ tenants: [String]) -> String {
        tenants.map { t in "\(t):\((run.claims.lastIndex { $0.contains(t) } ?? -2) + 1)" }.joined(separator: ",")
    }

    /// Checks that `run` took every row of the database once, and that none is left waiting.
    static func expectAllTakenOnce(_ db: PGConnection, _ run: Run, total: Int) async throws {
        #expect(Set(run.ids).count == run.ids.count, "a row claimed twice")
        #expect(run.ids.count == total, "every row claimed")
        #expect(try await db.query("SELECT count(*) FILTER (WHERE status = 'sending') || '/' || count(*) FROM pushq.notifications").string(0, 0)
                == "\(total)/\(total)")
        #expect(try await db.query("SELECT count(*) FROM pushq.due").string(0, 0) == "0")
    }

    /// The server session (`pg_backend_pid()`) a client's next transaction lands on.
    static func backend(_ c: PGConnection) async throws -> Int32 {
        try await c.serverBackendPID()
    }

    /// A fresh migrated database: a connection straight to it, and its URL (for the pooler's backend).
    static func withDatabase(_ body: (PGConnection, String) async throws -> Void) async throws {
        try await TestDatabase.withConnection { db in
            let name = try await db.query("SELECT current_database()").string(0, 0) ?? ""
            try await body(db, PGURL.withDatabase(try TestDatabase.serverURL, name))
        }
    }

    /// A's 300 rows due first, then B's 5 and C's 5, in lane default.
    static func insertThreeTenants(_ db: PGConnection) async throws {
        try await TenantClaimTests.insert(db, tenant: "A", count: 300, ago: "1 hour")
        try await TenantClaimTests.insert(db, tenant: "B", count: 5, ago: "30 minutes")
        try await TenantClaimTests.insert(db, tenant: "C", count: 5, ago: "20 minutes")
    }

    /// (a) one client through a transaction pool, its claims (of 4, and of 2: fewer than the
    /// tenants) spread over two server sessions: while claim k runs for odd k, another client of
    /// the pool holds a transaction open, so that claim cannot run on the session that client holds.
    /// With 3 tenants and claims of 4, every claim takes a row of every tenant with rows left: B's
    /// and C's 5 rows are all taken by the 5th claim.
    @Test("through a transaction pool, one client's claims on two server sessions give every tenant its turn, each row once",
          arguments: [4, 2])
    func transactionPoolOneClient(limit: Int) async throws {
        try await Self.withDatabase { db, url in
            try await Self.insertThreeTenants(db)
            try await PgBouncer.with(mode: "transaction", backendURL: url) { pooled in
                let client = try await PGConnection.connect(pooled, logger: TestDatabase.logger)
                let holder = try await PGConnection.connect(pooled, logger: TestDatabase.logger)
                var sessions = Set<Int32>()
                let rows = try await Self.tenantRows(db)
                let run = try await Self.drain([client], limit: limit, before: { k in
                    if k % 2 == 1 { try await holder.execute("BEGIN"); _ = try await Self.backend(holder) }
                    sessions.insert(try await Self.backend(client))
                }, after: { k in
                    if k % 2 == 1 { try await holder.execute("COMMIT") }
                })
                #expect(sessions.count == 2, "the client's claims ran on two server sessions: \(sessions)")
                // Each server session keeps a cycle of its own: claims 0 and 1 ran on two sessions
                // (the pool opened the second for claim 1, while the other client held the first),
                // each new, so both started at the first name; a tenant's turn comes within
                // ceil(T / L) claims on each session, so within twice that many claims here.
                #expect(run.claims[0] == run.claims[1], "\(run.claims.prefix(2))")
                #expect(Self.checkTurns(run, rows: rows, limit: limit, sessions: 2) == [], "\(run.claims.prefix(12))")
                if limit == 4 { #expect(Self.finished(run, ["B", "C"]) == "B:5,C:5", "every claim takes each tenant's turn: \(run.claims.prefix(6))") }
                try await Self.expectAllTakenOnce(db, run, total: 310)
                // Only the prepared claim's name is at stake on the way (reported, not asserted away).
                #expect(run.errors.allSatisfy { $0 == "26000" || $0 == "42P05" }, "\(run.errors)")
                await holder.close()
                await client.close()
            }
        }
    }

    /// (b) two clients (two workers' connections) of a transaction pool of size 1, claiming in turn,
    /// claims of 2 (fewer than the tenants, so the cycle's start decides who goes): they share
    /// one server session, and with it one cycle, which every claim moves on: any two claims in a
    /// row take a row of each of A, B and C (while each has rows left).
    @Test("two clients of a transaction pool of size 1 share one server session and one tenant cycle; each row once")
    func transactionPoolSharedSession() async throws {
        try await Self.withDatabase { db, url in
            try await Self.insertThreeTenants(db)
            try await PgBouncer.with(mode: "transaction", backendURL: url, settings: [("default_pool_size", "1")]) { pooled in
                let first = try await PGConnection.connect(pooled, logger: TestDatabase.logger)
                let second = try await PGConnection.connect(pooled, logger: TestDatabase.logger)
                var sessions = Set<Int32>()
                let rows = try await Self.tenantRows(db)
                let run = try await Self.drain([first, second], limit: 2, before: { k in
                    sessions.insert(try await Self.backend(k % 2 == 0 ? first : second))
                })
                #expect(sessions.count == 1, "one server session: \(sessions)")
                #expect(Self.checkTurns(run, rows: rows, limit: 2) == [], "\(run.claims.prefix(12))")
                try await Self.expectAllTakenOnce(db, run, total: 310)
                #expect(run.errors.allSatisfy { $0 == "26000" || $0 == "42P05" }, "\(run.errors)")
                await second.close()
                await first.close()
            }
        }
    }

    /// (d) what the session setting leaves behind. A session pool resets a session with DISCARD ALL
    /// when its client leaves: the next client (a worker that reconnected) starts the cycle at the
    /// first name. A transaction pool resets nothing: the next client of that server session reads
    /// the lane's cycle start (a tenant's name, nothing else of the claim) and its claim goes on
    /// from there.
    @Test("the cycle start is reset with the session by a session pool; a transaction pool hands it to the next client")
    func cycleStartAfterClient() async throws {
        try await Self.withDatabase { db, url in
            try await TenantClaimTests.insert(db, tenant: "A", count: 10, ago: "3 hours")
            try await TenantClaimTests.insert(db, tenant: "B", count: 10, ago: "2 hours")
            try await TenantClaimTests.insert(db, tenant: "C", count: 10, ago: "1 hour")
            var errors: [String] = []
            for mode in ["session", "transaction"] {
                // A pool of one server session: the next client waits for the one the first left (reset, in session mode).
                try await PgBouncer.with(mode: mode, backendURL: url, settings: [("default_pool_size", "1")]) { pooled in
                    let leaving = try await PGConnection.connect(pooled, logger: TestDatabase.logger)
                    let batch = try await Self.claim(leaving, limit: 2, rotation: 0, errors: &errors)
                    #expect(batch.rows.count == 2)
                    let start = try await leaving.query("SELECT current_setting(\(Self.turnKey), true)").string(0, 0)
                    #expect(start?.isEmpty == false, "\(mode): the claim set the lane's cycle start in its session")
                    let pid = try await Self.backend(leaving)
                    await leaving.close()
                    let next = try await PGConnection.connect(pooled, logger: TestDatabase.logger)
                    #expect(try await Self.backend(next) == pid, "\(mode): the next client has the server session the first left")
                    let seen = try await next.query("SELECT current_setting(\(Self.turnKey), true)").string(0, 0)
                    #expect(seen == (mode == "session" ? "" : start), "\(mode)")
                    await next.close()
                }
            }
            #expect(errors.allSatisfy { $0 == "26000" || $0 == "42P05" }, "\(errors)")
        }
    }
}
