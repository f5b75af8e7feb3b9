import ChildProcess
import Foundation
import MockPush
import PushStore
import PushTestSupport
import Testing

/// The producers in `examples/`, each run as a user would run it, against a `pushq worker`
/// process and the TLS mock: the row it enqueued must be sent, and the mock must have received
/// exactly that payload for that token. A runtime that is missing fails the test
/// (`scripts/install-deps` installs every one).
@Suite("Producer examples", .serialized)
struct ExamplesTests {
    /// One example: how to run it, whether it waits for the outcome itself.
    struct Example: Sendable, CustomTestStringConvertible {
        /// Its `metadata->>'example'`, and the folder under `examples/`.
        var name: String
        /// The program found on `PATH`, and its arguments for a device token (psql takes the
        /// database URL as an argument, `psql "$PUSHQ_DATABASE_URL"`; the others read the variable).
        var program: String
        var arguments: @Sendable (_ token: String, _ databaseURL: String) -> [String]
        /// Extra environment (Go's build mode).
        var environment: [String: String] = [:]
        /// A library the program needs that is not on `PATH`: the test fails naming it when missing.
        var requiredFile: String?
        /// It waits for the final status and prints it, exiting 0 only when sent.
        var waits = true
        /// It enqueues with a dedupe key twice (the second makes nothing) and waits for the
        /// row's completion signal, which it prints.
        var listens = false

        var testDescription: String { name }

        static func file(_ path: String) -> String { repositoryRoot.appendingPathComponent("examples/" + path).path }
        /// `NODE_PATH` for examples/js: Debian's node-pg unpacked by scripts/install-deps.
        static let nodeModules = repositoryRoot.appendingPathComponent(".pushq/node_modules").path

        static let all: [Example] = [
            Example(name: "sql", program: "psql",
                    arguments: { [$1, "-X", "-v", "ON_ERROR_STOP=1", "-v", "token=\($0)", "-f", file("sql/enqueue.sql")] },
                    waits: false),
            Example(name: "python", program: "python3", arguments: { token, _ in [file("python/enqueue.py"), token] }),
            Example(name: "ruby", program: "ruby", arguments: { token, _ in [file("ruby/enqueue.rb"), token] }),
            // Debian's golang-github-lib-pq-dev puts lib/pq under /usr/share/gocode: GOPATH mode,
            // offline. With the module proxy, `go mod tidy && go run .` in examples/go does the same.
            Example(name: "go", program: "go", arguments: { token, _ in ["run", file("go/enqueue.go"), token] },
                    environment: ["GO111MODULE": "off", "GOPATH": "/usr/share/gocode", "GOFLAGS": ""]),
            // Debian's node-pg, unpacked by scripts/install-deps into .pushq/node_modules (examples/js/README.md).
            Example(name: "js", program: "node", arguments: { token, _ in [file("js/enqueue.js"), token] },
                    environment: ["NODE_PATH": nodeModules], requiredFile: nodeModules + "/pg/package.json"),
            Example(name: "python-listen", program: "python3", arguments: { token, _ in [file("python/listen.py"), token] }, listens: true),
            // The Swift script runs as `swift` runs a script: libpq through pushq's own module map.
            Example(name: "swift-listen", program: "swift",
                    arguments: { token, _ in ["-I", repositoryRoot.appendingPathComponent("Sources/CLibPQ").path] + libpqIncludes
                                             + [file("swift/listen.swift"), token] },
                    listens: true),
        ]

        /// `pkg-config --cflags-only-I libpq`, split: where libpq-fe.h is (Debian: /usr/include/postgresql).
        static let libpqIncludes: [String] = {
            guard let pkgConfig = onPath("pkg-config"),
                  let result = try? ChildProcess.runBlocking(pkgConfig, ["--cflags-only-I", "libpq"]), result.termination == .exit(0)
            else { return [] }
            return result.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
        }()
    }

    /// `url` asking for no TLS: a URL gets `sslmode=disable` as a query parameter, a conninfo string a keyword.
    static func withoutTLS(_ url: String) -> String {
        guard url.hasPrefix("postgres") && url.contains("://") else { return url + " sslmode=disable" }
        return url + (url.contains("?") ? "&" : "?") + "sslmode=disable"
    }

