import ChildProcess
import Foundation
import PGClient
import PushTestSupport
import Testing

/// examples/js/web (index.html, sw.js and the app's server.js) in a real headless Chromium
/// (`scripts/browser-steps`), against `pushq serve` on 127.0.0.1 and a real PostgreSQL, up to
/// the point where a real push service would be needed.
///
/// Chromium's own push service is FCM, reached through its GCM client; browser-steps lets no
/// host but 127.0.0.1 resolve, so that client never checks in and `PushManager.subscribe`
/// waits for it. The page's registration is then checked with a subscription handed to the
/// page in place of the browser's (a stand-in `subscribe`, injected by the test through the
/// DevTools protocol, never in the page).
@Suite("Web Push page in Chromium", .serialized)
struct WebPushPageTests {
    /// RFC 8291 Appendix A's receiver keys: a real P-256 point and a 16-byte auth secret.
    static let p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
    static let endpoint = "https://fcm.googleapis.com/fcm/send/cXyz:APA91bH-Example_Subscription-0123456789"

    /// Records each `PushManager.subscribe` call (its options, the key as base64url, how its
    /// promise settled) in `window.subscribeCalls`, then lets Chromium's own subscribe run.
    static let spy = """
        (() => {
          const original = PushManager.prototype.subscribe;
          const b64url = (key) => btoa(String.fromCharCode(...new Uint8Array(key.buffer ?? key)))
            .replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
          PushManager.prototype.subscribe = function (options) {
            const call = { userVisibleOnly: options.userVisibleOnly, applicationServerKey: b64url(options.applicationServerKey), settled: 'pending' };
            (window.subscribeCalls ??= []).push(call);
            const result = original.call(this, options);
            result.then(() => { call.settled = 'resolved'; }, (e) => { call.settled = 'rejected: ' + e.name + ': ' + e.message; });
            return result;
          };
        })();
        """

    /// A stand-in for the browser's push service: `subscribe` records its call as `spy` does and
    /// gives back a subscription shaped as Chromium's (`toJSON()`: endpoint, expirationTime, keys).
    static let standIn = """
        (() => {
          const b64url = (key) => btoa(String.fromCharCode(...new Uint8Array(key.buffer ?? key)))
            .replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
          PushManager.prototype.subscribe = function (options) {
            (window.subscribeCalls ??= []).push({ userVisibleOnly: options.userVisibleOnly, applicationServerKey: b64url(options.applicationServerKey) });
            const json = { endpoint: \(js(endpoint)), expirationTime: null, keys: { p256dh: \(js(p256dh)), auth: \(js(auth)) } };
            return Promise.resolve({ endpoint: json.endpoint, expirationTime: null, options, toJSON: () => json });
          };
        })();
        """

