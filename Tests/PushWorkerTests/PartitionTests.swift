import ChildProcess
import Foundation
import MockPush
import PushStore
import PushTestSupport
import Testing
import PGClient

/// A network partition between a `pushq worker` process and PostgreSQL: the worker reaches
/// the database through a `TCPProxy` that is switched to a blackhole mid-run. The proxy
/// stops forwarding without closing anything and the kernel keeps acknowledging, so only
/// the worker's own bounds (25 s statement deadline, 10 s connect_timeout, 30 s shutdown
/// retry budget) can end its waits. The worker must neither crash nor hang, and no row may
/// be lost: rows it held come back through their 10 s leases.
@Suite("Partition between a worker and PostgreSQL", .serialized)
struct PartitionTests {
    static let rows = 5000

    /// A `pushq worker` process whose exit is awaited from the start (one waiter only:
    /// `ChildProcess` reaps with `waitpid`, and a second waiter would misread the status).
    struct Worker {
        let process: ChildProcess
        let log: String
        let exit: Task<ChildProcess.Termination, Never>

        var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

        /// Whether it exits within `timeout` (false: still running).
        func exits(within timeout: Duration) async throws -> Bool {
            try await eventually(timeout: timeout) { process.hasExited }
        }

        /// Sends SIGTERM and returns how it ended and how long that took.
        func stop() async -> (ChildProcess.Termination, Duration) {
            let started = ContinuousClock.now
            process.kill(SIGTERM)
            let termination = await exit.value
            return (termination, ContinuousClock.now - started)
        }
    }

    func start(_ dbURL: String, _ apnsURL: String, id: String) throws -> Worker {
        #expect(FileManager.default.isExecutableFile(atPath: pushqBinary), "pushq not built at \(pushqBinary)")
        let log = NSTemporaryDirectory() + "pushq-partition-\(id)-\(UUID().uuidString.prefix(8)).log"
        let process = try ChildProcess(pushqBinary, ["worker"], environment: workerEnvironment(databaseURL: dbURL, apnsURL: apnsURL, workerID: id),
                                       stdout: .null, stderr: .file(log))
        return Worker(process: process, log: log, exit: Task { await process.wait() })
    }

    func sentCount(_ db: PGConnection) async throws -> Int {
        try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sent'")
    }

