import PushWorker
import Testing

/// `{"type": "webpush", "vapid_key_file": …, "vapid_subject": …}` entries of the credentials file
/// (issue 47): read beside APNs and FCM entries, keyed by provider; incomplete or mixed ones refused
/// with the credential and the file named.
@Suite("Web Push credentials file")
struct WebPushCredentialsFileTests {
    @Test("a webpush entry is read with its key file, subject and cap, beside APNs and FCM entries")
    func read() throws {
        let file = """
            {"web": {"type": "webpush", "vapid_key_file": "/etc/pushq/vapid.pem", "vapid_subject": "mailto:push@example.com",
                     "max_per_second": 500},
             "a": {"team_id": "T", "key_id": "K", "key_file": "/k.p8"},
             "f": {"type": "fcm", "service_account_file": "/s.json"}}
            """
        let specs = try CredentialsFile.parse(Array(file.utf8), file: "creds.json").specs
        #expect(specs["web"]?.kind == .webpush(vapidKeyFile: "/etc/pushq/vapid.pem", vapidSubject: "mailto:push@example.com"))
        #expect(specs["web"]?.provider == "webpush" && specs["web"]?.maxPerSecond == 500 && specs["web"]?.topic == nil)
        #expect(specs["a"]?.provider == "apns" && specs["f"]?.provider == "fcm")
    }

    /// Each entry is refused with a message naming the credential, the file and what to write instead.
    @Test("an incomplete or mixed webpush entry is refused, naming the credential, the file and the fix", arguments: [
        (#"{"type": "webpush", "vapid_subject": "mailto:a@example.com"}"#, "needs vapid_key_file"),
        (#"{"type": "webpush", "vapid_key_file": "", "vapid_subject": "mailto:a@example.com"}"#, "needs vapid_key_file"),
        (#"{"type": "webpush", "vapid_key_file": "/v.pem"}"#, "needs vapid_subject"),
        (#"{"type": "webpush", "vapid_key_file": "/v.pem", "vapid_subject": ""}"#, "needs vapid_subject"),
        (#"{"type": "webpush", "vapid_key_file": "/v.pem", "vapid_subject": "mailto:a@example.com", "topic": "com.x"}"#, "topic is not for a Web Push credential"),
        (#"{"type": "webpush", "vapid_key_file": "/v.pem", "vapid_subject": "mailto:a@example.com", "service_account_file": "/s"}"#, "service_account_file is not for a Web Push"),
        (#"{"vapid_key_file": "/v.pem", "vapid_subject": "mailto:a@example.com"}"#, #"add "type": "webpush""#),
        (#"{"type": "fcm", "service_account_file": "/s", "vapid_key_file": "/v.pem"}"#, "are for Web Push, not for an FCM credential"),
        (#"{"type": "web-push", "vapid_key_file": "/v.pem"}"#, "type must be apns, fcm or webpush"),
    ])
    func refused(entry: String, message: String) {
        let file = "{\"web\": \(entry)}"
        let error = #expect(throws: CredentialsFile.Failure.self) { try CredentialsFile.parse(Array(file.utf8), file: "creds.json") }
        #expect(error?.description.contains(message) == true, "\(error?.description ?? "no error")")
        #expect(error?.description.contains("credential web in creds.json") == true, "\(error?.description ?? "no error")")
    }
}
