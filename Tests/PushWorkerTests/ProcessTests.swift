import ChildProcess
import Foundation
import MockPush
import PushStore
import PushTestSupport
import Testing
import PGClient

/// `pushq worker` processes: killed, stopped, several at once, and PostgreSQL restarted under them.
@Suite("Worker processes", .serialized)
struct ProcessTests {
    static let total = 20_000

    /// Starts `pushq worker` with its log in a temporary file; returns the process and the log path.
    func startWorker(_ dbURL: String, _ apnsURL: String, id: String, extra: [String: String] = [:]) throws -> (ChildProcess, String) {
        #expect(FileManager.default.isExecutableFile(atPath: pushqBinary), "pushq not built at \(pushqBinary)")
        let log = NSTemporaryDirectory() + "pushq-worker-\(id)-\(UUID().uuidString.prefix(8)).log"
        let process = try ChildProcess(pushqBinary, ["worker"], environment: workerEnvironment(databaseURL: dbURL, apnsURL: apnsURL, workerID: id, extra: extra),
                                       stdout: .null, stderr: .file(log))
        return (process, log)
    }

    /// Stops a worker with SIGTERM and returns how it ended and how long that took.
    func stop(_ process: ChildProcess) async -> (ChildProcess.Termination, Duration) {
        let started = ContinuousClock.now
        process.kill(SIGTERM)
        let termination = await process.wait()
        return (termination, ContinuousClock.now - started)
    }

    /// Requests the mock received, and how many of them repeated an apns-id already seen.
    func duplicates(_ mock: MockPushServer) -> (requests: Int, distinct: Int) {
        let requests = mock.requests()
        return (requests.count, Set(requests.map(\.apnsID)).count)
    }

    @Test("SIGKILL mid-run loses nothing: another worker finishes every row; resends at most the killed worker's window")
    func sigkillLosesNothing() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { mock, apnsURL in
                try await insertAlerts(db, count: Self.total, prefix: "1")
                let dbURL = try await databaseURL(db)
                // Resends are bounded by the killed worker's window only while no request times out:
                // a request timeout no busy machine reaches; the lease (how long the rescuer waits) to match.
                let patient = ["PUSHQ_APNS_REQUEST_TIMEOUT": "20", "PUSHQ_LEASE_SECONDS": "30"]
                let (killed, _) = try startWorker(dbURL, apnsURL, id: "killed", extra: patient)
                try await mock.waitForRequests(count: Self.total / 4, timeout: .seconds(120))
                killed.kill(SIGKILL)
                #expect(await killed.wait() == .signal(SIGKILL))
                let held = try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sending' AND locked_by = 'killed'")
                #expect(held <= processHoldLimit)

                let (rescuer, log) = try startWorker(dbURL, apnsURL, id: "rescuer", extra: patient)
                try await waitUntilAllFinal(db, timeout: .seconds(240))
                let (termination, _) = await stop(rescuer)
                #expect(termination == .exit(0), "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")

                #expect(try await statusCounts(db) == ["sent": Self.total])
                let seen = duplicates(mock)
                #expect(seen.distinct == Self.total, "every row reached APNs")
                #expect(seen.requests - seen.distinct <= processHoldLimit, "resends \(seen.requests - seen.distinct) exceed the killed worker's window")
                // Rows the killed worker held came back only through their lease: attempts 2 for those resent.
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE attempts > 2") == 0)
            }
        }
    }

    @Test("three workers on 20 000 rows: each row sent exactly once, and every worker does part of the work")
    func threeWorkersShare() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { mock, apnsURL in
                try await insertAlerts(db, count: Self.total, prefix: "2")
                let dbURL = try await databaseURL(db)
                // "Sent exactly once" holds only while no request times out (a timeout is an unknown
                // outcome, retried): a request timeout no busy machine reaches, and a lease to match.
                let patient = ["PUSHQ_APNS_REQUEST_TIMEOUT": "30", "PUSHQ_LEASE_SECONDS": "60"]
                let workers = try (1...3).map { try startWorker(dbURL, apnsURL, id: "w\($0)", extra: patient) }
                try await waitUntilAllFinal(db, timeout: .seconds(240))
                var sentBy: [Int] = []
                for (process, log) in workers {
                    let (termination, _) = await stop(process)
                    #expect(termination == .exit(0))
                    let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                    let sent = text.split(separator: "\n").last { $0.contains("worker stopped") }
                        .flatMap { line in line.split(separator: " ").first { $0.hasPrefix("worker.sent=") } }
                        .flatMap { Int($0.dropFirst("worker.sent=".count)) }
                    sentBy.append(sent ?? -1)
                }
                #expect(try await statusCounts(db) == ["sent": Self.total])
                let seen = duplicates(mock)
                #expect(seen.requests == Self.total, "no row sent twice")
                #expect(seen.distinct == Self.total)
                #expect(sentBy.reduce(0, +) == Self.total, "\(sentBy)")
                #expect(sentBy.allSatisfy { $0 > 0 }, "every worker sent some: \(sentBy)")
            }
        }
    }

    @Test("SIGTERM mid-run: exits 0 within 10 s, holds nothing afterwards, and another worker finishes the rest")
    func sigtermReleases() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { mock, apnsURL in
                try await insertAlerts(db, count: Self.total, prefix: "3")
                let dbURL = try await databaseURL(db)
                let (worker, log) = try startWorker(dbURL, apnsURL, id: "terminated")
                try await mock.waitForRequests(count: 2000, timeout: .seconds(120))
                let (termination, took) = await stop(worker)
                #expect(termination == .exit(0), "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
                #expect(took < .seconds(10), "took \(took)")
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE locked_by = 'terminated' OR status = 'sending'") == 0)
                #expect((try await statusCounts(db))["queued", default: 0] > 0, "stopped mid-run")

                let (next, _) = try startWorker(dbURL, apnsURL, id: "next")
                try await waitUntilAllFinal(db, timeout: .seconds(240))
                #expect(await stop(next).0 == .exit(0))
                #expect(try await statusCounts(db) == ["sent": Self.total])
                let seen = duplicates(mock)
                #expect(seen.distinct == Self.total)
            }
        }
    }

    @Test("PostgreSQL restarted mid-run: the worker reconnects and every row ends final")
    func postgresRestart() async throws {
        let dir = NSTemporaryDirectory() + "pushq-pg-restart-\(UUID().uuidString.prefix(8))"
        let url = try pgLocal("start", dir: dir)
        defer { _ = try? pgLocal("destroy", dir: dir) }
        let db = try await PGConnection.connect(url, logger: TestDatabase.logger)
        _ = try await db.migrate(logger: TestDatabase.logger)
        try await withMock({ $0.recordBodies = false }) { mock, apnsURL in
            try await insertAlerts(db, count: Self.total, prefix: "4")
            let (worker, log) = try startWorker(url, apnsURL, id: "survivor")
            try await mock.waitForRequests(count: Self.total / 4, timeout: .seconds(120))
            #expect(try pgLocal("restart", dir: dir) == url)
            try await waitUntilAllFinal(db, timeout: .seconds(240))
            let (termination, _) = await stop(worker)
            #expect(termination == .exit(0), "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            #expect(try await statusCounts(db) == ["sent": Self.total])
            #expect(duplicates(mock).distinct == Self.total)
        }
        await db.close()
    }
}
