import ChildProcess
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PushTestSupport
import Testing

/// `make run` (`scripts/run-demo`) as a newcomer runs it: the demo ends with `pushq serve` left
/// running on its data, a read key printed for the dashboard, and a second run replaces the first
/// one's serve.
///
/// The demo runs with the binaries `swift test` built (`PUSHQ_DEMO_BIN`), a database of its own per
/// run and its state in a temporary directory (`PUSHQ_DEMO_DIR`). Its campaign keeps `make run`'s
/// 20 000 rows: the demo checks that a password reset overtakes most of it, which a debug worker
/// with ~1 000 rows in flight cannot show on a much smaller campaign.
@Suite("make run (scripts/run-demo)")
struct DemoTests {
    struct Run {
        var output: String
        var port: Int
        var key: String
        var pid: Int32
    }

    static func runDemo(_ arguments: [String] = [], database: String, directory: String, serveAddress: String) async throws
        -> (ChildProcess.Termination, String, String) {
        var env = ProcessInfo.processInfo.environment
        // The mock, not Apple: credentials of the caller's environment would send to Apple.
        for name in ["PUSHQ_APNS_KEY_FILE", "PUSHQ_APNS_CERT_FILE", "PUSHQ_APNS_URL", "PUSHQ_CREDENTIALS_FILE"] { env[name] = nil }
        env["PUSHQ_DATABASE_URL"] = database
        env["PUSHQ_DEMO_BIN"] = URL(fileURLWithPath: pushqBinary).deletingLastPathComponent().path
        env["PUSHQ_DEMO_DIR"] = directory
        env["PUSHQ_DEMO_SERVE_ADDR"] = serveAddress
        env["PUSHQ_DEMO_TIMEOUT"] = "180"   // a debug worker on a busy machine
        let script = repositoryRoot.appendingPathComponent("scripts/run-demo").path
        let result = try await ChildProcess.run(script, arguments, environment: env)
        return (result.termination, result.stdout, result.stderr)
    }

    /// Runs the demo to its end (its stdout closes although serve keeps running) and reads the
    /// dashboard's URL and key from the lines it printed.
    static func run(database: String, directory: String, serveAddress: String) async throws -> Run {
        let (termination, out, err) = try await runDemo(database: database, directory: directory, serveAddress: serveAddress)
        #expect(termination == .exit(0), "run-demo: \(out.suffix(2000))\n\(err.suffix(3000))")
        #expect(out.contains("every scenario ended as the contract says"))
        let lines = out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let dashboard = try #require(lines.first { $0.hasPrefix("dashboard: http://127.0.0.1:") }, "no dashboard line: \(out.suffix(1500))")
        let port = try #require(Int(dashboard.dropFirst("dashboard: http://127.0.0.1:".count).prefix { $0.isNumber }))
        #expect(dashboard == "dashboard: http://127.0.0.1:\(port)/dashboard")
        let key = String(try #require(lines.first { $0.hasPrefix("read key: pq_") }).dropFirst("read key: ".count))
        let pid = try #require(Int32(try String(contentsOfFile: directory + "/serve.pid", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        return Run(output: out, port: port, key: key, pid: pid)
    }

    static func get(_ port: Int, _ path: String, key: String? = nil) async throws -> (Int, String) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.timeoutInterval = 30
        if let key { request.setValue("Bearer " + key, forHTTPHeaderField: "Authorization") }
        let (body, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: body, as: UTF8.self))
    }

    @Test("make run ends with serve on the demo's data and a read key; a second run replaces that serve; stop ends it")
    func demoLeavesServeRunning() async throws {
        let directory = NSTemporaryDirectory() + "pushq-demo-\(UUID().uuidString)"
        defer {
            // Whatever failed above: no serve left behind, no fixtures' keys left in /tmp.
            _ = try? ChildProcess.runBlocking(repositoryRoot.appendingPathComponent("scripts/run-demo").path, ["stop"],
                                              environment: ["PUSHQ_DEMO_DIR": directory, "PATH": ProcessInfo.processInfo.environment["PATH"] ?? ""])
            try? FileManager.default.removeItem(atPath: directory)
            try? FileManager.default.removeItem(atPath: directory + "-fixtures")
        }
        let first = try await TestDatabase.with(migrated: false) { url in
            let run = try await Self.run(database: url, directory: directory, serveAddress: "127.0.0.1:0")
            // The dashboard's login page, and the API with the printed key: serve reads the demo's rows.
            let (loginStatus, login) = try await Self.get(run.port, "/login")
            #expect(loginStatus == 200 && login.contains("name=\"key\""), "\(loginStatus) \(login.prefix(300))")
            let (status, json) = try await Self.get(run.port, "/api/v1/status", key: run.key)
            #expect(status == 200, "\(json)")
            let counts = try #require((try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["counts"] as? [String: Any])
            #expect((counts["sent"] as? Int ?? 0) >= 20_000, "the demo's rows, its campaign included: \(counts)")
            #expect(try await Self.get(run.port, "/api/v1/status").0 == 401)
            // A read key: it may not change anything.
            var cancel = URLRequest(url: URL(string: "http://127.0.0.1:\(run.port)/api/v1/notifications/1/cancel")!)
            cancel.httpMethod = "POST"
            cancel.setValue("Bearer " + run.key, forHTTPHeaderField: "Authorization")
            let (_, cancelResponse) = try await URLSession.shared.data(for: cancel)
            #expect((cancelResponse as? HTTPURLResponse)?.statusCode == 403)
            return run
        }

        // The second run stops the first run's serve before it starts its own on the same port: had the
        // old one kept the port, the new serve could not listen there and the run would fail.
        try await TestDatabase.with(migrated: false) { url in
            let second = try await Self.run(database: url, directory: directory, serveAddress: "127.0.0.1:\(first.port)")
            #expect(second.output.contains("stopped the demo's pushq serve (pid \(first.pid))"))
            #expect(second.port == first.port && second.pid != first.pid && second.key != first.key)
            // The serve answering is the new one, on the second run's database: the first run's key is not there.
            #expect(try await Self.get(second.port, "/api/v1/status", key: second.key).0 == 200)
            #expect(try await Self.get(second.port, "/api/v1/status", key: first.key).0 == 401)

            let (stopped, out, err) = try await Self.runDemo(["stop"], database: url, directory: directory, serveAddress: "127.0.0.1:0")
            #expect(stopped == .exit(0), "\(out) \(err)")
            #expect(out.contains("stopped the demo's pushq serve (pid \(second.pid))"))
            // `stop` returns once the process is gone, so its port no longer accepts connections.
            await #expect(throws: (any Error).self) { _ = try await Self.get(second.port, "/healthz") }
        }
    }
}
