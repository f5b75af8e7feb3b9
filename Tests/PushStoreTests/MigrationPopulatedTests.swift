import Foundation
import PushCore
@testable import PushStore
import Synchronization
import Testing
import PGClient

/// Migrations on a populated table while producers insert (and workers send) without pause.
@Suite("Migration on a populated table")
struct MigrationPopulatedTests {
    /// What the producer saw: each INSERT's duration and when it ended.
    final class Inserts: Sendable {
        let state = Mutex<(durations: [Duration], ends: [ContinuousClock.Instant], stop: Bool)>(([], [], false))
        var count: Int { state.withLock { $0.durations.count } }

        /// A producer: `sql` with the token of its `i`-th row, one INSERT after another, each its
        /// own transaction, timed, until ``stop``.
        func produce(_ producer: PGConnection, _ sql: String, token: @escaping @Sendable (Int) -> String) -> Task<Void, Error> {
            Task {
                defer { stop() }
                var i = 0
                while !state.withLock({ $0.stop }) {
                    i += 1
                    let start = ContinuousClock.now
                    try await producer.query(sql, [token(i)])
                    let end = ContinuousClock.now
                    state.withLock { $0.durations.append(end - start); $0.ends.append(end) }
                }
            }
        }

        func stop() { state.withLock { $0.stop = true } }
    }

    /// A connection to a database at schema `version` holding the rows `insert` makes, vacuumed
    /// and analysed, and the table's file. The connection waits up to 10 minutes for a statement:
    /// loading and vacuuming millions of rows takes more than the default minute on a busy machine.
    static func populated(_ url: String, version: Int, _ insert: String) async throws -> (PGConnection, String?) {
        let migrator = try await PGConnection.connect(url, logger: TestDatabase.logger, statementDeadline: .seconds(600))
        #expect(try await migrator.migrate(Array(Migration.all.prefix(version)), logger: TestDatabase.logger) == Array(1...version))
        try await migrator.query(insert)
        try await migrator.execute("VACUUM ANALYZE pushq.notifications")
        return (migrator, try await migrator.query("SELECT pg_relation_filenode('pushq.notifications')::text").string(0, 0))
    }

