import ChildProcess
import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import Testing
import PGClient

/// Two-minute outages against a `pushq worker` process with the default retry and probe
/// settings: APNs answering 500 to everything, and APNs refusing connections. Nothing may
/// end `failed`, no row may use more than 2 attempts, every row must be sent within 60 s of
/// the recovery, and the worker must send no more than a few requests per second meanwhile.
/// The two tests share nothing (each its own database, mock and worker) and mostly wait: they
/// run side by side.
@Suite("Two-minute outages")
struct OutageTests {
    static let rows = 2000
    static let outage = Duration.seconds(120)

    /// The test environment with the retry settings left at their defaults.
    func environment(_ dbURL: String, _ apnsURL: String, id: String) -> [String: String] {
        var env = workerEnvironment(databaseURL: dbURL, apnsURL: apnsURL, workerID: id)
        for name in ["PUSHQ_RETRY_BASE_SECONDS", "PUSHQ_RETRY_CAP_SECONDS", "PUSHQ_OUTAGE_PROBE_BASE_SECONDS",
                     "PUSHQ_OUTAGE_PROBE_CAP_SECONDS", "PUSHQ_PAUSE_BASE_SECONDS", "PUSHQ_PAUSE_CAP_SECONDS"] {
            env[name] = nil
        }
        return env
    }

    func start(_ env: [String: String], id: String) throws -> (ChildProcess, String) {
        let log = NSTemporaryDirectory() + "pushq-outage-\(id)-\(UUID().uuidString.prefix(8)).log"
        return (try ChildProcess(pushqBinary, ["worker"], environment: env, stdout: .null, stderr: .file(log)), log)
    }

    /// An outage hold recorded (with `reason`, if given), and no row in flight.
    func heldAndNothingInFlight(_ db: PGConnection, reason: String?) async throws -> Bool {
        let holds = try await db.holds()
        guard holds.count == 1, holds[0].kind == .outage, reason == nil || holds[0].reason == reason else { return false }
        return try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sending'") == 0
    }

    /// What every outage test checks after the recovery at `recovered`.
    func checkRecovery(_ db: PGConnection, recovered: Date, worker: ChildProcess, log: String) async throws {
        try await waitUntilAllFinal(db, timeout: .seconds(120))
        #expect(try await statusCounts(db) == ["sent": Self.rows])
        #expect(try await scalar(db, "SELECT max(attempts) FROM pushq.notifications") <= 2)
        let lastSent = try await db.query("SELECT extract(epoch FROM max(sent_at))::float8 FROM pushq.notifications").decode(Double.self, 0, 0) ?? 0
        #expect(lastSent - recovered.timeIntervalSince1970 <= 60, "last row sent \(lastSent - recovered.timeIntervalSince1970) s after the recovery")
        #expect(try await scalar(db, "SELECT count(*) FROM pushq.credential_pauses") == 0)
        worker.kill(SIGTERM)
        #expect(await worker.wait() == .exit(0))
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        let lines = text.split(separator: "\n")
        #expect(lines.filter { $0.contains("endpoint down") }.count == 1, "one warning when it went down:\n\(text.suffix(3000))")
        #expect(lines.filter { $0.contains("endpoint recovered") }.count == 1, "one line when it came back")
    }

    @Test("APNs answers 500 to everything for 2 minutes: nothing fails, at most 2 attempts, all sent within 60 s of recovery")
    func twoMinutesOf500() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { mock, apnsURL in
                mock.answerEverything(with: .error(.internalServerError))
                let began = ContinuousClock.now
                try await insertAlerts(db, count: Self.rows, prefix: "a")
                let (worker, log) = try start(environment(try await databaseURL(db), apnsURL, id: "outage-500"), id: "500")
                #expect(try await eventually(timeout: .seconds(60)) {
                    try await heldAndNothingInFlight(db, reason: nil)
                })
                let settled = ContinuousClock.now
                let requestsAtSettle = mock.stats().requests
                // The outage itself: two minutes of 500s (a fault that lasts, not a synchronisation).
                try await Task.sleep(until: began + Self.outage)
                let during = mock.stats().requests - requestsAtSettle
                let seconds = Double((ContinuousClock.now - settled).components.seconds)
                #expect(Double(during) <= 2 * seconds, "\(during) requests in \(seconds) s while down")
                #expect(during >= 3, "probes kept going out")
                #expect(try await statusCounts(db)["failed"] == nil)
                #expect(try await scalar(db, "SELECT max(attempts) FROM pushq.notifications") <= 1)
                mock.answerEverything(with: nil)
                try await checkRecovery(db, recovered: Date(), worker: worker, log: log)
            }
        }
    }

    @Test("APNs refuses connections for 2 minutes: nothing fails, no attempt counted, all sent within 60 s of recovery")
    func twoMinutesRefused() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = false }) { mock, apnsURL in
                let (worker, log) = try start(environment(try await databaseURL(db), apnsURL, id: "outage-refused"), id: "refused")
                #expect(try await eventually { try await db.liveWorkers().count == 1 })
                try await mock.refuseConnections()
                let began = ContinuousClock.now
                try await insertAlerts(db, count: Self.rows, prefix: "b")
                #expect(try await eventually(timeout: .seconds(60)) {
                    try await heldAndNothingInFlight(db, reason: "TransportConnectFailed")
                })
                let probesAtSettle = try await scalar(db, "SELECT failures FROM pushq.credential_pauses")
                let settled = ContinuousClock.now
                try await Task.sleep(until: began + Self.outage)
                // Each probe sends one row: the probes taken are the requests tried while down.
                let probes = try await scalar(db, "SELECT failures FROM pushq.credential_pauses") - probesAtSettle
                let seconds = Double((ContinuousClock.now - settled).components.seconds)
                #expect(probes >= 3 && Double(probes) <= seconds / 2, "\(probes) probes in \(seconds) s while down")
                #expect(try await statusCounts(db)["failed"] == nil)
                #expect(try await scalar(db, "SELECT max(attempts) FROM pushq.notifications") == 0, "a refused connection never counts")
                try await mock.acceptConnections()
                try await checkRecovery(db, recovered: Date(), worker: worker, log: log)
            }
        }
    }
}
