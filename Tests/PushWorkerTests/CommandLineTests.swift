import ChildProcess
import Foundation
import MockPush
import PushCore
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

                    // While the worker runs: it is listed with its credentials; a row for a credential no
                    // live worker has is reported; a hold shows with its next probe.
                    try await db.query("INSERT INTO pushq.notifications (device_token, payload, credential) VALUES ($1, '{}', 'elsewhere')",
                                       [Fixtures.token(3, prefix: "5")])
                    try await db.query("""
                        INSERT INTO pushq.credential_pauses (credential, environment, kind, reason, message, paused_until)
                        VALUES ('elsewhere', 'production', 'outage', 'TransportConnectFailed', 'APNs is unreachable', now() + interval '40 seconds')
                        """)
                    // Another worker's FCM and Web Push credentials, each named by its service.
                    try await db.registerWorker(id: "other-worker", host: "h", pid: 1, version: "x", credentials: [
                        ServedCredential(name: "android", environment: "production", topic: nil, provider: .fcm),
                        ServedCredential(name: "default", environment: "production", topic: nil, provider: .webpush)])
                    let (_, live, _) = try await pushq(["status"], databaseURL: url)
                    try await db.query("DELETE FROM pushq.workers WHERE id = 'other-worker'")
                    let liveLines = live.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                    #expect(liveLines.contains { $0.hasPrefix("test-worker  pushq \(PushqVersion.current)") && $0.contains("credentials: default (\(Fixtures.topic))") }, "\(live)")
                    #expect(liveLines.contains { $0.hasPrefix("other-worker") && $0.hasSuffix("credentials: android (FCM), default (Web Push)") }, "\(live)")
                    #expect(liveLines.contains { $0.hasPrefix("elsewhere") && $0.contains("1 (they expire at their expires_at") }, "\(live)")
                    #expect(liveLines.contains("endpoints down"), "\(live)")
                    #expect(liveLines.contains { $0.hasPrefix("elsewhere (production): TransportConnectFailed, next probe in") && $0.hasSuffix("APNs is unreachable") }, "\(live)")
                    try await db.query("DELETE FROM pushq.notifications WHERE credential = 'elsewhere'")
                    try await db.query("DELETE FROM pushq.credential_pauses")
                }
                let (status, out, _) = try await pushq(["status"], databaseURL: url)
                #expect(status == .exit(0))
                let lines = out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                #expect(lines.contains("sent      1"), "\(out)")
                #expect(lines.contains("failed    1"), "\(out)")
                #expect(lines.contains { $0.hasPrefix("failed") && $0.contains("Unregistered") && $0.hasSuffix("1") && $0 != "failed    1" }, "\(out)")
                #expect(lines.contains { $0.hasPrefix("Unregistered") && $0.hasSuffix("1") }, "invalid tokens: \(out)")
                #expect(lines.contains("paused credentials: none"), "\(out)")
                #expect(lines.contains("endpoints down: none"), "\(out)")
                #expect(lines.contains("live workers: none"), "a stopped worker is gone: \(out)")
                #expect(lines.contains("waiting for a credential no live worker serves: none"), "\(out)")
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications") == 2, "the refused row was not inserted")
            }
        }
    }

    /// every credential is loaded and checked at start: a bad key or certificate stops the worker naming the
    /// credential and the file
    @Test("every credential is checked at start: a bad key or certificate stops the worker naming the credential and the file")
    func badCredentialsStopTheWorker() async throws {
        let dir = NSTemporaryDirectory() + "pushq-credentials-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try "not a key".write(toFile: dir + "/broken.p8", atomically: true, encoding: .utf8)
        let cases: [(String, String, [String])] = [
            ("token key", #"{"appb": {"team_id": "TESTTEAM01", "key_id": "TESTKEY123", "key_file": "\#(dir)/broken.p8"}}"#, ["appb", "broken.p8"]),
            ("missing key file", #"{"appc": {"team_id": "TESTTEAM01", "key_id": "TESTKEY123", "key_file": "\#(dir)/missing.p8"}}"#, ["appc", "missing.p8"]),
            ("certificate password", #"{"appd": {"cert_file": "\#(Fixtures.directory)/client.p12", "cert_password": "hunter2-secret"}}"#, ["appd", "client.p12"]),
            ("topic", #"{"appe": {"team_id": "TESTTEAM01", "key_id": "TESTKEY123", "key_file": "\#(Fixtures.tokenKey)", "topic": "com.example bad"}}"#, ["appe", "topic"]),
        ]
        for (name, json, mentions) in cases {
            let file = dir + "/credentials-\(name.replacingOccurrences(of: " ", with: "-")).json"
            try json.write(toFile: file, atomically: true, encoding: .utf8)
            var env = workerEnvironment(databaseURL: "postgresql://127.0.0.1:1/unused", apnsURL: "https://127.0.0.1:1", workerID: "w")
            env["PUSHQ_CREDENTIALS_FILE"] = file
            let (termination, _, err) = try await ChildProcess.run(pushqBinary, ["worker"], environment: env)
            #expect(termination != .exit(0), "\(name)")
            for word in mentions { #expect(err.contains(word), "\(name): \(err)") }
            #expect(!err.contains("hunter2-secret"), "no password in the message: \(err)")
        }
    }
}
