import PropertyBased
import PushWorker
import Testing

/// The credentials file's shape check over generated files: any bytes are either read or refused
/// with a message naming the file, never a password; well-formed files come back as written.
@Suite struct CredentialsFilePropertyTests {
    static let text = Gen.letterOrNumber.string(of: 1...20)

    @Test func anyBytesAreReadOrRefusedNamingTheFile() async {
        await propertyCheck(count: 2000, input: Gen<UInt8>.value(in: 0...255).array(of: 0...300)) { bytes in
            do {
                _ = try CredentialsFile.parse(bytes, file: "/etc/pushq/creds.json")
            } catch {
                #expect("\(error)".contains("/etc/pushq/creds.json"))
            }
        }
    }

    @Test func filesNearTheShapeNeverShowAPassword() async {
        // Well-formed files cut anywhere, and entries with a value of the wrong type.
        let files = Gen<String?>.element(of: [
            #"{"a": {"cert_file": "/c.p12", "cert_password": "hunter2-secret"}, "b": {"team_id": "T", "key_id": "K", "key_file": "/k.p8"}}"#,
            #"{"a": {"cert_file": "/c.p12", "cert_password": 12345678}}"#,
            #"{"a": {"cert_file": "/c.p12", "cert_password": ["hunter2-secret"]}}"#,
            #"{"a": {"cert_password": "hunter2-secret", "topic": "com.example.app"}}"#,
        ]).map { Array($0!.utf8) }
        await propertyCheck(count: 500, input: files, Gen.int(in: 0...140)) { bytes, cut in
            do {
                _ = try CredentialsFile.parse(Array(bytes.prefix(cut)), file: "creds.json")
            } catch {
                #expect(!"\(error)".contains("hunter2") && !"\(error)".contains("12345678"))
                #expect("\(error)".contains("creds.json"))
            }
        }
    }

    @Test func wellFormedFilesComeBackAsWritten() async {
        let entry = PropertyBased.zip(Self.text, Self.text, Self.text, Gen.bool, Self.text.optional)
        await propertyCheck(count: 500, input: entry.array(of: 1...5)) { entries in
            var expected: [String: CredentialsFile.Spec] = [:]
            var members: [String] = []
            for (i, (a, b, c, token, topic)) in entries.enumerated() {
                let name = "cred\(i)"
                let topicMember = topic.map { #", "topic": "com.\#($0)""# } ?? ""
                let kind: CredentialsFile.Spec.Kind = token ? .token(teamID: a, keyID: b, keyFile: "/k/\(c).p8")
                                                            : .certificate(file: "/c/\(a).p12", password: b)
                expected[name] = CredentialsFile.Spec(kind: kind, topic: topic.map { "com.\($0)" })
                members.append(token ? #""\#(name)": {"team_id": "\#(a)", "key_id": "\#(b)", "key_file": "/k/\#(c).p8"\#(topicMember)}"#
                                     : #""\#(name)": {"cert_file": "/c/\#(a).p12", "cert_password": "\#(b)"\#(topicMember)}"#)
            }
            let file = "{" + members.joined(separator: ", ") + "}"
            do {
                #expect(try CredentialsFile.parse(Array(file.utf8), file: "f").specs == expected, "\(file)")
            } catch {
                Issue.record("a well-formed file was refused: \(error): \(file)")
            }
        }
    }

    @Test("FCM entries beside APNs ones, and an explicit apns type")
    func fcmEntries() throws {
        let file = #"{"android": {"type": "fcm", "service_account_file": "/etc/pushq/firebase.json"}, "ios": {"type": "apns", "cert_file": "/c.p12"}}"#
        let parsed = try CredentialsFile.parse(Array(file.utf8), file: "f")
        #expect(parsed.specs["android"] == CredentialsFile.Spec(kind: .fcm(serviceAccountFile: "/etc/pushq/firebase.json"), topic: nil))
        #expect(parsed.specs["android"]?.provider == "fcm")
        #expect(parsed.specs["ios"] == CredentialsFile.Spec(kind: .certificate(file: "/c.p12", password: nil), topic: nil))
        #expect(parsed.specs["ios"]?.provider == "apns")
    }

    @Test("each refusal names the file and the credential", arguments: [
        (#"[1, 2]"#, "is not a JSON object of credentials"),
        (#"{"a": {"team_id": "T", "key_id": "K"}}"#, "credential a in f: needs team_id, key_id and key_file, or cert_file"),
        (#"{"a": {"cert_file": "/c", "topic": "com.ex ample"}}"#, #"credential a in f: topic must be a bundle id"#),
        (#"{"a": {"cert_file": "/c", "topic": ""}}"#, #"credential a in f: topic must be a bundle id"#),
        (#"{"a": {"cert_file": "/c", "team_id": "T", "key_id": "K", "key_file": "/k"}}"#, "credential a in f: both a key (key_file) and a certificate (cert_file)"),
        (#"{"a": {"cert_file": 7}}"#, "a.cert_file has the wrong type"),
        (#"{"a": {"type": "fcm"}}"#, "credential a in f: an FCM credential needs service_account_file"),
        (#"{"a": {"type": "fcm", "service_account_file": ""}}"#, "credential a in f: an FCM credential needs service_account_file"),
        (#"{"a": {"type": "fcm", "service_account_file": "/s.json", "topic": "com.x"}}"#, "credential a in f: topic is for APNs"),
        (#"{"a": {"type": "fcm", "service_account_file": "/s.json", "key_file": "/k", "team_id": "T"}}"#,
         "credential a in f: team_id, key_file is for APNs"),
        (#"{"a": {"service_account_file": "/s.json"}}"#, #"credential a in f: service_account_file is for FCM: add "type": "fcm""#),
        (#"{"a": {"type": "gcm", "service_account_file": "/s.json"}}"#, #"credential a in f: type must be apns, fcm or webpush, not "gcm""#),
    ])
    func refusals(file: String, message: String) {
        #expect {
            _ = try CredentialsFile.parse(Array(file.utf8), file: "f")
        } throws: { error in
            (error as? CredentialsFile.Failure)?.description.contains(message) == true
        }
    }
}
