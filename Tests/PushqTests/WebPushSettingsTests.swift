import Foundation
import PushCore
import PushTransport
import PushStore
import PushWorker
@testable import pushq
import Testing

/// Web Push's settings (issue 47): the `default` credential from `PUSHQ_WEBPUSH_VAPID_KEY_FILE` and
/// `PUSHQ_WEBPUSH_VAPID_SUBJECT`, named ones from the credentials file, and the sender's
/// configuration; each bad value stops the worker naming its setting.
@Suite("Web Push settings")
struct WebPushSettingsTests {
    static let database = ["PUSHQ_DATABASE_URL": "postgresql://127.0.0.1:1/pushq"]

    func settings(_ environment: [String: String], flags: [SettingKey: String?] = [:]) -> Settings {
        Settings(environment: Self.database.merging(environment) { $1 }, flags: flags)
    }

    /// The error `body` throws, as text.
    func failure(_ body: () throws -> Void) -> String {
        do { try body() } catch { return "\(error)" }
        return "no error"
    }

    @Test("a key file and a subject give the Web Push default credential, beside APNs' and FCM's")
    func defaultCredential() throws {
        let key = try VAPIDFixture.file(VAPIDFixture.pkcs8)
        defer { key.cleanup() }
        let resolved = try settings(["PUSHQ_WEBPUSH_VAPID_KEY_FILE": key.path,
                                     "PUSHQ_WEBPUSH_VAPID_SUBJECT": "mailto:push@example.com"]).credentials()
        guard case .webpush(let credential)? = resolved.credentials[CredentialKey(.webpush, "default")] else {
            Issue.record("no Web Push default credential: \(resolved.credentials.keys)")
            return
        }
        #expect(credential.key.applicationServerKey == VAPIDFixture.applicationServerKey)
        #expect(credential.subject.text == "mailto:push@example.com")
        #expect(resolved.credentials.keys.map(\.provider) == [.webpush])
        let c = try settings([:]).workerConfiguration(credentials: resolved, defaultWorkerID: { "h:1" })
        #expect(c.webPushCredential("default")?.subject.text == "mailto:push@example.com")
        #expect(c.credentialNames(.webpush) == ["default"] && c.endpoints == [.webPush("default", origin: nil)])
        try c.validate()
    }

    @Test("the flags override the variables and name themselves in errors")
    func flags() throws {
        let key = try VAPIDFixture.file(VAPIDFixture.sec1)
        defer { key.cleanup() }
        let s = settings(["PUSHQ_WEBPUSH_VAPID_KEY_FILE": "/absent.pem", "PUSHQ_WEBPUSH_VAPID_SUBJECT": "mailto:a@example.com"],
                         flags: [.webPushVAPIDKeyFile: key.path, .webPushVAPIDSubject: "https://example.com/contact"])
        let credential = try #require(try s.defaultWebPushCredential())
        #expect(credential.subject.text == "https://example.com/contact")
        let bad = settings([:], flags: [.webPushVAPIDKeyFile: key.path, .webPushVAPIDSubject: "mailto:push@printer.local"])
        let message = failure { _ = try bad.defaultWebPushCredential() }
        #expect(message.contains("--webpush-vapid-subject 'mailto:push@printer.local'") && message.contains("403 BadJwtToken"), "\(message)")
    }

    /// Apple answers 403 BadJwtToken to such subjects: refused at start with PushCore's VAPIDSubject message.
    @Test("a subject push services refuse stops the worker naming the variable", arguments: [
        ("mailto:push@localhost", "localhost is not a public domain"), ("mailto:me@box.local", ".local is a special-use domain"),
        ("https://127.0.0.1/", "an IP address"), ("push@example.com", "neither a mailto: nor an https: URI"),
        ("http://example.com", "neither a mailto: nor an https: URI"),
    ])
    func refusedSubject(subject: String, why: String) throws {
        let key = try VAPIDFixture.file(VAPIDFixture.pkcs8)
        defer { key.cleanup() }
        let message = failure { _ = try settings(["PUSHQ_WEBPUSH_VAPID_KEY_FILE": key.path, "PUSHQ_WEBPUSH_VAPID_SUBJECT": subject]).credentials() }
        #expect(message.contains("PUSHQ_WEBPUSH_VAPID_SUBJECT") && message.contains(why), "\(message)")
    }

    @Test("a key without a subject, or a subject without a key, is an error naming both settings")
    func onlyOne() throws {
        let key = try VAPIDFixture.file(VAPIDFixture.pkcs8)
        defer { key.cleanup() }
        let noSubject = failure { _ = try settings(["PUSHQ_WEBPUSH_VAPID_KEY_FILE": key.path]).credentials() }
        #expect(noSubject.hasPrefix("PUSHQ_WEBPUSH_VAPID_KEY_FILE=\(key.path): expected PUSHQ_WEBPUSH_VAPID_SUBJECT too"), "\(noSubject)")
        let noKey = failure { _ = try settings(["PUSHQ_WEBPUSH_VAPID_SUBJECT": "mailto:a@example.com"]).credentials() }
        #expect(noKey.hasPrefix("PUSHQ_WEBPUSH_VAPID_SUBJECT=mailto:a@example.com: expected PUSHQ_WEBPUSH_VAPID_KEY_FILE too"), "\(noKey)")
    }