    @Test("partitioned from PostgreSQL: the worker stays up, exits 0 within 75 s of SIGTERM, and another worker sends every row",
          .timeLimit(.minutes(3)))
    func stopWhilePartitioned() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { mock, apnsURL in
                try await insertAlerts(db, count: Self.rows, prefix: "5")
                let dbURL = try await databaseURL(db)
                let proxy = try TCPProxy(forwardingToServerOf: dbURL)
                defer { proxy.stop() }
                let worker = try start(try proxy.url(reaching: dbURL), apnsURL, id: "partitioned")
                defer { worker.process.kill(SIGKILL) }
                try await mock.waitForRequests(count: 500, timeout: .seconds(60))

                proxy.setBlackholed(true)
                let requestsAtPartition = mock.stats().requests
                // The partition itself: 5 s in which the worker must not exit (a fault that lasts, not a synchronisation).
                #expect(try await !worker.exits(within: .seconds(5)), "the worker ended while partitioned:\n\(worker.logText.suffix(3000))")
                #expect(mock.stats().requests <= requestsAtPartition + processHoldLimit, "sent only rows it held before the partition")

                // Bound: the stop cuts every database retry 30 s after it was requested
                // (shutdownRetrySeconds); the call in progress then ends within its own bound,
                // at most the 25 s statement deadline (a reconnect: connect_timeout, 10 s):
                // 30 + 25 = 55 s, plus 20 s for backoff sleeps (≤ 2 s), one reconnect attempt
                // for a last batch of answers, the process's exit and a loaded machine.
                // Database failures are never thrown once running: it exits 0.
                let (termination, took) = await worker.stop()
                #expect(termination == .exit(0), "\(worker.logText.suffix(3000))")
                #expect(took < .seconds(75), "SIGTERM to exit took \(took)")
                let orphaned = try await scalar(db, """
                    SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'
                    """)

                // The partition heals: the proxy forwards again, so the server also sees the
                // first worker's sockets close (ending any transaction they left open).
                proxy.setBlackholed(false)
                let rescuer = try start(dbURL, apnsURL, id: "after-partition")
                defer { rescuer.process.kill(SIGKILL) }
                let healed = ContinuousClock.now
                try await waitUntilAllFinal(db, timeout: .seconds(60))
                let finished = ContinuousClock.now - healed
                let (rescuerEnd, _) = await rescuer.stop()
                #expect(rescuerEnd == .exit(0), "\(rescuer.logText.suffix(3000))")

                #expect(try await statusCounts(db) == ["sent": Self.rows])
                let requests = mock.requests()
                let distinct = Set(requests.map(\.apnsID)).count
                #expect(distinct == Self.rows, "every row reached APNs")
                #expect(requests.count - distinct <= processHoldLimit, "resent only rows the first worker held")
                print("partition, stopped: SIGTERM to exit \(took) (\(termination)); \(requestsAtPartition) requests before the partition, "
                      + "\(requests.count - distinct) resent; server transactions left idle by the partitioned worker: \(orphaned); "
                      + "second worker finished in \(finished)")
            }
        }
    }

    @Test("partitioned from PostgreSQL for 30 s, then healed: the same worker reconnects and sends every row, none failed",
          .timeLimit(.minutes(3)))
    func resumeAfterPartition() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { mock, apnsURL in
                try await insertAlerts(db, count: Self.rows, prefix: "6")
                let dbURL = try await databaseURL(db)
                let proxy = try TCPProxy(forwardingToServerOf: dbURL)
                defer { proxy.stop() }
                let worker = try start(try proxy.url(reaching: dbURL), apnsURL, id: "reconnecting")
                defer { worker.process.kill(SIGKILL) }
                try await mock.waitForRequests(count: 500, timeout: .seconds(60))

                proxy.setBlackholed(true)
                let requestsAtPartition = mock.stats().requests
                // The partition itself: 30 s, longer than the 25 s statement deadline and the 10 s
                // leases, so that calls time out and reconnects fail (a fault that lasts, not a synchronisation).
                #expect(try await !worker.exits(within: .seconds(30)), "the worker ended while partitioned:\n\(worker.logText.suffix(3000))")
                #expect(mock.stats().requests <= requestsAtPartition + processHoldLimit, "sent only rows it held before the partition")
                // Nothing reaches the database now: what is recorded so far is all that was recorded before the partition.
                let sentBeforeHeal = try await sentCount(db)
                #expect(sentBeforeHeal < Self.rows, "work left for after the partition")

                proxy.setBlackholed(false)
                let healed = ContinuousClock.now
                // Bound: a call or reconnect in progress completes once its bytes flow again, and
                // the retry backoffs are at most 5 s (claim) and 2 s (recording); 15 s leaves margin.
                #expect(try await eventually(timeout: .seconds(15)) { try await sentCount(db) > sentBeforeHeal },
                        "nothing recorded within 15 s of the heal:\n\(worker.logText.suffix(3000))")
                let resumed = ContinuousClock.now - healed
                try await waitUntilAllFinal(db, timeout: .seconds(90))
                let finished = ContinuousClock.now - healed

                #expect(try await statusCounts(db) == ["sent": Self.rows])
                let requests = mock.requests()
                let distinct = Set(requests.map(\.apnsID)).count
                #expect(distinct == Self.rows, "every row reached APNs")
                #expect(requests.count - distinct <= processHoldLimit, "resent only rows held through the partition")
                #expect(!worker.process.hasExited, "the same worker did it all")
                let (termination, took) = await worker.stop()
                #expect(termination == .exit(0), "\(worker.logText.suffix(3000))")
                #expect(took < .seconds(10), "SIGTERM to exit took \(took) after the heal")
                let maxAttempts = try await scalar(db, "SELECT max(attempts) FROM pushq.notifications")
                print("partition, healed: first answer recorded \(resumed) after the heal, all sent \(finished) after it; "
                      + "\(requestsAtPartition) requests before the partition, \(requests.count - distinct) resent, max attempts \(maxAttempts); "
                      + "SIGTERM to exit \(took)")
            }
        }
    }
}
