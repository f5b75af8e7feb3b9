import ChildProcess
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PushStore
import PushTestSupport
import Testing

/// The `pushq serve` and `pushq api-key` processes, as an operator runs them.
@Suite("pushq serve and pushq api-key")
struct ServeCommandTests {
    /// Starts `pushq serve` on 127.0.0.1:0 with `url` and `arguments`, waiting for the port it printed; its log goes
    /// to `log`.
    static func startServe(_ url: String, log: String, _ arguments: [String] = []) async throws -> (ChildProcess, Int) {
        var env = ProcessInfo.processInfo.environment
        env["PUSHQ_DATABASE_URL"] = url
        let process = try ChildProcess(pushqBinary, ["serve", "--http-addr", "127.0.0.1:0"] + arguments, environment: env,
                                       stdout: .null, stderr: .file(log))
        var port: Int?
        let deadline = ContinuousClock.now + .seconds(60)
        while port == nil, ContinuousClock.now < deadline, !process.hasExited {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let range = text.range(of: "http.address=127.0.0.1:") { port = Int(text[range.upperBound...].prefix { $0.isNumber }) }
            if port == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        return (process, try #require(port, "serve came up: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")"))
    }

    func pushq(_ arguments: [String], _ url: String, extra: [String: String] = [:]) async throws -> (ChildProcess.Termination, String, String) {
        var env = ProcessInfo.processInfo.environment
        env["PUSHQ_DATABASE_URL"] = url
        for (k, v) in extra { env[k] = v }
        let r = try await ChildProcess.run(pushqBinary, arguments, environment: env)
        return (r.termination, r.stdout, r.stderr)
    }

    /// api-key create prints the key once and stores its hash; a taken name and an unknown scope are refused;
    /// list shows name, scope and revocation; revoke ends it; create and revoke are in the audit log
    @Test("api-key create prints the key once and stores its hash; bad names and scopes refused; list, revoke; audited")
    func apiKeys() async throws {
        try await TestDatabase.withConnection { db in
            let url = try await databaseURL(db)
            let (created, key, note) = try await pushq(["api-key", "create", "ci-reader", "--scope", "read"], url)
            #expect(created == .exit(0), "\(note)")
            let printed = key.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(printed.hasPrefix("pq_") && printed.count == 46 && key.split(separator: "\n").count == 1, "\(key)")
            #expect(note.contains("not shown again") && !note.contains(printed))
            let stored = try await db.query("SELECT key_hash, scope FROM pushq.api_keys WHERE name = 'ci-reader'")
            #expect(stored.string(0, 0)?.count == 64 && stored.string(0, 0) != printed && stored.string(0, 1) == "read")

            let (taken, _, takenError) = try await pushq(["api-key", "create", "ci-reader", "--scope", "admin"], url)
            #expect(taken != .exit(0) && takenError.contains("name: a key of that name exists"), "\(takenError)")
            let (badScope, _, badScopeError) = try await pushq(["api-key", "create", "other", "--scope", "root"], url)
            #expect(badScope != .exit(0) && badScopeError.contains("read, enqueue, devices or admin"), "\(badScopeError)")
            let (badName, _, badNameError) = try await pushq(["api-key", "create", "has space", "--scope", "read"], url)
            #expect(badName != .exit(0) && badNameError.contains("api_keys_name_shape"), "\(badNameError)")

            let (_, listed, _) = try await pushq(["api-key", "list"], url)
            let line = try #require(listed.split(separator: "\n").first { $0.hasPrefix("ci-reader") })
            #expect(line.contains("read") && line.contains("never") && line.hasSuffix("-"), "\(line)")
            #expect(!listed.contains(printed))

            let (revoked, said, _) = try await pushq(["api-key", "revoke", "ci-reader"], url)
            #expect(revoked == .exit(0) && said.contains("revoked ci-reader"))
            let (_, after, _) = try await pushq(["api-key", "list"], url)
            #expect(after.split(separator: "\n").first { $0.hasPrefix("ci-reader") }?.hasSuffix("-") == false, "a revocation time: \(after)")
            let (missing, _, missingError) = try await pushq(["api-key", "revoke", "nobody"], url)
            #expect(missing != .exit(0) && missingError.contains("no key named nobody"))
            let audit = try await db.query("SELECT action, target, via FROM pushq.audit_log ORDER BY id")
            #expect((0..<audit.count).map { "\(audit.string($0, 0)!) \(audit.string($0, 1)!) \(audit.string($0, 2)!)" }
                    == ["api_key.create api_key ci-reader cli", "api_key.revoke api_key ci-reader cli"])
        }
    }

    /// serve refuses 0.0.0.0 without TLS before connecting to anything, and an older schema; on 127.0.0.1 it
    /// serves /healthz and the API with a created key, and exits 0 on SIGTERM
    @Test("serve refuses 0.0.0.0 without TLS and an older schema; on 127.0.0.1 it serves /healthz and the API; SIGTERM exits 0")
    func serve() async throws {
        let (refused, _, why) = try await pushq(["serve", "--http-addr", "0.0.0.0:0"], "postgresql://nobody@127.0.0.1:1/none")
        #expect(refused != .exit(0) && why.contains("PUSHQ_HTTP_TLS_TERMINATED_BY_PROXY"), "\(why)")
        try await TestDatabase.with(migrated: false) { url in
            let (old, _, oldError) = try await pushq(["serve", "--http-addr", "127.0.0.1:0"], url)
            #expect(old != .exit(0) && oldError.contains("pushq migrate"), "\(oldError)")
        }
        try await TestDatabase.withConnection { db in
            let url = try await databaseURL(db)
            let (_, key, _) = try await pushq(["api-key", "create", "ops", "--scope", "admin"], url)
            let log = NSTemporaryDirectory() + "pushq-serve-\(UUID().uuidString).log"
            defer { unlink(log) }
            let (process, listening) = try await Self.startServe(url, log: log)
            var health = URLRequest(url: URL(string: "http://127.0.0.1:\(listening)/healthz")!)
            health.timeoutInterval = 10
            let (body, _) = try await URLSession.shared.data(for: health)
            #expect(String(decoding: body, as: UTF8.self) == "ok\n")
            var status = URLRequest(url: URL(string: "http://127.0.0.1:\(listening)/api/v1/status")!)
            status.setValue("Bearer " + key.trimmingCharacters(in: .whitespacesAndNewlines), forHTTPHeaderField: "Authorization")
            let (json, response) = try await URLSession.shared.data(for: status)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect((try JSONSerialization.jsonObject(with: json) as? [String: Any])?["counts"] != nil)
            process.kill(SIGTERM)
            #expect(await process.wait() == .exit(0))
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            #expect(!text.contains(key.trimmingCharacters(in: .whitespacesAndNewlines)), "the key never reaches a log line")
        }
    }
}
