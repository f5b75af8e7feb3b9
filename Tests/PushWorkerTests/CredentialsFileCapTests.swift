import PushWorker
import Testing

/// `max_per_second` in the credentials file: a number above 0, for either provider.
@Suite("Credentials file caps")
struct CredentialsFileCapTests {
    @Test("a cap is read for APNs and FCM entries, and is absent when not given")
    func read() throws {
        let file = """
            {"a": {"team_id": "T", "key_id": "K", "key_file": "/k.p8", "max_per_second": 250.5},
             "f": {"type": "fcm", "service_account_file": "/s.json", "max_per_second": 10000},
             "c": {"cert_file": "/c.p12"}}
            """
        let specs = try CredentialsFile.parse(Array(file.utf8), file: "creds.json").specs
        #expect(specs["a"]?.maxPerSecond == 250.5 && specs["f"]?.maxPerSecond == 10000 && specs["c"]?.maxPerSecond == nil)
    }

    @Test("a cap that is not a number above 0 is refused, naming the credential and the file", arguments: [
        ("0", "max_per_second must be a number above 0"), ("-5", "max_per_second must be a number above 0"),
        ("\"100\"", "has the wrong type"), ("1e400", "not valid JSON"),
    ])
    func refused(value: String, message: String) {
        let file = "{\"a\": {\"cert_file\": \"/c.p12\", \"max_per_second\": \(value)}}"
        let error = #expect(throws: CredentialsFile.Failure.self) { try CredentialsFile.parse(Array(file.utf8), file: "creds.json") }
        #expect(error?.description.contains(message) == true, "\(error?.description ?? "no error")")
        #expect(error?.description.contains("creds.json") == true)
    }
}