    // The ungated parts of the release (100-102) on 0.3.0's table: columns, rules, indexes, pushq.due filled.
    /// upgrading a 0.3.0 table of 300 000 rows holds no producer's INSERT for a second: the rows, the file
    /// and every INSERT kept
    @Test("upgrading a 0.3.0 table of 300 000 rows holds no producer's INSERT for a second: rows, file and every INSERT kept")
    func producerNeverBlocked() async throws {
        try await TestDatabase.with(migrated: false) { url in
            // A third waiting (pushq.due gets their entries), the rest final.
            let (migrator, file) = try await Self.populated(url, version: 11, """
                INSERT INTO pushq.notifications (device_token, payload, status, attempts, finished_at, scheduled_at)
                SELECT lpad(to_hex(g), 64, 'a'), '{"aps":{"alert":"v11"}}', CASE WHEN g % 3 = 0 THEN 'queued' ELSE 'sent' END,
                       CASE WHEN g % 3 = 0 THEN 0 ELSE 1 END, CASE WHEN g % 3 = 0 THEN NULL ELSE now() END, now() + interval '1 day'
                  FROM generate_series(1, 300000) g
                """)

            // A 0.3.0 producer whose INSERT fails if it waits a second for any lock (table, row,
            // transaction): what the test measures is the migration's locks, read by the server, not
            // the wall-clock time of an INSERT, which a busy machine stretches without any lock.
            let producer = try await PGConnection.connect(url, logger: TestDatabase.logger, statementTimeout: .seconds(30))
            try await producer.execute("SET lock_timeout = '1s'")
            let inserts = Inserts()
            let producing = inserts.produce(producer, "INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\":{}}')") { _ in
                String(repeating: "b", count: 64)
            }
            func producerMadeProgress(_ n: Int) async throws -> Bool {
                let target = inserts.count + n
                // A producer that failed stops at once: its error is recorded below.
                return try await LockWait.until(timeout: .seconds(120)) { inserts.count >= target || inserts.state.withLock { $0.stop } }
            }
            #expect(try await producerMadeProgress(20), "the producer runs before the migration starts")
            let began = ContinuousClock.now
            let required = Migration.all.filter { $0.version <= Migration.requiredVersion }
            let applied = try await migrator.migrate(required, logger: TestDatabase.logger)
            let ended = ContinuousClock.now
            #expect(try await producerMadeProgress(20), "the producer still runs after it")
            inserts.stop()
            if case .failure(let error) = await producing.result {
                Issue.record("an INSERT waited a second for a lock, or failed: \(error)")
            }

            #expect(applied == required.map(\.version).filter { $0 > 11 })
            let (durations, ends) = inserts.state.withLock { ($0.durations, $0.ends) }
            let during = zip(durations, ends).filter { $0.1 - $0.0 >= began && $0.1 <= ended }.count
            let slowest = durations.max() ?? .zero
            #expect(during > 0, "some INSERTs ran from start to end while the migration did (\(ended - began)); slowest \(slowest)")
            // The bound: the longest lock that conflicts with an INSERT is part 1's ALTER TABLE,
            // catalog-only (columns with a constant default or none, checks dropped, NOT VALID on
            // devices), which with `-- pushq:lock-retry` waits at most 200 ms for its lock before
            // giving way; here no other transaction holds the table, so it is granted at once and
            // held for milliseconds. Indexes are built CONCURRENTLY, and part 3's fill of pushq.due
            // and its ANALYZE take no lock an INSERT waits for. An INSERT that waits 1 s for a lock
            // is a migration that held producers: lock_timeout fails it, and the producer with it.
            // (A CI run under full load once saw one INSERT take 3.4 s of wall clock, longer than
            // the whole migration's 2.7 s: the machine, not a lock.)

            let facts = try await migrator.query("""
                SELECT (SELECT count(*) FROM pushq.notifications),
                       (SELECT count(*) FROM pushq.notifications WHERE lane = 'default' AND dedupe_key IS NULL AND notify_channel IS NULL),
                       pg_relation_filenode('pushq.notifications')::text,
                       (SELECT bool_and(convalidated) FROM pg_constraint WHERE connamespace = 'pushq'::regnamespace),
                       (SELECT bool_and(indisvalid) FROM pg_index WHERE indexrelid IN
                            ('pushq.notifications_dedupe_key'::regclass, 'pushq.notifications_created'::regclass)),
                       (SELECT count(*) FROM pushq.due)
                """)
            #expect(try facts.decode(Int.self, 0, 0) == 300_000 + durations.count, "every row and every INSERT kept")
            #expect(try facts.decode(Int.self, 0, 1) == 300_000 + durations.count, "every row has the new columns' defaults")
            #expect(facts.string(0, 2) == file, "the table was not rewritten")
            #expect(facts.string(0, 3) == "t" && facts.string(0, 4) == "t", "the checks validated, the indexes valid")
            #expect(try facts.decode(Int.self, 0, 5) == 100_000 + durations.count, "pushq.due holds every waiting row")
            for c in [migrator, producer] { await c.close() }
        }
    }

    /// What the workers of the older schema did: how often each row was claimed, and how many of
    /// their write-backs found their row.
    final class Sends: Sendable {
        let state = Mutex<(claims: [Int64: Int], written: Int, stop: Bool)>(([:], 0, false))
        var claimed: Int { state.withLock { $0.claims.count } }
    }

