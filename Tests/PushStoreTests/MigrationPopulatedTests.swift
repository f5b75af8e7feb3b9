import Foundation
import PushStore
import Synchronization
import Testing

/// Schema 12 to 15 on a populated table while a producer inserts without pause.
@Suite("Migration on a populated table")
struct MigrationPopulatedTests {
    /// What the producer saw: each INSERT's duration and when it ended.
    final class Inserts: Sendable {
        let state = Mutex<(durations: [Duration], ends: [ContinuousClock.Instant], stop: Bool)>(([], [], false))
        var count: Int { state.withLock { $0.durations.count } }
    }

    @Test("upgrading a version-11 table of 300 000 rows to 15 holds no producer's INSERT for a second: the rows, the file and every INSERT kept")
    func producerNeverBlocked() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let migrator = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await migrator.migrate(Array(Migration.all.prefix(11)), logger: TestDatabase.logger) == Array(1...11))
            // A third waiting (the lane index of schema 14 takes them), the rest final.
            try await migrator.query("""
                INSERT INTO pushq.notifications (device_token, payload, status, attempts, finished_at, scheduled_at)
                SELECT lpad(to_hex(g), 64, 'a'), '{"aps":{"alert":"v11"}}', CASE WHEN g % 3 = 0 THEN 'queued' ELSE 'sent' END,
                       CASE WHEN g % 3 = 0 THEN 0 ELSE 1 END, CASE WHEN g % 3 = 0 THEN NULL ELSE now() END, now() + interval '1 day'
                  FROM generate_series(1, 300000) g
                """)
            try await migrator.execute("VACUUM ANALYZE pushq.notifications")
            let file = try await migrator.query("SELECT pg_relation_filenode('pushq.notifications')::text").string(0, 0)

            // A version-11 producer, one INSERT after another, each its own transaction. Its
            // statement timeout ends an INSERT held behind a lock long enough to fail the test anyway.
            let producer = try await PGConnection.connect(url, logger: TestDatabase.logger, statementTimeout: .seconds(30))
            let inserts = Inserts()
            let producing = Task {
                while !inserts.state.withLock({ $0.stop }) {
                    let start = ContinuousClock.now
                    try await producer.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\":{}}')",
                                             [String(repeating: "b", count: 64)])
                    let end = ContinuousClock.now
                    inserts.state.withLock { $0.durations.append(end - start); $0.ends.append(end) }
                }
            }
            func producerMadeProgress(_ n: Int) async throws -> Bool {
                let target = inserts.count + n
                return try await LockWait.until(timeout: .seconds(120)) { inserts.count >= target }
            }
            #expect(try await producerMadeProgress(20), "the producer runs before the migration starts")
            let began = ContinuousClock.now
            let applied = try await migrator.migrate(logger: TestDatabase.logger)
            let ended = ContinuousClock.now
            #expect(try await producerMadeProgress(20), "the producer still runs after it")
            inserts.state.withLock { $0.stop = true }
            try await producing.value

            #expect(applied == Migration.all.map(\.version).filter { $0 > 11 })
            let (durations, ends) = inserts.state.withLock { ($0.durations, $0.ends) }
            let during = zip(durations, ends).filter { $0.1 - $0.0 >= began && $0.1 <= ended }.count
            #expect(during > 0, "some INSERTs ran from start to end while the migration did (\(ended - began))")
            // The bound: the longest lock that conflicts with an INSERT is schema 12's ALTER TABLE,
            // catalog-only (a column with a constant default, checks NOT VALID), which with
            // `-- pushq:lock-retry` waits at most 1 s for its lock before giving way; here no other
            // transaction holds the table, so it is granted at once and held for milliseconds.
            // Indexes are built CONCURRENTLY and VALIDATE takes SHARE UPDATE EXCLUSIVE: an INSERT
            // never waits for them. An INSERT of 1 s or more is a migration that held producers.
            let slowest = durations.max() ?? .zero
            #expect(slowest < .seconds(1), "slowest INSERT \(slowest) of \(durations.count), \(during) during the migration (\(ended - began))")

            let facts = try await migrator.query("""
                SELECT (SELECT count(*) FROM pushq.notifications),
                       (SELECT count(*) FROM pushq.notifications WHERE lane = 'default' AND dedupe_key IS NULL AND notify_channel IS NULL),
                       pg_relation_filenode('pushq.notifications')::text,
                       (SELECT bool_and(convalidated) FROM pg_constraint WHERE conname IN
                            ('notifications_lane_name', 'notifications_dedupe_key_length', 'notifications_notify_channel_name')),
                       (SELECT bool_and(indisvalid) FROM pg_index WHERE indexrelid IN
                            ('pushq.notifications_dedupe_key'::regclass, 'pushq.notifications_lane_due'::regclass))
                """)
            #expect(try facts.decode(Int.self, 0, 0) == 300_000 + durations.count, "every row and every INSERT kept")
            #expect(try facts.decode(Int.self, 0, 1) == 300_000 + durations.count, "every row has the new columns' defaults")
            #expect(facts.string(0, 2) == file, "the table was not rewritten")
            #expect(facts.string(0, 3) == "t" && facts.string(0, 4) == "t", "the checks validated, the indexes valid")
            for c in [migrator, producer] { await c.close() }
        }
    }
}