    /// Not a key, and a file that is absent: the message names the variable and the file, never the file's bytes.
    @Test("a key file that cannot be used is refused, naming the variable and the file, never its content")
    func badKeyFile() throws {
        let text = try VAPIDFixture.file("SECRET-BYTES, not a key\n")
        defer { text.cleanup() }
        for path in [text.path, text.path + ".absent"] {
            let message = failure {
                _ = try settings(["PUSHQ_WEBPUSH_VAPID_KEY_FILE": path, "PUSHQ_WEBPUSH_VAPID_SUBJECT": "mailto:a@example.com"]).credentials()
            }
            #expect(message.hasPrefix("PUSHQ_WEBPUSH_VAPID_KEY_FILE: ") && message.contains(path), "\(message)")
            #expect(!message.contains("SECRET-BYTES"))
        }
    }

    @Test("the credentials file's webpush entries are loaded and checked; a bad subject names vapid_subject and the credential")
    func credentialsFile() throws {
        let key = try VAPIDFixture.file(VAPIDFixture.pkcs8)
        defer { key.cleanup() }
        let good = try VAPIDFixture.file(#"{"web": {"type": "webpush", "vapid_key_file": "\#(key.path)", "vapid_subject": "mailto:a@example.com", "max_per_second": 50}}"#,
                                         name: "creds.json")
        defer { good.cleanup() }
        let resolved = try settings(["PUSHQ_CREDENTIALS_FILE": good.path]).credentials()
        guard case .webpush(let credential)? = resolved.credentials[CredentialKey(.webpush, "web")] else {
            Issue.record("no Web Push credential web: \(resolved.credentials.keys)")
            return
        }
        #expect(credential.key.applicationServerKey == VAPIDFixture.applicationServerKey)
        #expect(resolved.caps == [RateBudget(provider: .webpush, credential: "web", perSecond: 50)])

        let bad = try VAPIDFixture.file(#"{"web": {"type": "webpush", "vapid_key_file": "\#(key.path)", "vapid_subject": "mailto:a@test.local"}}"#,
                                        name: "creds.json")
        defer { bad.cleanup() }
        let message = failure { _ = try settings(["PUSHQ_CREDENTIALS_FILE": bad.path]).credentials() }
        #expect(message.hasPrefix("credential web in \(bad.path): vapid_subject 'mailto:a@test.local'") && message.contains(".local"), "\(message)")
        #expect(!message.contains("PUSHQ_WEBPUSH_VAPID_SUBJECT"))
    }

    @Test("nothing set: the sender's defaults, which the catalog (so --help and the docs) states")
    func defaults() throws {
        let c = try settings([:]).webPushConfiguration()
        let library = WebPushConfiguration()
        #expect(c.maxConnections == library.maxConnections && SettingKey.webPushMaxConnections.defaultValue == String(library.maxConnections))
        #expect(c.allowedOrigins.isEmpty && c.extraCAFile == nil)
        #expect([SettingKey.webPushVAPIDKeyFile, .webPushVAPIDSubject, .webPushCAFile, .webPushAllowedOrigins].allSatisfy { $0.defaultValue == "none" })
        #expect(Set(SettingKey.all.map(\.variable)).isSuperset(of: ["PUSHQ_WEBPUSH_VAPID_KEY_FILE", "PUSHQ_WEBPUSH_VAPID_SUBJECT",
            "PUSHQ_WEBPUSH_CA_FILE", "PUSHQ_WEBPUSH_ALLOWED_ORIGINS", "PUSHQ_WEBPUSH_MAX_CONNECTIONS"]))
    }

    @Test("allowed origins, max connections and the CA file land in the worker's Web Push configuration")
    func configuration() throws {
        let c = try settings(["PUSHQ_WEBPUSH_ALLOWED_ORIGINS": " https://push.internal.example:8443 , https://UP.example.org:443",
                              "PUSHQ_WEBPUSH_MAX_CONNECTIONS": "16", "PUSHQ_CA_FILE": "/etc/ca.pem"])
            .workerConfiguration(credentials: ResolvedCredentials(), defaultWorkerID: { "h:1" })
        #expect(Set(c.webPush.allowedOrigins.map(\.description)) == ["https://push.internal.example:8443", "https://up.example.org"])
        #expect(c.webPush.maxConnections == 16)
        #expect(c.webPush.extraCAFile == "/etc/ca.pem", "PUSHQ_CA_FILE's when PUSHQ_WEBPUSH_CA_FILE is unset")
        let own = try settings(["PUSHQ_CA_FILE": "/etc/ca.pem", "PUSHQ_WEBPUSH_CA_FILE": "/etc/webpush-ca.pem"]).webPushConfiguration()
        #expect(own.extraCAFile == "/etc/webpush-ca.pem")
    }

    @Test("an allowed origin that is not https://host[:port], or a bad connection bound, names its setting", arguments: [
        ("PUSHQ_WEBPUSH_ALLOWED_ORIGINS", "http://push.example"), ("PUSHQ_WEBPUSH_ALLOWED_ORIGINS", "https://a.example,,https://b.example"),
        ("PUSHQ_WEBPUSH_ALLOWED_ORIGINS", "https://user@push.example"), ("PUSHQ_WEBPUSH_ALLOWED_ORIGINS", "https://push.example/path"),
        ("PUSHQ_WEBPUSH_MAX_CONNECTIONS", "0"), ("PUSHQ_WEBPUSH_MAX_CONNECTIONS", "1.5"),
    ])
    func refusedConfiguration(variable: String, value: String) {
        let message = failure { _ = try settings([variable: value]).webPushConfiguration() }
        #expect(message.hasPrefix(variable), "\(message)")
    }
}
