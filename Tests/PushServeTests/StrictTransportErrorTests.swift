import ChildProcess
import Foundation
import MockPush
import PushServe
import PushTestSupport
import Testing

/// HSTS on every HTTPS answer, the bare 500 of an unexpected error included (issue 45, item 5).
@Suite("Serve: HSTS on errors")
struct StrictTransportErrorTests {
    /// a request whose statement fails unexpectedly (a table of the status gone) is answered a bare 500 that
    /// still carries Strict-Transport-Security, and shows nothing of the error
    @Test("over HTTPS an unexpected error's bare 500 carries Strict-Transport-Security and nothing of the error")
    func bare500HasHSTS() async throws {
        let directory = NSTemporaryDirectory() + "pushq-serve-hsts-\(UUID().uuidString)"
        let fixtures = try MockPushFixtures.generate(into: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await ServeHarness.with({ $0.tls = (fixtures.serverCertificatePath, fixtures.serverKeyPath) }) { serve, db in
            // GET /api/v1/status reads pushq.due: gone, its statement fails with 42P01, an error no
            // route turns into an answer of its own.
            try await db.execute("ALTER TABLE pushq.due RENAME TO due_gone")
            let answer = try await ChildProcess.run("/usr/bin/curl", [
                "-sS", "-D", "-", "--cacert", fixtures.caCertificatePath, "-H", "Authorization: Bearer \(serve.keys["read"]!)",
                "https://127.0.0.1:\(serve.port)/api/v1/status",
            ])
            let text = answer.stdout.lowercased()
            #expect(text.hasPrefix("http/1.1 500"), "\(answer.stdout) \(answer.stderr)")
            #expect(text.contains("strict-transport-security: max-age=31536000"), "\(answer.stdout)")
            #expect(!text.contains("due") && !text.contains("42p01"), "nothing of the error is shown: \(answer.stdout)")
        }
    }
}
