import ChildProcess
import Foundation
import MockPush
import PushCore
@testable import PushStore
import PushTestSupport
import PushTransport
@testable import PushWorker
import Testing
import PGClient

/// What a worker checks before it runs, and what it leaves behind when it stops or fails.
@Suite("Worker start and stop", .serialized)
struct StartupTests {
    func brokenCAFile() throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pushq-worker-broken-ca-\(getpid()).pem").path
        try "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n".write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test("a CA file OpenSSL cannot read stops the worker at start with a message naming the file")
    func brokenCAFileStopsTheWorker() async throws {
        let file = try brokenCAFile()
        defer { try? FileManager.default.removeItem(atPath: file) }
        try await TestDatabase.with { url in
            var configuration = try workerConfiguration(databaseURL: url, apnsURL: "https://127.0.0.1:1")
            configuration.sender.extraCAFile = file
            let worker = PushWorker(configuration: configuration, logger: quietLogger)
            let error = await #expect(throws: (any Error).self) { try await worker.run() }
            #expect(String(describing: error).contains(file))
            #expect(worker.heldCount == 0)
        }
    }

    @Test("a certificate or key file that cannot be read stops the worker with a message naming the file")
    func missingCertificateStopsTheWorker() async throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("pushq-no-such-key-\(getpid()).pem").path
        try await TestDatabase.with { url in
            var configuration = try workerConfiguration(databaseURL: url, apnsURL: "https://127.0.0.1:1")
            configuration.credentials[CredentialKey(.apns, WorkerConfiguration.defaultCredentialName)] =
                .apns(.certificate(APNsClientCertificate(file: missing, format: .pem(keyFile: nil), password: nil)))
            let worker = PushWorker(configuration: configuration, logger: quietLogger)
            let error = await #expect(throws: WorkerError.self) { try await worker.run() }
            #expect(error?.description.contains(missing) == true)
        }
    }

    /// a database whose gated migrations dropped what this release reads (a later release's, recorded in
    /// workers_know) stops the worker and pushq serve with a message naming both schemas; the floor of this
    /// release's own gated migrations does not
    @Test("a later release's gated schema stops the worker and serve, naming both schemas; this release's own gated floor does not")
    func laterReleasesGatedSchemaStopsTheWorker() async throws {
        try await TestDatabase.with { url in
            let c = try await PGConnection.connect(url, logger: quietLogger)
            // This release's gated parts (109 lane quiet hours, 113 frequency caps) need workers that know them: this one does.
            #expect(try await c.workerFloor() == 113, "113's gate: workers that count frequency caps")
            let later = Migration.latestVersion + 1
            try await c.query("INSERT INTO pushq.schema_migrations (version, name, workers_know) VALUES ($1, 'later_gated', $1)", [later])
            #expect(try await c.workerFloor() == later)
            await c.close()
            let configuration = try workerConfiguration(databaseURL: url, apnsURL: "https://127.0.0.1:1")
            let worker = PushWorker(configuration: configuration, logger: quietLogger)
            let error = await #expect(throws: WorkerError.self) { try await worker.run() }
            #expect(error?.code == .schema)
            #expect(error?.description.contains("less than schema \(later)") == true && error?.description.contains("knows schema \(Migration.latestVersion)") == true,
                    "\(String(describing: error))")
            var env = ProcessInfo.processInfo.environment
            env["PUSHQ_DATABASE_URL"] = url
            env["PUSHQ_HTTP_ADDR"] = "127.0.0.1:0"
            let errFile = NSTemporaryDirectory() + "serve-floor-\(UUID().uuidString).err"
            defer { unlink(errFile) }
            let serve = try ChildProcess(pushqBinary, ["serve"], environment: env, stdout: .null, stderr: .file(errFile))
            // It refuses before it listens; should it not, it is stopped rather than left running.
            let reaped = Task { await serve.wait() }
            let exited = try await LockWait.until(timeout: .seconds(60)) { serve.hasExited }
            if !exited { serve.kill(SIGKILL) }
            _ = await reaped.value
            let err = (try? String(contentsOfFile: errFile, encoding: .utf8)) ?? ""
            #expect(exited && err.contains("serve knows schema \(Migration.latestVersion)"), "\(err)")
        }
    }

    @Test("run() shuts down the sender it started when it throws (a database without the pushq schema)")
    func runShutsItsSenderDownWhenItThrows() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let configuration = try workerConfiguration(databaseURL: url, apnsURL: "https://127.0.0.1:1")
            let worker = PushWorker(configuration: configuration, logger: quietLogger)
            let error = await #expect(throws: WorkerError.self) { try await worker.run() }
            #expect(error?.code == .schema)
            let senders = worker.state.withLock { Array($0.senders.values) }
            #expect(senders.count == 1)
            for sender in senders {
                let headers = APNsHeaders(pushType: .alert, topic: Fixtures.topic, priority: 10, apnsID: "00000000-0000-4000-8000-000000000000")
                let r = PushRequest(tag: 1, deviceToken: Fixtures.token(1), payload: Array("{}".utf8), fields: .apns(headers))
                #expect(throws: PushTransportError.self) { try sender.submit([r]) }
            }
        }
    }

    @Test("cancelling the task running run() stops the worker like requestStop()", .timeLimit(.minutes(1)))
    func cancellingRunStopsTheWorker() async throws {
        try await withMock { _, apnsURL in
            try await TestDatabase.with { url in
                let worker = PushWorker(configuration: try workerConfiguration(databaseURL: url, apnsURL: apnsURL), logger: quietLogger)
                let task = Task { try await worker.run() }
                #expect(try await eventually { worker.state.withLock { !$0.senders.isEmpty } })
                task.cancel()
                try await task.value
                #expect(worker.stopRequested)
                let senders = worker.state.withLock { Array($0.senders.values) }
                for sender in senders {
                    let headers = APNsHeaders(pushType: .alert, topic: Fixtures.topic, priority: 10, apnsID: "00000000-0000-4000-8000-000000000000")
                    let r = PushRequest(tag: 1, deviceToken: Fixtures.token(1), payload: Array("{}".utf8), fields: .apns(headers))
                    #expect(throws: PushTransportError.self) { try sender.submit([r]) }
                }
            }
        }
    }
}

