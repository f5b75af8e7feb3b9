import Foundation
import PushCore
import PushStore
import Synchronization
import Testing
import PGClient

/// Set once the pruning task has finished.
private final class Done: Sendable {
    let value = Mutex(false)
}

/// The pruner's statements: what they delete, what they never touch, how long they hold.
@Suite("Prune")
struct PruneTests {
    /// Inserts `count` rows of `status`, finished `finishedAgo` seconds ago (NULL when nil) and
    /// created `createdAgo` seconds ago.
    static func insert(_ c: PGConnection, _ count: Int, status: String, finishedAgo: Double?, createdAgo: Double = 400 * 86_400) async throws {
        try await c.query("""
            INSERT INTO pushq.notifications (device_token, payload, status, finished_at, created_at, scheduled_at, locked_by, locked_until)
            SELECT lpad(to_hex(g), 64, '0'), '{}', $2,
                   now() - $3 * interval '1 second', now() - $4 * interval '1 second', now() - $4 * interval '1 second',
                   CASE WHEN $2 = 'sending' THEN 'w' END, CASE WHEN $2 = 'sending' THEN now() + interval '1 minute' END
              FROM generate_series(1, $1) g
            """, [count, status, finishedAgo, createdAgo])
    }

    static func counts(_ c: PGConnection) async throws -> [String: Int] {
        let r = try await c.query("SELECT status, count(*) FROM pushq.notifications GROUP BY status")
        var out: [String: Int] = [:]
        for i in 0..<r.count { out[r.string(i, 0)!] = try r.decode(Int.self, i, 1) }
        return out
    }

    /// Every pass walked from the first row to its cutoff, as a round of the pruner does.
    static func pruneAll(_ c: PGConnection, _ policy: RetentionPolicy) async throws -> Int {
        var total = 0
        for (pass, age) in policy.passes {
            var after: PrunePosition?
            while true {
                let step = try await c.prune(pass, olderThan: age, limit: policy.batchSize, after: after)
                total += step.deleted
                after = step.last ?? after
                if step.walked < policy.batchSize { break }
            }
        }
        return total
    }

    @Test("with retention 0 every final row goes and no other row, however old (finished_at set or not)")
    func neverOpenRows() async throws {
        try await TestDatabase.withConnection { c in
            for status in ["queued", "sending", "retrying"] {
                try await Self.insert(c, 30, status: status, finishedAgo: 400 * 86_400)  // absurdly old, finished_at set
                try await Self.insert(c, 30, status: status, finishedAgo: nil)
            }
            for status in ["sent", "failed", "expired", "cancelled"] {
                try await Self.insert(c, 30, status: status, finishedAgo: 10)
                try await Self.insert(c, 30, status: status, finishedAgo: nil, createdAgo: 10)
            }
            let deleted = try await Self.pruneAll(c, RetentionPolicy(sentSeconds: 0, finalSeconds: 0, batchSize: 7))
            #expect(deleted == 4 * 60)
            #expect(try await Self.counts(c) == ["queued": 60, "sending": 60, "retrying": 60])
        }
    }