    /// `program`'s path on `PATH`, or nil.
    static func onPath(_ program: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(program)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test("each example enqueues a notification that a pushq worker sends, byte for byte", arguments: Example.all)
    func exampleIsSent(_ example: Example) async throws {
        let executable = try #require(Self.onPath(example.program),
                                      "\(example.program) is not on PATH: run scripts/install-deps")
        if let needed = example.requiredFile {
            try #require(FileManager.default.fileExists(atPath: needed), "\(needed) is missing: run scripts/install-deps")
        }
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                // The test cluster has no TLS; lib/pq would otherwise ask for it.
                let url = Self.withoutTLS(try await databaseURL(db))
                let log = NSTemporaryDirectory() + "pushq-example-\(example.name)-\(getpid()).log"
                defer { unlink(log) }
                // Patient: with the harness's 3 s request timeout, a busy machine that holds the
                // mock's answer longer makes the worker send again (at least once, as README says),
                // and the mock would count two requests for the token.
                let patient = ["PUSHQ_APNS_REQUEST_TIMEOUT": "30", "PUSHQ_LEASE_SECONDS": "60"]
                let worker = try ChildProcess(pushqBinary, ["worker"],
                                              environment: workerEnvironment(databaseURL: url, apnsURL: apnsURL,
                                                                             workerID: "example-\(example.name)", extra: patient),
                                              stdout: .null, stderr: .file(log))
                defer { worker.kill(SIGKILL) }  // a no-op once it has stopped below; else it must not outlive the test
                let token = Fixtures.token(Example.all.firstIndex { $0.name == example.name }! + 1, prefix: "e")

                var env = ProcessInfo.processInfo.environment
                env["PUSHQ_DATABASE_URL"] = url
                for (k, v) in example.environment { env[k] = v }
                let (termination, out, err) = try await ChildProcess.run(executable, example.arguments(token, url), environment: env)

                let workerLog = { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
                #expect(termination == .exit(0), "\(example.name): \(termination)\n\(out)\(err)\nworker:\n\(workerLog())")
                if example.waits {
                    #expect(out.contains(": sent (HTTP 200)"), "\(example.name) printed: \(out)\(err)")
                }
                if example.listens {
                    #expect(out.contains("retried INSERT: nothing enqueued"), "\(example.name) printed: \(out)\(err)")
                    // It listened before it inserted: the outcome came as the row's signal.
                    #expect(out.contains("signal on order_events: {\"id\" : ") && out.contains("\"status\" : \"sent\"")
                            && out.contains("\"dedupe_key\" : \"order-1042-shipped:\(token.prefix(16))\""), "\(example.name) printed: \(out)\(err)")
                }
                let final = try await eventually(timeout: .seconds(60)) {
                    try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status IN ('queued', 'sending', 'retrying')") == 0
                }
                worker.kill(SIGTERM)
                #expect(await worker.wait() == .exit(0), "worker:\n\(workerLog())")
                #expect(final, "the example's row never became final")

                let row = try await db.query("""
                    SELECT status, last_status, device_token, payload::text, metadata->>'example' FROM pushq.notifications
                    """)
                #expect(row.count == 1)
                #expect(row.string(0, 0) == "sent" && row.string(0, 1) == "200", "\(row.string(0, 0) ?? "none") \(row.string(0, 1) ?? "")")
                #expect(row.string(0, 2) == token)
                #expect(row.string(0, 4) == example.name)

                let received = mock.requests().filter { $0.deviceToken == token }
                #expect(received.count == 1, "requests for the example's token: \(received.count)")
                let body = try #require(received.first?.body)
                #expect(String(decoding: body, as: UTF8.self) == row.string(0, 3), "the payload went out byte for byte")
                let json = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
                let alert = (json?["aps"] as? [String: Any])?["alert"] as? [String: Any]
                #expect(alert?["title"] as? String == "Order 1042")
            }
        }
    }

    /// examples/js given a browser's subscription (the mock's, in the form of `PushSubscription.toJSON()`,
    /// restricted to the worker's VAPID key as a browser's is): its Web Push row beside its APNs row, in one
    /// transaction; a `pushq worker` with the `PUSHQ_WEBPUSH_*` settings sends both, and the mock decrypts
    /// the Web Push message to the row's payload byte for byte, with the row's Topic and Urgency.
    @Test("the js example with a browser's subscription enqueues a Web Push row beside its APNs row; both are sent")
    func jsWebPush() async throws {
        let example = try #require(Example.all.first { $0.name == "js" })
        let node = try #require(Self.onPath(example.program), "node is not on PATH: run scripts/install-deps")
        try #require(FileManager.default.fileExists(atPath: Example.nodeModules + "/pg/package.json"),
                     "\(Example.nodeModules)/pg is missing: run scripts/install-deps")
        let dir = ProcessTemporaryDirectory.path(prefix: "pushq-example-js-") + "/" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let vapid = dir + "/vapid.pem"
        let made = try await ChildProcess.run(pushqBinary, ["webpush-key", "--generate", vapid])
        #expect(made.termination == .exit(0), "pushq webpush-key: \(made.stderr)")
        let applicationServerKey = made.stdout.trimmingCharacters(in: .newlines)
        try await TestDatabase.withConnection { db in
            try await withMock { mock, mockURL in
                let subscription = try mock.makeWebPushSubscription(MockWebPushSubscriptionOptions(applicationServerKey: applicationServerKey))
                let subscriptionFile = dir + "/subscription.json"
                try subscription.toJSON().write(toFile: subscriptionFile, atomically: true, encoding: .utf8)
                let url = Self.withoutTLS(try await databaseURL(db))
                let log = dir + "/worker.log"
                // Patient, as in exampleIsSent; the mock is on 127.0.0.1, so its origin is allowlisted.
                let worker = try ChildProcess(pushqBinary, ["worker"], environment: workerEnvironment(
                    databaseURL: url, apnsURL: mockURL, workerID: "example-js-webpush", extra: [
                        "PUSHQ_APNS_REQUEST_TIMEOUT": "30", "PUSHQ_LEASE_SECONDS": "60",
                        "PUSHQ_WEBPUSH_VAPID_KEY_FILE": vapid, "PUSHQ_WEBPUSH_VAPID_SUBJECT": "mailto:ops@example.com",
                        "PUSHQ_WEBPUSH_ALLOWED_ORIGINS": mockURL,
                    ]), stdout: .null, stderr: .file(log))
                defer { worker.kill(SIGKILL) }  // a no-op once it has stopped below
                let token = Fixtures.token(200, prefix: "e")
                var env = ProcessInfo.processInfo.environment
                env["PUSHQ_DATABASE_URL"] = url
                for (k, v) in example.environment { env[k] = v }
                let (termination, out, err) = try await ChildProcess.run(node, [Example.file("js/enqueue.js"), token, subscriptionFile], environment: env)
                let workerLog = { (try? String(contentsOfFile: log, encoding: .utf8))?.suffix(3000) ?? "" }
                #expect(termination == .exit(0), "js: \(termination)\n\(out)\(err)\nworker:\n\(workerLog())")
                #expect(out.contains(": sent (HTTP 200)") && out.contains(": sent (HTTP 201)"), "js printed: \(out)\(err)")
                worker.kill(SIGTERM)
                #expect(await worker.wait() == .exit(0), "worker:\n\(workerLog())")

                let rows = try await db.query("""
                    SELECT provider, status, last_status, device_token, payload::text, created_at = (SELECT min(created_at) FROM pushq.notifications)
                      FROM pushq.notifications ORDER BY id
                    """)
                #expect(rows.count == 2)
                #expect(rows.string(0, 0) == "apns" && rows.string(0, 1) == "sent" && rows.string(0, 3) == token)
                #expect(rows.string(1, 0) == "webpush" && rows.string(1, 1) == "sent" && rows.string(1, 2) == "201")
                #expect(rows.string(1, 3) == subscription.endpoint, "the endpoint byte for byte")
                #expect(rows.string(1, 5) == "t", "both rows from one transaction: created_at is its now()")
                #expect(mock.requests().filter { $0.deviceToken == token }.count == 1)
                let received = mock.webPushRequests().filter { $0.endpoint == subscription.endpoint }
                #expect(received.count == 1, "Web Push requests for the subscription: \(received.count)")
                #expect(received.first?.plaintextString == rows.string(1, 4), "decrypted to the row's payload byte for byte")
                #expect(received.first?.topic == "order-1042" && received.first?.urgency == "high")
                #expect(received.first?.vapidPublicKey == applicationServerKey)
            }
        }
    }

    @Test("a listener whose connection is cut listens again and reads the outcome of the row that ended while it was away",
          arguments: Example.all.filter(\.listens))
    func listenerCatchesUp(_ example: Example) async throws {
        let executable = try #require(Self.onPath(example.program), "\(example.program) is not on PATH: run scripts/install-deps")
        try await TestDatabase.withConnection { db in
            let url = Self.withoutTLS(try await databaseURL(db))
            let token = Fixtures.token(100 + (Example.all.firstIndex { $0.name == example.name } ?? 0), prefix: "e")
            var env = ProcessInfo.processInfo.environment
            env["PUSHQ_DATABASE_URL"] = url
            // No worker: the row waits until this test ends it, while the listener is cut off.
            async let run = ChildProcess.run(executable, example.arguments(token, url), environment: env)
            var listener: Int?
            let waiting = try await eventually(timeout: .seconds(120)) {
                listener = try await db.query("""
                    SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN order_events' AND state = 'idle'
                    """).decode(Int.self, 0, 0)
                let enqueued = try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE dedupe_key LIKE 'order-1042-shipped:%'")
                return listener != nil && enqueued == 1
            }
            if waiting {
                try await db.query("SELECT pg_terminate_backend($1)", [listener])
                // Ended while the listener is away (it waits 1 s before it connects again): its signal is lost.
                try await db.query("UPDATE pushq.notifications SET status = 'sent', last_status = 200, sent_at = now(), finished_at = now()")
            }
            let (termination, out, err) = try await run
            #expect(waiting, "\(example.name) never listened with its row enqueued: \(out)\(err)")
            #expect(termination == .exit(0), "\(example.name): \(termination)\n\(out)\(err)")
            #expect(err.contains("reconnecting"), "\(example.name) printed: \(out)\(err)")
            #expect(out.contains(": sent (HTTP 200)"), "\(example.name) printed: \(out)\(err)")
        }
    }
}
