import ChildProcess
import Foundation
import MockPush
import PushStore
import PushTestSupport
import Testing

/// Signals a `pushq worker` process must survive.
@Suite("Worker signals", .serialized)
struct SignalTests {
    /// Whether `signal` is in the SigIgn mask of /proc/<pid>/status.
    static func ignores(_ pid: pid_t, _ signal: Int32) throws -> Bool {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigIgn:") }),
              let mask = UInt64(line.dropFirst("SigIgn:".count).trimmingCharacters(in: .whitespaces), radix: 16) else {
            Issue.record("no SigIgn line in /proc/\(pid)/status")
            return false
        }
        return mask & (1 << UInt64(signal - 1)) != 0
    }

    /// SIGPIPE is ignored once the sender is up: a worker sent SIGPIPE (as OpenSSL's write to a reset
    /// connection raises) keeps sending and stops with exit 0
    @Test("SIGPIPE is ignored once the sender is up: a worker sent SIGPIPE keeps sending and stops with exit 0")
    func sigpipeIgnored() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { mock, apnsURL in
                try await insertAlerts(db, count: 1, prefix: "5")
                let log = NSTemporaryDirectory() + "pushq-worker-sigpipe-\(UUID().uuidString.prefix(8)).log"
                let worker = try ChildProcess(pushqBinary, ["worker"], environment: workerEnvironment(
                    databaseURL: try await databaseURL(db), apnsURL: apnsURL, workerID: "sigpipe"), stdout: .null, stderr: .file(log))
                try await waitUntilAllFinal(db, timeout: .seconds(60))
                #expect(try Self.ignores(worker.pid, SIGPIPE), "SigIgn of the running worker lacks SIGPIPE")

                worker.kill(SIGPIPE)
                try await insertAlerts(db, count: 1, prefix: "6")
                try await waitUntilAllFinal(db, timeout: .seconds(60))
                #expect(try await statusCounts(db) == ["sent": 2])
                #expect(mock.requests().count == 2)
                worker.kill(SIGTERM)
                let termination = await worker.wait()
                #expect(termination == .exit(0), "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }
        }
    }
}