    // A 0.3.0 table of 2 000 000 rows and a registry of 500 000 devices upgraded to 0.4.0 while a
    // producer inserts, another registers devices, and two live 0.3.0 workers claim and write back
    // with 0.3.0's statements: `pushq migrate` applies parts 1-3 (columns, the rules as a trigger,
    // pushq.due and pushq.leases, the tally, the new indexes, the fill) and holds the gated parts 4
    // and 5 (lease rows of 0.3.0's rows in flight, fillfactor 33, the indexes of the row's status
    // dropped) until those workers stop; then they run while the producer goes on and two workers of
    // this release claim and write back. No INSERT waits a second for a lock, no row is lost or
    // claimed twice, every write-back lands.
    @Test("upgrading a 0.3.0 table of 2 000 000 rows with producers and 0.3.0 workers running: no one blocked, every row kept")
    func upgradeWithWorkersRunning() async throws {
        try await TestDatabase.with(migrated: false) { url in
            // Mostly final rows kept for retention, 1 in 50 waiting (40 000; 1 in 5 of those due in an
            // hour, with an expiry), each with a topic: a rule of the trigger that replaces 0.3.0's checks.
            let (migrator, file) = try await Self.populated(url, version: 11, """
                INSERT INTO pushq.notifications (device_token, payload, topic, status, attempts, finished_at, expires_at, scheduled_at)
                SELECT lpad(to_hex(g), 64, 'a'), '{"aps":{"alert":"v11"}}', 'com.example.app',
                       CASE WHEN g % 50 = 0 THEN 'queued' ELSE 'sent' END, CASE WHEN g % 50 = 0 THEN 0 ELSE 1 END,
                       CASE WHEN g % 50 = 0 THEN NULL ELSE now() END, CASE WHEN g % 250 = 0 THEN now() + interval '1 day' END,
                       CASE WHEN g % 250 = 0 THEN now() + interval '1 hour' ELSE now() END
                  FROM generate_series(1, 2000000) g
                """)
            // A registry of 500 000 devices, 1 in 1 000 invalidated: what devices_invalidated indexes.
            try await migrator.query("""
                INSERT INTO pushq.devices (device_token, environment, invalidated_at, invalid_reason)
                SELECT 'c' || lpad(to_hex(g), 63, '0'), 'production', CASE WHEN g % 1000 = 0 THEN now() END,
                       CASE WHEN g % 1000 = 0 THEN 'Unregistered' END
                  FROM generate_series(1, 500000) g
                """)
            try await migrator.execute("VACUUM ANALYZE pushq.devices")

            let producer = try await PGConnection.connect(url, logger: TestDatabase.logger, statementTimeout: .seconds(30))
            let inserts = Inserts()
            let producing = inserts.produce(
                producer, "INSERT INTO pushq.notifications (device_token, payload, topic) VALUES ($1, '{\"aps\":{}}', 'com.example.app')"
            ) { String(format: "b%063x", $0) }
            // A backend registering devices, every sixteenth registration (its token ends in 0) an invalidated token.
            let registrar = try await PGConnection.connect(url, logger: TestDatabase.logger, statementTimeout: .seconds(30))
            let registrations = Inserts()
            let registering = registrations.produce(registrar, """
                INSERT INTO pushq.devices (device_token, environment, invalidated_at, invalid_reason)
                VALUES ($1, 'production', CASE WHEN right($1, 1) = '0' THEN now() END, CASE WHEN right($1, 1) = '0' THEN 'Unregistered' END)
                """) { String(format: "d%063x", $0) }
            // Two 0.3.0 workers: its claim (which knows nothing of pushq.due) and
            // its fenced write-back, batch after batch, each on its two connections, until told to stop.
            let sends = Sends()
            let sent = Disposition(status: .sent, reason: nil)
            // They are live in pushq.workers, as workers of that release register (no schema_known).
            try await migrator.query("""
                INSERT INTO pushq.workers (id, host, pid, version, credentials) VALUES ('old-1', 'h', 1, '0.3.0', '[]'), ('old-2', 'h', 2, '0.3.0', '[]')
                """)
            let workers = (1...2).map { n in
                Task {
                    let claimer = try await PGConnection.connect(url, logger: TestDatabase.logger)
                    let completer = try await PGConnection.connect(url, logger: TestDatabase.logger)
                    while !sends.state.withLock({ $0.stop }) {
                        let rows = try await PreviousRelease.claim(claimer, workerID: "old-\(n)", leaseSeconds: 300)
                        sends.state.withLock { s in for r in rows { s.claims[r.id, default: 0] += 1 } }
                        let completions = rows.map {
                            RowCompletion(id: $0.id, attempt: $0.attempts, lease: $0.lease, disposition: sent, httpStatus: 200, apnsUniqueID: nil)
                        }
                        let written = try await PreviousRelease.complete(completer, completions, workerID: "old-\(n)")
                        sends.state.withLock { $0.written += written }
                        // Its heartbeat, as that release's worker beats: it stays live however long the migration takes.
                        try await claimer.query("UPDATE pushq.workers SET heartbeat_at = now() WHERE id = $1", ["old-\(n)"])
                    }
                    for c in [claimer, completer] { await c.close() }
                }
            }
            func progress(_ inserted: Int, _ claimed: Int) async throws -> Bool {
                let (i, r, c) = (inserts.count + inserted, registrations.count + inserted, sends.claimed + claimed)
                return try await LockWait.until(timeout: .seconds(120)) { inserts.count >= i && registrations.count >= r && sends.claimed >= c }
            }
            // How long the producers wait for a lock (their statement's age while it waits), seen from
            // another session every 50 ms: a wait of a second cannot pass unseen.
            let watcher = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let producerPIDs = [try await producer.query("SELECT pg_backend_pid()").decode(Int.self, 0, 0) ?? 0,
                                try await registrar.query("SELECT pg_backend_pid()").decode(Int.self, 0, 0) ?? 0]
            let lockWaits = Task {
                var longest = 0.0
                var what = ""
                while !inserts.state.withLock({ $0.stop }) {
                    let r = try await watcher.query("""
                        SELECT extract(epoch FROM now() - a.state_change)::float8, a.wait_event || ' ' || left(a.query, 40),
                               (SELECT string_agg(b.pid || ':' || left(b.query, 80), ' | ') FROM pg_stat_activity b WHERE b.pid = ANY (pg_blocking_pids(a.pid)))
                          FROM pg_stat_activity a WHERE a.pid = ANY ($1::int[]) AND a.wait_event_type = 'Lock'
                        """, [producerPIDs])
                    for i in 0..<r.count where (try r.decode(Double.self, i, 0) ?? 0) > longest {
                        longest = try r.decode(Double.self, i, 0) ?? 0
                        what = (r.string(i, 1) ?? "") + " behind " + (r.string(i, 2) ?? "")
                    }
                    try await Task.sleep(for: .milliseconds(50))
                }
                return (longest, what)
            }
            #expect(try await progress(20, 400), "the producer and the workers run before the migration starts")
            let began = ContinuousClock.now
            let applied = try await migrator.migrate(logger: TestDatabase.logger)
            #expect(try await progress(20, 400), "the producer and the workers still run after it")
            #expect(applied == Migration.all.filter { (try? MigrationGate(of: $0)) == nil }.map(\.version).filter { $0 > 11 })
            #expect(try await migrator.migrationWait()?.workers.map(\.id) == ["old-1", "old-2"], "the gated ones wait for the live workers")
            // The old workers stop (a clean stop deletes their row); the producers go on.
            sends.state.withLock { $0.stop = true }
            for w in workers { try await w.value }
            try await migrator.query("DELETE FROM pushq.workers WHERE id IN ('old-1', 'old-2')")
            // Two workers of this release take over (registered with the schema they know): its
            // claim and write-back run throughout the gated parts, which give 0.3.0's rows in flight
            // lease rows, lower the fillfactor and drop what the old workers read.
            try await migrator.query("""
                INSERT INTO pushq.workers (id, host, pid, version, credentials, schema_known)
                VALUES ('new-1', 'h', 3, 'now', '[]', $1), ('new-2', 'h', 4, 'now', '[]', $1)
                """, [Migration.latestVersion])
            let current = Sends()
            let newWorkers = (1...2).map { n in
                Task {
                    let claimer = try await PGConnection.connect(url, logger: TestDatabase.logger)
                    let completer = try await PGConnection.connect(url, logger: TestDatabase.logger)
                    while !current.state.withLock({ $0.stop }) {
                        let rows = try await claimer.claim(limit: 200, workerID: "new-\(n)", leaseSeconds: 300, credentials: [.apns: ["default"]],
                                                           defaultEnvironment: .production).rows
                        current.state.withLock { s in for r in rows { s.claims[r.id, default: 0] += 1 } }
                        let completions = rows.map {
                            RowCompletion(id: $0.id, attempt: $0.attempts, lease: $0.lease, disposition: sent, httpStatus: 200, apnsUniqueID: nil)
                        }
                        let written = try await completer.complete(completions, invalidations: [], holds: [], resumed: [], workerID: "new-\(n)")
                        current.state.withLock { $0.written += written.updated }
                    }
                    for c in [claimer, completer] { await c.close() }
                }
            }
            #expect(try await LockWait.until(timeout: .seconds(120)) { current.claimed >= 400 }, "this release's workers claim before the gated ones run")
            let gated = try await migrator.migrate(logger: TestDatabase.logger)
            let ended = ContinuousClock.now
            let claimedBeforeEnd = current.claimed
            #expect(try await LockWait.until(timeout: .seconds(120)) { current.claimed >= claimedBeforeEnd + 400 }, "and after them")
            current.state.withLock { $0.stop = true }
            for w in newWorkers { try await w.value }
            #expect(gated == Migration.all.filter { (try? MigrationGate(of: $0)) != nil }.map(\.version))
            #expect(try await progress(20, 0), "the producers still run after it")
            inserts.stop()
            registrations.stop()
            try await producing.value
            try await registering.value
            let (longestLockWait, lockWaitWhat) = try await lockWaits.value
            await watcher.close()

            let (durations, ends) = inserts.state.withLock { ($0.durations, $0.ends) }
            let during = zip(durations, ends).filter { $0.1 - $0.0 >= began && $0.1 <= ended }.count
            #expect(during > 0, "some INSERTs ran from start to end while the migration did (\(ended - began))")
            // Blocked means waiting for a lock the migration holds or waits for: an INSERT may also
            // take long for the disk or the CPU, which two builds of an index on 2 000 000 rows
            // beside the rest of the suite keep busy.
            let slowest = durations.max() ?? .zero
            #expect(longestLockWait < 1, "longest wait for a lock \(longestLockWait) s (\(lockWaitWhat)); slowest INSERT \(slowest) of \(durations.count), \(during) during the migration (\(ended - began))")
            let (registered, registeredEnds) = registrations.state.withLock { ($0.durations, $0.ends) }
            let registeredDuring = zip(registered, registeredEnds).filter { $0.1 - $0.0 >= began && $0.1 <= ended }.count
            #expect(registeredDuring > 0, "some registrations ran from start to end while the migration did")
            let (oldClaims, oldWritten) = sends.state.withLock { ($0.claims, $0.written) }
            let (newClaims, newWritten) = current.state.withLock { ($0.claims, $0.written) }
            let claims = oldClaims.merging(newClaims, uniquingKeysWith: +)
            #expect(claims.values.allSatisfy { $0 == 1 }, "no row claimed twice: \(claims.filter { $0.value > 1 }.count)")
            #expect(oldWritten + newWritten == claims.count, "every write-back found its row: \(oldWritten + newWritten) of \(claims.count)")

            let facts = try await migrator.query("""
                SELECT (SELECT count(*) FROM pushq.notifications),
                       (SELECT count(*) FROM pushq.notifications WHERE status = 'sending'),
                       (SELECT count(*) FROM pushq.notifications WHERE status = 'sent' AND attempts = 1),
                       pg_relation_filenode('pushq.notifications')::text,
                       (SELECT count(*) FROM pg_trigger WHERE tgrelid = 'pushq.notifications'::regclass AND tgenabled = 'O'
                           AND tgname IN ('notifications_rules', 'notifications_rules_update', 'notifications_rules_waiting'))::text,
                       (SELECT n_distinct FROM pg_stats WHERE schemaname = 'pushq' AND tablename = 'notifications' AND attname = 'lane'),
                       (SELECT string_agg(c.relname || ':' || i.indisvalid, ',' ORDER BY c.relname) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                         WHERE i.indrelid = 'pushq.notifications'::regclass),
                       (SELECT indisvalid FROM pg_index WHERE indexrelid = 'pushq.devices_invalidated'::regclass),
                       (SELECT count(*) FROM pushq.devices),
                       (SELECT count(*) FROM pushq.devices WHERE invalidated_at IS NOT NULL)
                """)
            #expect(try facts.decode(Int.self, 0, 0) == 2_000_000 + durations.count, "every row and every INSERT kept")
            #expect(try facts.decode(Int.self, 0, 1) == 0, "nothing left in flight")
            #expect(try facts.decode(Int.self, 0, 2) == 1_960_000 + claims.count, "each claimed row sent once, the rest as they were")
            #expect(facts.string(0, 3) == file, "the table was not rewritten")
            #expect(facts.string(0, 4) == "3", "the rules' triggers in place")
            #expect(Set(["notifications_topic_shape", "notifications_lane_name", "notifications_notify_channel_name"])
                        .isSubset(of: try await TableRules.enforced(migrator)), "the rules of the columns producers write, in the trigger")
            // What the trigger refuses, under the constraint's name, as before.
            let refused = await #expect(throws: PGError.self) {
                try await migrator.query("INSERT INTO pushq.notifications (device_token, payload, topic) VALUES (repeat('e', 64), '{}', 'bad topic')")
            }
            #expect(refused?.sqlState == "23514" && refused?.constraint == "notifications_topic_shape")
            #expect(try facts.decode(Double.self, 0, 5) == 10, "the lane statistics recorded (one lane in the table)")
            #expect(facts.string(0, 6) == """
                notifications_channel_created:true,notifications_created:true,notifications_dedupe_key:true,\
                notifications_pkey:true,notifications_token_created:true
                """, "the release's indexes built and valid; every index of the row's status dropped")
            let options = try await migrator.query("SELECT array_to_string(reloptions, ',') FROM pg_class WHERE oid = 'pushq.notifications'::regclass")
            #expect(options.string(0, 0)?.contains("fillfactor=33") == true, "part 4: \(options.string(0, 0) ?? "")")
            let leases = try await migrator.query("""
                SELECT array_to_string(c.reloptions, ','), a.attstorage::text
                  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'ids' WHERE c.oid = 'pushq.leases'::regclass
                """)
            #expect(leases.string(0, 0) == "toast_tuple_target=8160" && leases.string(0, 1) == "e", "a lease's ids stored as they are: \(leases.string(0, 0) ?? ""), \(leases.string(0, 1) ?? "")")
            #expect(facts.string(0, 7) == "t", "devices_invalidated built and valid")
            #expect(try facts.decode(Int.self, 0, 8) == 500_000 + registered.count, "every device and every registration kept")
            #expect(try facts.decode(Int.self, 0, 9) == 500 + registered.count / 16, "the invalidated devices and registrations kept")
            // pushq.due (parts 1 and 3): an entry for every waiting row, however it came (before the
            // triggers, during the fill, after it); entries of rows the old workers claimed since
            // are swept, and what is left is exactly the waiting rows.
            var swept = 0
            while case let n = try await migrator.sweepDue(limit: 10_000), n > 0 { swept += n }
            let due = try await migrator.query("""
                SELECT (SELECT count(*) FROM pushq.due),
                       (SELECT count(*) FROM pushq.notifications n WHERE n.status IN ('queued', 'retrying')),
                       (SELECT count(*) FROM pushq.notifications n JOIN pushq.due d ON d.id = n.id
                         WHERE n.status IN ('queued', 'retrying') AND d.lane = n.lane AND d.due_at = n.scheduled_at
                           AND d.expires_at IS NOT DISTINCT FROM n.expires_at),
                       (SELECT count(*) FROM pushq.due WHERE expires_at IS NOT NULL),
                       (SELECT count(*) FROM pushq.notifications n WHERE n.status IN ('queued', 'retrying') AND n.expires_at IS NOT NULL)
                """)
            let waiting = try due.decode(Int.self, 0, 1)
            #expect(waiting == 40_000 + durations.count - claims.count, "the rows nobody claimed wait")
            #expect(try due.decode(Int.self, 0, 0) == waiting && due.decode(Int.self, 0, 2) == waiting,
                    "pushq.due holds the waiting rows, each with its lane, due time and expiry (\(swept) entries swept)")
            #expect(try due.decode(Int.self, 0, 3) == 8_000 && due.decode(Int.self, 0, 4) == 8_000,
                    "the expiry of the rows waiting before the upgrade copied (8 000 have one)")
            #expect(try await migrator.query("SELECT to_regclass('pushq.notifications_lease') IS NULL").decode(Bool.self, 0, 0) == true)
            for c in [migrator, producer, registrar] { await c.close() }
        }
    }
}