    /// the page loads from the app's origin, its service worker activates, and it calls
    /// PushManager.subscribe with the server's VAPID key (userVisibleOnly); Chromium, with no
    /// push service it can reach, keeps that call pending in its GCM client's first check-in,
    /// and the page says it is subscribing
    @Test("the page's service worker activates and it subscribes with the VAPID key; Chromium waits for its push service")
    func subscribesWithTheKey() async throws {
        let (printed, vapid) = try Self.vapidKey()
        #expect(printed == vapid, "pushq webpush-key prints the key's public point, base64url")
        try await ServeHarness.with { serve, _ in
            try await Self.withAppServer(serve: serve, publicKey: printed) { origin in
                let results = try await Browser.run([
                    .cdp("Browser.grantPermissions", ["origin": origin, "permissions": ["notifications"]]),
                    .cdp("Page.addScriptToEvaluateOnNewDocument", ["source": Self.spy]),
                    .navigate(origin + "/"),
                    .waitFor("document.getElementById('worker').textContent === 'activated' && !document.getElementById('subscribe').disabled"),
                    .eval("[location.origin, window.isSecureContext, navigator.serviceWorker.controller !== null].join(',')"),
                    .eval("document.getElementById('subscribe').click(); true"),
                    .waitFor("document.getElementById('state').textContent === 'subscribing' && (window.subscribeCalls ?? []).length === 1"),
                    .eval("JSON.stringify(window.subscribeCalls)"),
                    .eval("document.getElementById('log').textContent"),
                    // Where Chromium stands: its GCM client (the push service's) loads, then waits at its
                    // first device check-in, which needs Google's servers (the page is asked again each time).
                    .navigate("chrome://gcm-internals"),
                    .waitFor("(document.getElementById('refresh').click(), document.body.innerText.includes('GCM Client State\\tINITIAL_DEVICE_CHECKIN')) && document.body.innerText",
                             timeoutSeconds: 30),
                ])
                #expect(results[4] == "\(origin),true,true", "served from the app's origin, a secure context, controlled by sw.js")
                let calls = try JSONSerialization.jsonObject(with: Data((results[7] ?? "").utf8)) as? [[String: Any]]
                let call = try #require(calls?.first, "no PushManager.subscribe call: \(results[7] ?? "nil")")
                #expect(call["applicationServerKey"] as? String == vapid, "the key the server was given, as bytes")
                #expect(call["userVisibleOnly"] as? Bool == true)
                // The call was still pending when the page was left: Chromium neither refused nor answered.
                #expect(call["settled"] as? String == "pending")
                #expect(results[8]?.contains("subscribe failed") == false && results[8]?.contains("applicationServerKey: \(vapid)") == true,
                        "the page's log: \(results[8] ?? "nil")")
                let gcm = results[10] ?? ""
                #expect(gcm.contains("Android Id\t\n"), "never checked in, so no device id: \(gcm)")
                #expect(gcm.contains("Registered App Ids\t\n"), "nothing registered with the push service: \(gcm)")
            }
        }
    }

    /// given a subscription (a stand-in push service's, shaped as Chromium's), the page's button
    /// registers it through the app's server, which calls PUT /api/v1/devices with its own key:
    /// the endpoint and keys land in pushq.devices for the server's user, and the page says so
    @Test("given a subscription, the page registers it through the app's server: a pushq.devices row with its endpoint and keys")
    func registersTheSubscription() async throws {
        let (printed, vapid) = try Self.vapidKey()
        try await ServeHarness.with { serve, db in
            try await Self.withAppServer(serve: serve, publicKey: printed) { origin in
                let results = try await Browser.run([
                    .cdp("Browser.grantPermissions", ["origin": origin, "permissions": ["notifications"]]),
                    .cdp("Page.addScriptToEvaluateOnNewDocument", ["source": Self.standIn]),
                    .navigate(origin + "/"),
                    .waitFor("document.getElementById('worker').textContent === 'activated' && !document.getElementById('subscribe').disabled"),
                    .eval("document.getElementById('subscribe').click(); true"),
                    .waitFor("['registered', 'registration failed', 'subscribe failed'].includes(document.getElementById('state').textContent)"),
                    .eval("document.getElementById('state').textContent + ' | ' + document.getElementById('log').textContent"),
                    .eval("JSON.stringify(window.subscribeCalls)"),
                ])
                #expect(results[6]?.hasPrefix("registered | ") == true, "the page: \(results[6] ?? "nil")")
                #expect(results[7]?.contains(#""applicationServerKey":"\#(vapid)""#) == true, "subscribe's options: \(results[7] ?? "nil")")
                let rows = try await db.query("""
                    SELECT provider, device_token, webpush_keys->>'p256dh', webpush_keys->>'auth', user_ref FROM pushq.devices
                    """)
                #expect(rows.count == 1)
                #expect(rows.string(0, 0) == "webpush")
                #expect(rows.string(0, 1) == Self.endpoint, "the endpoint byte for byte")
                #expect(rows.string(0, 2) == Self.p256dh && rows.string(0, 3) == Self.auth)
                #expect(rows.string(0, 4) == "demo-user", "the user the app's server decided, not the page")
            }
        }
    }

    /// the service worker shows what a push service delivers (through DevTools, as Chromium's push
    /// service would, decrypted): a Declarative Web Push payload as its notification (title, body,
    /// navigate) and a plain {"title","body","url"} one
    @Test("the service worker shows a pushed Declarative Web Push message and a plain one as notifications")
    func showsPushedMessages() async throws {
        let (printed, _) = try Self.vapidKey()
        try await ServeHarness.with { serve, _ in
            try await Self.withAppServer(serve: serve, publicKey: printed) { origin in
                let declarative = #"{"web_push":8030,"notification":{"title":"Order 1042","body":"Your order has shipped","navigate":"https://shop.example.com/orders/1042"}}"#
                let plain = #"{"title":"Plain","body":"A plain message","url":"https://shop.example.com/inbox"}"#
                let results = try await Browser.run([
                    .cdp("Browser.grantPermissions", ["origin": origin, "permissions": ["notifications"]]),
                    .navigate(origin + "/"),
                    .waitFor("document.getElementById('worker').textContent === 'activated'"),
                    .push(declarative, scope: origin + "/"),
                    .push(plain, scope: origin + "/"),
                    // The page logs each one its service worker showed; then the shown ones are read.
                    // (Asking for them before they are shown made Chromium lose them now and then.)
                    .waitFor("(document.getElementById('log').textContent.match(/Push shown: /g) || []).length === 2"),
                    .eval("navigator.serviceWorker.ready.then(r => r.getNotifications()).then(n => JSON.stringify(n.map(x => [x.title, x.body, x.data.navigate]).sort()))"),
                ])
                #expect(results[6] == #"[["Order 1042","Your order has shipped","https://shop.example.com/orders/1042"],["Plain","A plain message","https://shop.example.com/inbox"]]"#,
                        "shown: \(results[6] ?? "nil")")
                #expect(results[3] != nil && results[3] == results[4], "both to the page's one registration: \(results[3] ?? "nil"), \(results[4] ?? "nil")")
            }
        }
    }

    // MARK: - Helpers

    /// A fresh P-256 VAPID key (made by `openssl`): `printed` is what `pushq webpush-key FILE`
    /// prints for it (the server is given that, as its README says), `derived` the base64url of
    /// its uncompressed public point taken from openssl's DER, independently of pushq.
    static func vapidKey() throws -> (printed: String, derived: String) {
        let dir = ProcessTemporaryDirectory.path(prefix: "pushq-webpush-page-") + "/" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let pem = dir + "/vapid.pem"
        let generated = try ChildProcess.runBlocking("/usr/bin/openssl", ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", pem])
        guard generated.termination == .exit(0) else { throw TestSetupError("openssl ecparam: \(generated.stderr)") }
        let der = dir + "/vapid.der"
        let exported = try ChildProcess.runBlocking("/usr/bin/openssl", ["ec", "-in", pem, "-pubout", "-outform", "DER", "-out", der])
        guard exported.termination == .exit(0) else { throw TestSetupError("openssl ec: \(exported.stderr)") }
        let point = try Data(contentsOf: URL(fileURLWithPath: der)).suffix(65)  // the SubjectPublicKeyInfo ends with the point
        guard point.first == 0x04 else { throw TestSetupError("openssl ec printed no uncompressed point") }
        let derived = point.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        // The `pushq` that `swift test` built beside the test bundle.
        let pushq = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pushq").path
        let printed = try ChildProcess.runBlocking(pushq, ["webpush-key", pem])
        guard printed.termination == .exit(0) else { throw TestSetupError("pushq webpush-key: \(printed.termination) \(printed.stderr)") }
        return (printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines), derived)
    }

    /// examples/js/web/server.js on a free port of 127.0.0.1 (a secure context for Chromium),
    /// with serve's `devices` key, for the duration of `body`, which gets its origin.
    static func withAppServer(serve: ServeHarness, publicKey: String, _ body: (String) async throws -> Void) async throws {
        let node = try #require(ExamplePrograms.onPath("node"), "node is not on PATH: run scripts/install-deps (Debian package nodejs)")
        var env = ProcessInfo.processInfo.environment
        env["VAPID_PUBLIC_KEY"] = publicKey
        env["PUSHQ_API_URL"] = "http://127.0.0.1:\(serve.port)"
        let devicesKey: String = try #require(serve.keys["devices"])
        env["PUSHQ_API_KEY"] = devicesKey
        env["HOST"] = "127.0.0.1"
        env["PORT"] = "0"
        let server = try ChildProcess(node, [repositoryRoot.appendingPathComponent("examples/js/web/server.js").path],
                                      environment: env, stdout: .pipe, stderr: .inherit)
        defer { server.kill(SIGKILL) }
        // Its first line once it accepts connections (nil if it exited: the test fails with that).
        let line = await Task.detached { server.readLine() }.value
        let origin = try #require(line.flatMap { $0.hasPrefix("listening on ") ? String($0.dropFirst(13)) : nil },
                                  "server.js did not start: \(line ?? "no output")")
        try await body(origin)
        server.kill(SIGTERM)
        #expect(await server.wait() == .exit(0), "server.js ended by SIGTERM")
    }

    static func js(_ text: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: [text]), as: UTF8.self).dropFirst().dropLast().description
    }
}

/// Programs on `PATH`.
enum ExamplePrograms {
    static func onPath(_ program: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(program)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