/// The wake-up between the worker's loops.
@Suite("Wakeup")
struct WakeupTests {
    @Test("a signal ends a long wait; a signal sent before the wait is kept for it", .timeLimit(.minutes(1)))
    func signalEndsTheWait() async {
        let wake = Wakeup()
        wake.signal()
        #expect(await wake.wait(timeout: .seconds(3600)), "returns at once, signaled: the signal was pending")
        let waiting = Task { await wake.wait(timeout: .seconds(3600)) }
        // Whether the task waits already or not yet, this signal ends its wait (it is kept).
        wake.signal()
        #expect(await waiting.value, "signaled")
    }

    @Test("cancelling the waiting task ends the wait: nothing is left sleeping behind it", .timeLimit(.minutes(1)))
    func cancellationEndsTheWait() async {
        let wake = Wakeup()
        let waiting = Task { await wake.wait(timeout: .seconds(3600)) }
        waiting.cancel()
        #expect(await waiting.value, "a cancelled wait is not one that ran out")
        // The cancelled wait took no signal: the next signal is kept for the next wait.
        wake.signal()
        await wake.wait(timeout: .seconds(3600))
    }

    @Test("a wait ends at its timeout without a signal")
    func timeoutEndsTheWait() async {
        let wake = Wakeup()
        let start = ContinuousClock.now
        #expect(await wake.wait(timeout: .milliseconds(50)) == false, "ran out: not signaled")
        #expect(ContinuousClock.now - start >= .milliseconds(50))
    }
}
