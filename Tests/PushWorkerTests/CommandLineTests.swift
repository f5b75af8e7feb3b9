import ChildProcess
import Foundation
import MockAPNs
import PushStore
import PushTestSupport
import PushWorker
import Testing

/// `pushq send` and `pushq status` against a running worker, as an operator uses them.
@Suite("pushq send and status", .serialized)
struct CommandLineTests {
    func pushq(_ arguments: [String], databaseURL: String) async throws -> (ChildProcess.Termination, String, String) {
        var env = ProcessInfo.processInfo.environment
        env["PUSHQ_DATABASE_URL"] = databaseURL
        return try await ChildProcess.run(pushqBinary, arguments, environment: env)
    }

    @Test("send --wait prints the final status, reason and timing; a refused row names its constraint; status shows the queue")
    func sendAndStatus() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                let gone = Fixtures.token(2, prefix: "5")
                mock.setRule(forToken: gone, .always(.unregistered(at: 1_700_000_000_000)))
                let url = try await databaseURL(db)
                try await withWorker(try workerConfiguration(databaseURL: url, apnsURL: apnsURL)) { _ in
                    let (ok, out, _) = try await pushq(["send", "--token", Fixtures.token(1, prefix: "5"), "--alert", "hello", "--wait"], databaseURL: url)
                    #expect(ok == .exit(0))
                    #expect(out.range(of: #"^notification \d+: sent \(HTTP 200\) after 1 attempt in \d+ ms\n$"#, options: .regularExpression) != nil, "\(out)")

                    let (failed, failedOut, _) = try await pushq(["send", "--token", gone, "--payload", #"{"aps":{"alert":"x"}}"#, "--wait"], databaseURL: url)
                    #expect(failed == .exit(1))
                    #expect(failedOut.contains(": failed Unregistered (HTTP 410) after 1 attempt"), "\(failedOut)")

                    let (refused, _, refusedErr) = try await pushq(["send", "--token", "not-hex", "--alert", "x"], databaseURL: url)
                    #expect(refused != .exit(0))
                    #expect(refusedErr.contains("notifications_device_token_hex"), "\(refusedErr)")
                    #expect(!refusedErr.contains("Usage:"), "a refused row is not a usage error")
                }
                let (status, out, _) = try await pushq(["status"], databaseURL: url)
                #expect(status == .exit(0))
                let lines = out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                #expect(lines.contains("sent      1"), "\(out)")
                #expect(lines.contains("failed    1"), "\(out)")
                #expect(lines.contains { $0.hasPrefix("failed") && $0.contains("Unregistered") && $0.hasSuffix("1") && $0 != "failed    1" }, "\(out)")
                #expect(lines.contains { $0.hasPrefix("Unregistered") && $0.hasSuffix("1") }, "invalid tokens: \(out)")
                #expect(lines.contains("paused credentials: none"), "\(out)")
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications") == 2, "the refused row was not inserted")
            }
        }
    }
}