    @Test("each status keeps its retention: sent one day, the others seven; younger rows stay")
    func agesPerStatus() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.insert(c, 5, status: "sent", finishedAgo: 2 * 86_400)      // goes
            try await Self.insert(c, 6, status: "sent", finishedAgo: 3_600)           // stays
            try await Self.insert(c, 7, status: "failed", finishedAgo: 2 * 86_400)    // stays (final: 7 days)
            try await Self.insert(c, 8, status: "expired", finishedAgo: 8 * 86_400)   // goes
            try await Self.insert(c, 9, status: "cancelled", finishedAgo: nil, createdAgo: 8 * 86_400)  // goes (no finished_at: created_at)
            try await Self.insert(c, 10, status: "cancelled", finishedAgo: nil, createdAgo: 86_400)     // stays
            let policy = RetentionPolicy()
            var candidates = 0
            for (pass, age) in policy.passes { candidates += try await c.pruneCandidates(pass, olderThan: age) }
            #expect(candidates == 5 + 8 + 9)
            #expect(try await Self.counts(c) == ["sent": 11, "failed": 7, "expired": 8, "cancelled": 19], "counting deletes nothing")
            #expect(try await Self.pruneAll(c, policy) == 5 + 8 + 9)
            #expect(try await Self.counts(c) == ["sent": 6, "failed": 7, "cancelled": 10])
        }
    }

    @Test("a batch reads at most its limit of the walk, oldest created first, through notifications_created and no sequential scan")
    func batchBound() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.insert(c, 2500, status: "sent", finishedAgo: 2 * 86_400, createdAgo: 3 * 86_400)
            try await Self.insert(c, 10, status: "sent", finishedAgo: 10 * 86_400, createdAgo: 11 * 86_400)
            try await c.execute("ANALYZE pushq.notifications")
            func scans() async throws -> (table: Int, created: Int) {
                try await c.query("SELECT pg_stat_force_next_flush()")
                let r = try await c.query("""
                    SELECT t.seq_scan, i.idx_scan FROM pg_stat_user_tables t, pg_stat_user_indexes i
                     WHERE t.relid = 'pushq.notifications'::regclass AND i.indexrelname = 'notifications_created'
                    """)
                return (try r.decode(Int.self, 0, 0) ?? -1, try r.decode(Int.self, 0, 1) ?? -1)
            }
            let before = try await scans()
            let first = try await c.prune(.sent, olderThan: 86_400, limit: 1000, after: nil)
            #expect(first.deleted == 1000 && first.walked == 1000)
            let after = try await scans()
            #expect(after.table == before.table, "no sequential scan of notifications")
            #expect(after.created > before.created, "the batch walked notifications_created")
            let oldest = try await c.query("SELECT count(*) FROM pushq.notifications WHERE created_at < now() - interval '9 days'")
            #expect(try oldest.decode(Int.self, 0, 0) == 0, "the oldest rows go first")
            let second = try await c.prune(.sent, olderThan: 86_400, limit: 1000, after: first.last)
            let third = try await c.prune(.sent, olderThan: 86_400, limit: 1000, after: second.last)
            #expect([second.deleted, second.walked, third.deleted, third.walked] == [1000, 1000, 510, 510] as [Int])
            let fourth = try await c.prune(.sent, olderThan: 86_400, limit: 1000, after: third.last)
            #expect(fourth.deleted == 0 && fourth.walked == 0 && fourth.last == nil)
        }
    }

    @Test("the walk reads past rows it may not delete, and goes on from where it stopped: rows before the position are not read")
    func walkResumes() async throws {
        try await TestDatabase.withConnection { c in
            // In the walk's order: 1 500 waiting rows, 300 failed ones (.ended keeps them 7 days), 500 sent.
            try await Self.insert(c, 1500, status: "queued", finishedAgo: nil, createdAgo: 5 * 86_400)
            try await Self.insert(c, 300, status: "failed", finishedAgo: 2 * 86_400, createdAgo: 4 * 86_400)
            try await Self.insert(c, 500, status: "sent", finishedAgo: 2 * 86_400, createdAgo: 3 * 86_400)
            let first = try await c.prune(.sent, olderThan: 86_400, limit: 1000, after: nil)
            #expect(first.deleted == 0 && first.walked == 1000, "only waiting rows in the first thousand")
            let second = try await c.prune(.sent, olderThan: 86_400, limit: 1000, after: first.last)
            #expect(second.deleted == 200 && second.walked == 1000, "500 waiting, 300 failed, then 200 sent")
            let third = try await c.prune(.sent, olderThan: 86_400, limit: 1000, after: second.last)
            #expect(third.walked == 300 && third.deleted == 300, "the rest of the sent rows, and the end of the walk")
            #expect(try await Self.counts(c) == ["queued": 1500, "failed": 300])
            // Rows that become deletable behind a position are left to the next walk from the first row.
            try await c.execute("UPDATE pushq.notifications SET status = 'sent' WHERE status = 'queued'")
            let resumed = try await c.prune(.sent, olderThan: 86_400, limit: 1000, after: third.last)
            #expect(resumed.deleted == 0 && resumed.walked == 0 && resumed.last == nil)
            #expect(try await Self.pruneAll(c, RetentionPolicy(batchSize: 1000)) == 1500)
        }
    }

    /// a concurrent claim is never held up: it runs within its 300 ms lock_timeout while batches delete; a
    /// locked final row is skipped, not waited for
    @Test("a concurrent claim is never held up by the pruner's batches; a locked final row is skipped, not waited for")
    func neverBlocks() async throws {
        try await TestDatabase.with { url in
            let pruner = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let claimer = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let holder = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await Self.insert(pruner, 20_000, status: "sent", finishedAgo: 2 * 86_400)
            try await Self.insert(pruner, 2_000, status: "queued", finishedAgo: nil, createdAgo: 60)
            // Another session holds one old final row locked (an open transaction).
            try await holder.execute("BEGIN")
            let lockedID = try await holder.query("""
                SELECT id FROM pushq.notifications WHERE status = 'sent' ORDER BY finished_at LIMIT 1 FOR UPDATE
                """).decode(Int64.self, 0, 0)!
            try await claimer.execute("SET lock_timeout = '300ms'")
            let done = Done()
            let pruning = Task {
                defer { done.value.withLock { $0 = true } }
                var total = 0
                var batches = 0
                var after: PrunePosition?
                while true {
                    let step = try await pruner.prune(.sent, olderThan: 86_400, limit: 1000, after: after)
                    total += step.deleted
                    batches += 1
                    after = step.last ?? after
                    if step.walked < 1000 { return (total, batches) }
                }
            }
            var longest = Duration.zero
            var claimed = 0
            var claims = 0
            while !done.value.withLock({ $0 }) || claimed < 2_000 {
                claims += 1
                let started = ContinuousClock.now
                claimed += try await claimer.query("""
                    UPDATE pushq.notifications SET status = 'sending', locked_by = 'w', locked_until = now() + interval '1 minute'
                     WHERE id = ANY(ARRAY(SELECT id FROM pushq.notifications WHERE status IN ('queued', 'retrying')
                                          ORDER BY scheduled_at, id LIMIT 5 FOR UPDATE SKIP LOCKED))
                    """).affectedRows
                longest = max(longest, ContinuousClock.now - started)
            }
            let (total, batches) = try await pruning.value
            #expect(total == 19_999, "every old sent row but the locked one")
            #expect(batches == 21, "20 full batches, then one that reads nothing")
            #expect(claims > 1)
            #expect(longest < .seconds(1), "longest claim: \(longest)")
            try await holder.execute("COMMIT")
            #expect(try await pruner.query("SELECT count(*) FROM pushq.notifications WHERE id = $1", [lockedID]).decode(Int.self, 0, 0) == 1)
            #expect(try await Self.counts(pruner) == ["sending": 2_000, "sent": 1])
            for c in [pruner, claimer, holder] { await c.close() }
        }
    }

    @Test("the pruner's lock admits one session at a time and is released by unlock or a closed connection")
    func election() async throws {
        try await TestDatabase.with { url in
            let a = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let b = try await PGConnection.connect(url, logger: TestDatabase.logger)
            #expect(try await a.tryLockPruner())
            #expect(try await !b.tryLockPruner())
            try await a.unlockPruner()
            #expect(try await b.tryLockPruner())
            #expect(try await !a.tryLockPruner())
            try await b.unlockPruner()
            try await b.unlockPruner()  // not held: a warning, no error
            #expect(try await a.tryLockPruner())
            let pid = try await a.query("SELECT pg_backend_pid()").decode(Int.self, 0, 0)
            await a.close()
            // The server releases a session's locks when its backend exits, a moment after the
            // client closed: wait for that exit, then the lock must be free.
            while try await b.query("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", [pid]).decode(Int.self, 0, 0) != 0 {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(try await b.tryLockPruner(), "a closed session's lock is free")
            await b.close()
        }
    }
}
