import PushTransport
@testable import pushq
import PushWorker
import Testing

/// The settings that govern every provider have neutral names (`PUSHQ_CONNECTIONS`…); the
/// `PUSHQ_APNS_*` names they had are still read, as documented aliases.
@Suite("Setting aliases")
struct SettingAliasTests {
    static let database = ["PUSHQ_DATABASE_URL": "postgresql://127.0.0.1:1/pushq"]

    func worker(_ environment: [String: String], flags: [SettingKey: String?] = [:]) throws -> WorkerConfiguration {
        try Settings(environment: Self.database.merging(environment) { $1 }, flags: flags)
            .workerConfiguration(credentials: ResolvedCredentials(), defaultWorkerID: { "host:1" })
    }

    /// The four neutral settings and the names they replace.
    static let renamed: [(new: String, old: String, value: String)] = [
        ("PUSHQ_CA_FILE", "PUSHQ_APNS_CA_FILE", "/ca.pem"), ("PUSHQ_CONNECTIONS", "PUSHQ_APNS_CONNECTIONS", "3"),
        ("PUSHQ_REQUEST_TIMEOUT", "PUSHQ_APNS_REQUEST_TIMEOUT", "7.5"), ("PUSHQ_CONNECT_TIMEOUT", "PUSHQ_APNS_CONNECT_TIMEOUT", "2"),
    ]

    @Test("the neutral names and their old PUSHQ_APNS_* names set the same fields, for APNs and FCM alike")
    func neutralAndOld() throws {
        for names in [Self.renamed.map(\.new), Self.renamed.map(\.old)] {
            let c = try worker(Dictionary(uniqueKeysWithValues: zip(names, Self.renamed.map(\.value))))
            #expect(c.sender.extraCAFile == "/ca.pem" && c.sender.connections == 3, "\(names)")
            #expect(c.sender.requestTimeout == 7.5 && c.sender.connectTimeout == 2, "\(names)")
        }
        #expect(SettingKey.caFile.variable == "PUSHQ_CA_FILE" && SettingKey.caFile.aliases == ["PUSHQ_APNS_CA_FILE"])
    }

    @Test("the worker's flags --ca-file, --connections, --request-timeout and --connect-timeout override both names")
    func flags() throws {
        let parsed = try Worker.parse(["--ca-file", "/flag.pem", "--connections", "5", "--request-timeout", "9", "--connect-timeout", "1.5"])
        let environment = Self.database.merging(["PUSHQ_APNS_CONNECTIONS": "3", "PUSHQ_CA_FILE": "/env.pem"]) { $1 }
        let c = try Settings(environment: environment, flags: parsed.flags)
            .workerConfiguration(credentials: ResolvedCredentials(), defaultWorkerID: { "host:1" })
        #expect(c.sender.extraCAFile == "/flag.pem" && c.sender.connections == 5)
        #expect(c.sender.requestTimeout == 9 && c.sender.connectTimeout == 1.5)
    }

    @Test("a name and its old name set to different values: an error naming both; the same value is fine")
    func conflict() throws {
        for (new, old, value) in Self.renamed {
            var error: SettingError?
            do { _ = try worker([new: value, old: value + "1"]) } catch let e as SettingError { error = e }
            #expect(error?.description == "\(old)=\(value)1: expected \(new)'s value (\(value)) or no value: \(old) is the old name of \(new)")
            #expect(throws: Never.self) { try worker([new: value, old: value]) }
            #expect(throws: Never.self) { try worker([new: value, old: ""]) }
        }
    }

    @Test("a bad value under the old name is named by the old name")
    func badOldValue() {
        #expect(throws: SettingError(setting: "PUSHQ_APNS_CONNECTIONS", value: "0", expected: "a whole number from 1 to 64")) {
            try worker(["PUSHQ_APNS_CONNECTIONS": "0"])
        }
    }
}
