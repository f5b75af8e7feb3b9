import ChildProcess
import Foundation
import PGClient
import PushStore
import PushTestSupport
import Testing

/// `pushq send --wait` that gives up says why the row is not final, as `pushq status` would: no worker
/// at all, or no live worker serving the row's credential (a typo in `--credential`), instead of asking
/// "is a worker running?" while one runs.
@Suite("pushq send --wait explains a row that is not final")
struct SendWaitTests {
    @Test("send --wait names a missing worker, then a credential no live worker serves")
    func namesWhyNotFinal() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { _, apnsURL in
                let url = try await databaseURL(db)
                var env = ProcessInfo.processInfo.environment
                env["PUSHQ_DATABASE_URL"] = url
                // The wait's length does not decide the outcome: no worker ever serves these rows.
                let send = { (token: String) in
                    try await ChildProcess.run(pushqBinary, ["send", "--credential", "secnod", "--token", token, "--alert", "hi",
                                                             "--wait", "--wait-timeout", "0.5"], environment: env)
                }
                let (alone, out1, err1) = try await send(Fixtures.token(1, prefix: "7"))
                #expect(alone == .exit(2), "\(out1)\(err1)")
                #expect(out1.contains("no worker is running"), "\(out1)")

                try await withWorker(try workerConfiguration(databaseURL: url, apnsURL: apnsURL)) { _ in
                    // The worker is live once it has registered its credentials.
                    #expect(try await eventually { try await !db.liveWorkers().isEmpty })
                    let (status, out, err) = try await send(Fixtures.token(2, prefix: "7"))
                    #expect(status == .exit(2), "\(out)\(err)")
                    #expect(out.contains("waiting for credential secnod, which no live worker serves"), "\(out)")
                    #expect(!out.contains("no worker is running"), "\(out)")
                }
            }
        }
    }
}
