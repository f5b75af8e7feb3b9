import ChildProcess
import Foundation
import MockPush
import PushTestSupport
import Testing

/// `pushq webpush-key` and `pushq worker` with the `PUSHQ_WEBPUSH_*` settings, as an operator runs them (issue 47):
/// the command prints the key its file holds and never replaces a file, and a subject push services refuse stops the
/// worker before it connects anywhere.
@Suite("pushq worker with Web Push")
struct WebPushWorkerProcessTests {
    /// A new temporary directory, removed by `cleanup`.
    static func directory() throws -> (path: String, cleanup: () -> Void) {
        let dir = NSTemporaryDirectory() + "pushq-webpush-process-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return (dir, { try? FileManager.default.removeItem(atPath: dir) })
    }

    @Test("webpush-key --generate prints the key the file holds; a second --generate to the same file is refused")
    func webpushKey() async throws {
        let dir = try Self.directory()
        defer { dir.cleanup() }
        let file = dir.path + "/vapid.pem"
        let made = try await ChildProcess.run(pushqBinary, ["webpush-key", "--generate", file])
        #expect(made.termination == .exit(0), "\(made.stderr)")
        let key = made.stdout.trimmingCharacters(in: .newlines)
        #expect(key.count == 87 && key.hasPrefix("B"), "\(made.stdout)")
        let printed = try await ChildProcess.run(pushqBinary, ["webpush-key", file])
        #expect(printed.termination == .exit(0) && printed.stdout == key + "\n")
        let again = try await ChildProcess.run(pushqBinary, ["webpush-key", "--generate", file])
        #expect(again.termination != .exit(0))
        #expect(again.stderr.contains("it exists already"), "\(again.stderr)")
        #expect(try await ChildProcess.run(pushqBinary, ["webpush-key", file]).stdout == key + "\n", "the file is left as it was")
    }

    /// The database URL points nowhere: the worker must stop on the subject before it tries to connect.
    @Test("a VAPID subject Apple refuses stops the worker at start, naming the variable, before it connects")
    func refusedSubject() async throws {
        let dir = try Self.directory()
        defer { dir.cleanup() }
        let file = dir.path + "/vapid.pem"
        #expect(try await ChildProcess.run(pushqBinary, ["webpush-key", "--generate", file]).termination == .exit(0))
        var env = ProcessInfo.processInfo.environment
        for name in env.keys where name.hasPrefix("PUSHQ_") { env[name] = nil }
        env["PUSHQ_DATABASE_URL"] = "postgresql://pushq@127.0.0.1:1/nowhere"
        env["PUSHQ_WEBPUSH_VAPID_KEY_FILE"] = file
        env["PUSHQ_WEBPUSH_VAPID_SUBJECT"] = "mailto:ops@pushq.local"
        let run = try await ChildProcess.run(pushqBinary, ["worker"], environment: env)
        #expect(run.termination == .exit(1), "\(run.stderr)")
        #expect(run.stderr.contains("PUSHQ_WEBPUSH_VAPID_SUBJECT 'mailto:ops@pushq.local'") && run.stderr.contains("403 BadJwtToken"), "\(run.stderr)")
        #expect(!run.stderr.contains("127.0.0.1:1"), "it stopped before connecting: \(run.stderr)")
        let pem = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")[1]
        #expect(!run.stderr.contains(pem), "the key never reaches the log")
    }

    /// The worker process reads every Web Push setting from its environment: the key and subject (the mock records the
    /// VAPID subject), the allowlist (the mock is on 127.0.0.1, refused otherwise), the CA (PUSHQ_CA_FILE's).
    @Test("a pushq worker process with the PUSHQ_WEBPUSH_* settings sends a Web Push row; the mock decrypts its payload")
    func sends() async throws {
        let dir = try Self.directory()
        defer { dir.cleanup() }
        let file = dir.path + "/vapid.pem"
        let made = try await ChildProcess.run(pushqBinary, ["webpush-key", "--generate", file])
        let key = made.stdout.trimmingCharacters(in: .newlines)
        try await TestDatabase.withConnection { db in
            try await withMock { mock, mockURL in
                let s = try mock.makeWebPushSubscription(MockWebPushSubscriptionOptions(applicationServerKey: key))
                let id = try await db.query("""
                    INSERT INTO pushq.notifications (provider, device_token, webpush_keys, payload)
                    VALUES ('webpush', $1, jsonb_build_object('p256dh', $2::text, 'auth', $3::text), '{"title":"From a process"}')
                    RETURNING id
                    """, [s.endpoint, s.keys.p256dh, s.keys.auth]).decode(Int64.self, 0, "id")
                let env = workerEnvironment(databaseURL: try await databaseURL(db), apnsURL: mockURL, workerID: "webpush-process", extra: [
                    "PUSHQ_WEBPUSH_VAPID_KEY_FILE": file, "PUSHQ_WEBPUSH_VAPID_SUBJECT": "mailto:ops@example.com",
                    "PUSHQ_WEBPUSH_ALLOWED_ORIGINS": mockURL,
                ])
                let log = dir.path + "/worker.log"
                let worker = try ChildProcess(pushqBinary, ["worker"], environment: env, stdout: .null, stderr: .file(log))
                let sent = try await eventually(timeout: .seconds(60)) {
                    try await db.query("SELECT status FROM pushq.notifications WHERE id = $1", [id]).string(0, 0) == "sent"
                }
                worker.kill(SIGTERM)
                #expect(await worker.wait() == .exit(0))
                #expect(sent, "\((try? String(contentsOfFile: log, encoding: .utf8))?.suffix(3000) ?? "")")
                let request = mock.webPushRequests().first { $0.endpoint == s.endpoint }
                #expect(request?.plaintextString == #"{"title":"From a process"}"#)
                #expect(request?.vapidSubject == "mailto:ops@example.com" && request?.vapidPublicKey == key)
            }
        }
    }
}
