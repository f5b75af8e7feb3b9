import ChildProcess
import Foundation
import MockPush
import PushStore
import PushTestSupport
import Testing

/// `pushq serve` and `pushq worker` each under a role of its own (not the schema's owner), given
/// only what `pushq migrate --print-grants ROLE --for serve|worker` prints: the real processes,
/// over HTTP, against the mock. What the roles cannot do (DROP, TRUNCATE, ALTER) is
/// `RoleGrantsTests` (PushStoreTests); that the catalog covers the schema too.
@Suite("Least privilege: serve and the worker under their own roles")
struct LeastPrivilegeTests {
    func pushq(_ arguments: [String], _ url: String?, extra: [String: String] = [:]) async throws -> (ChildProcess.Termination, String, String) {
        var env = ProcessInfo.processInfo.environment
        env["PUSHQ_DATABASE_URL"] = url
        for (k, v) in extra { env[k] = v }
        let r = try await ChildProcess.run(pushqBinary, arguments, environment: env)
        return (r.termination, r.stdout, r.stderr)
    }

    /// One HTTP exchange through curl(1): the status, the response's head and its body.
    /// `body` is sent as JSON, `form` as a form.
    func http(_ method: String, _ url: String, headers: [String] = [], body: String? = nil, form: String? = nil) async throws -> (status: Int, head: String, body: String) {
        var arguments = ["-sS", "-i", "--max-time", "30", "-X", method]
        for header in headers { arguments += ["-H", header] }
        if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body] }
        if let form { arguments += ["-H", "Content-Type: application/x-www-form-urlencoded", "--data-binary", form] }
        let r = try await ChildProcess.run("/usr/bin/curl", arguments + [url])
        let parts = r.stdout.components(separatedBy: "\r\n\r\n")
        let head = parts.first ?? ""
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, head, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    @Test("pushq migrate --grant-serve and --grant-worker grant each role its catalog after migrating; an unknown role is named")
    func migrateGrants() async throws {
        try await TestRoles.with(["pushq_serve_g", "pushq_worker_g"]) { roles in
            try await TestDatabase.withConnection { db in
                let url = try await databaseURL(db)
                let (granted, out, error) = try await pushq(["migrate", "--grant-serve", roles[0], "--grant-worker", roles[1]], url)
                #expect(granted == .exit(0), "\(error)")
                #expect(out.contains("granted role \(roles[0]) what pushq serve needs") && out.contains("granted role \(roles[1]) what pushq worker needs"), "\(out)")
                let can = try await db.query("""
                    SELECT has_table_privilege($1, 'pushq.notifications', 'INSERT'), has_table_privilege($1, 'pushq.notifications', 'DELETE'),
                           has_table_privilege($2, 'pushq.notifications', 'DELETE'), has_table_privilege($2, 'pushq.api_keys', 'SELECT')
                    """, [roles[0], roles[1]])
                #expect((0..<4).map { can.string(0, $0) } == ["t", "f", "t", "f"])
                let (unknown, _, unknownError) = try await pushq(["migrate", "--grant-serve", "pushq_nobody_\(roles[0])"], url)
                #expect(unknown != .exit(0) && unknownError.contains("pushq_nobody_\(roles[0])") && unknownError.contains("42704"), "\(unknownError)")
            }
        }
    }

    @Test("serve and worker, each under a role given only --print-grants: API, dashboard, keys, sends, retry, invalidation, prune")
    func serveAndWorkerUnderOwnRoles() async throws {
        try await TestRoles.with(["pushq_serve_t", "pushq_worker_t"]) { roles in
            try await TestDatabase.withConnection { db in
                let ownerURL = try await databaseURL(db)
                let serveURL = TestRoles.url(ownerURL, user: roles[0])
                let workerURL = TestRoles.url(ownerURL, user: roles[1])

                // Without grants the serve role is refused, and says which privilege it lacks.
                let (refused, _, why) = try await pushq(["serve", "--http-addr", "127.0.0.1:0"], serveURL)
                #expect(refused != .exit(0) && why.contains("permission denied") && why.contains("--print-grants <role> --for serve"), "\(why)")

                // --print-grants needs no database; its statements are applied by the owner.
                for (use, role) in [("serve", roles[0]), ("worker", roles[1])] {
                    let (printed, sql, error) = try await pushq(["migrate", "--print-grants", role, "--for", use], nil)
                    #expect(printed == .exit(0), "\(error)")
                    #expect(sql.contains("GRANT USAGE ON SCHEMA pushq TO \"\(role)\";"), "\(sql)")
                    try await db.execute(sql)
                }
                let (noFor, _, noForError) = try await pushq(["migrate", "--print-grants", roles[0]], nil)
                #expect(noFor != .exit(0) && noForError.contains("--for serve or --for worker"), "\(noForError)")
                // Neither role owns anything of the schema, nor is a superuser.
                let owners = try await db.query("""
                    SELECT count(*) FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner
                     WHERE c.relnamespace = 'pushq'::regnamespace AND r.rolname = ANY ($1::text[])
                    """, [roles]).decode(Int.self, 0, 0)
                #expect(owners == 0)
                #expect(try await scalar(db, "SELECT count(*) FROM pg_roles WHERE rolname IN ('\(roles[0])', '\(roles[1])') AND NOT rolsuper") == 2)

                // Keys are made by the owner (`pushq api-key` writes pushq.api_keys, which serve only reads).
                let (_, adminOut, _) = try await pushq(["api-key", "create", "ops", "--scope", "admin"], ownerURL)
                let admin = adminOut.trimmingCharacters(in: .whitespacesAndNewlines)
                let bearer = "Authorization: Bearer \(admin)"

                try await withMock { mock, apnsURL in
                    let t = { (i: Int) in Fixtures.token(i, prefix: "e") }
                    mock.setRule(forToken: t(1), .always(.unregistered(at: 1_700_000_000_123)))
                    mock.setRule(forToken: t(2), MockTokenRule(sequence: [.error(.internalServerError)]))

                    // Failed and cancelled rows are pruned by the worker as soon as they end.
                    let workerLog = NSTemporaryDirectory() + "pushq-lp-worker-\(UUID().uuidString.prefix(8)).log"
                    defer { unlink(workerLog) }
                    let worker = try ChildProcess(pushqBinary, ["worker"],
                                                  environment: workerEnvironment(databaseURL: workerURL, apnsURL: apnsURL, workerID: "lp-worker",
                                                                                 extra: ["PUSHQ_RETAIN_FINAL_SECONDS": "0", "PUSHQ_LOG_LEVEL": "info"]),
                                                  stdout: .null, stderr: .file(workerLog))
                    let serveLog = NSTemporaryDirectory() + "pushq-lp-serve-\(UUID().uuidString.prefix(8)).log"
                    defer { unlink(serveLog) }
                    let (serve, port) = try await ServeCommandTests.startServe(serveURL, log: serveLog)
                    let base = "http://127.0.0.1:\(port)"

                    // The API: a device for a user, a send to that user, sends to tokens, a cancel.
                    let device = try await http("PUT", base + "/api/v1/devices", headers: [bearer],
                                                body: #"{"device_token":"\#(t(3))","user_ref":"ann","environment":"development"}"#)
                    #expect(device.status == 201, "\(device)")
                    let toUser = try await http("POST", base + "/api/v1/users/ann/notifications", headers: [bearer],
                                                body: #"{"payload":{"aps":{"alert":"to ann"}},"dedupe_key":"ann-1"}"#)
                    #expect(toUser.status == 201, "\(toUser)")
                    for i in [1, 2, 4] {
                        let sent = try await http("POST", base + "/api/v1/notifications", headers: [bearer],
                                                  body: #"{"device_token":"\#(t(i))","payload":{"aps":{"alert":"n\#(i)"}}}"#)
                        #expect(sent.status == 201, "\(sent)")
                    }
                    let later = try await http("POST", base + "/api/v1/notifications", headers: [bearer],
                                               body: #"{"device_token":"\#(t(5))","payload":{"aps":{"alert":"later"}},"scheduled_at":"2099-01-01T00:00:00Z"}"#)
                    #expect(later.status == 201, "\(later)")
                    let laterID = try #require((try JSONSerialization.jsonObject(with: Data(later.body.utf8)) as? [String: Any])?["id"] as? Int)
                    let cancelled = try await http("POST", base + "/api/v1/notifications/\(laterID)/cancel", headers: [bearer])
                    #expect(cancelled.status == 200 && cancelled.body.contains("cancelled"), "\(cancelled)")
                    #expect(try await http("GET", base + "/api/v1/status", headers: [bearer]).status == 200)

                    // The dashboard: a login (a session row), pages read through it, and an action (audited).
                    let login = try await http("POST", base + "/login", form: "key=\(admin)")
                    #expect(login.status == 303, "\(login.head)")
                    let cookie = try #require(login.head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") }?
                        .dropFirst("set-cookie:".count).split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) })
                    for page in ["/dashboard", "/dashboard/failures", "/dashboard/search?q=\(t(4))", "/dashboard/users?ref=ann"] {
                        let answer = try await http("GET", base + page, headers: ["Cookie: \(cookie)"])
                        #expect(answer.status == 200, "\(page): \(answer.status) \(answer.body.prefix(300))")
                    }
                    for (action, paused) in [("pause-lane", 1), ("resume-lane", 0)] {
                        let acted = try await http("POST", base + "/dashboard/actions", headers: [bearer], form: "action=\(action)&lane=bulk")
                        #expect(acted.status == 303, "\(action): \(acted.head) \(acted.body.prefix(300)); \((try? String(contentsOfFile: serveLog, encoding: .utf8)) ?? "")")
                        #expect(try await scalar(db, "SELECT count(*) FROM pushq.lanes WHERE name = 'bulk' AND paused") == paused, "\(action)")
                    }
                    for form in ["action=cancel-lane&lane=bulk", "action=lift-hold&credential=default&environment=development"] {
                        let acted = try await http("POST", base + "/dashboard/actions", headers: [bearer], form: form)
                        #expect(acted.status == 303, "\(form): \(acted.head) \(acted.body.prefix(300))")
                    }
                    #expect(try await scalar(db, "SELECT count(*) FROM pushq.audit_log WHERE action LIKE '%lane%'") == 3)
                    let removed = try await http("DELETE", base + "/api/v1/devices", headers: [bearer], body: #"{"device_token":"\#(t(6))"}"#)
                    #expect(removed.status == 404, "\(removed)")

                    // The worker: every row ends; the invalid token is recorded; the failed and the
                    // cancelled row are pruned (RETAIN_FINAL 0), the sent ones kept.
                    let done = try await eventually(timeout: .seconds(120)) {
                        let open = try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status <> 'sent'")
                        let all = try await scalar(db, "SELECT count(*) FROM pushq.notifications")
                        return open == 0 && all == 3
                    }
                    let counts = try await statusCounts(db)
                    #expect(done, "\(counts); worker: \((try? String(contentsOfFile: workerLog, encoding: .utf8)) ?? "")")
                    #expect(try await scalar(db, "SELECT attempts FROM pushq.notifications WHERE device_token = '\(t(2))'") == 2, "one retry")
                    #expect(try await scalar(db, "SELECT count(*) FROM pushq.devices WHERE device_token = '\(t(1))' AND invalid_reason = 'Unregistered'") == 1)
                    #expect(try await scalar(db, "SELECT COALESCE(sum(rows), 0)::int8 FROM pushq.outcomes WHERE status = 'failed'") == 1)

                    serve.kill(SIGTERM)
                    worker.kill(SIGTERM)
                    #expect(await serve.wait() == .exit(0))
                    #expect(await worker.wait() == .exit(0))
                    let logs = ((try? String(contentsOfFile: serveLog, encoding: .utf8)) ?? "") + ((try? String(contentsOfFile: workerLog, encoding: .utf8)) ?? "")
                    #expect(!logs.contains("permission denied") && !logs.contains("42501"), "\(logs)")
                    #expect(logs.contains("deleted final notifications past their retention"), "the worker's pruner ran")
                }
            }
        }
    }
}
