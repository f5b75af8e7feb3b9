import ChildProcess
import Foundation

/// The identities `scripts/gen-test-certs` fixtures stand for, so tests, `make run`
/// and benchmarks agree on them without repeating strings.
public enum MockTestFixtures {
    /// Key id of `token-key.p8` / `AuthKey_TESTKEY123.p8`.
    public static let keyID = "TESTKEY123"
    /// Key id of `other-key.p8` (a second key of the same team).
    public static let otherKeyID = "OTHERKEY99"
    /// Team id owning both keys.
    public static let teamID = "TESTTEAM01"
    /// The bundle id the fixtures' topics are built on.
    public static let bundleID = "com.example.pushq.test"

    /// Runs `scripts/gen-test-certs directory` (idempotent; skips files already present).
    ///
    /// - Parameters:
    ///   - directory: where the fixtures go (a temp dir or `.pushq/…`, never committed).
    ///   - script: path of `scripts/gen-test-certs`.
    /// - Throws: `MockAPNsError.badConfiguration` when the script fails.
    public static func generate(into directory: String, script: String) throws {
        let result = try ChildProcess.runBlocking("/bin/bash", [script, directory])
        guard result.termination == .exit(0) else {
            throw MockAPNsError(.badConfiguration, "\(script) \(directory) failed (\(result.termination)): \(result.stderr)")
        }
    }
}

extension MockAPNsConfiguration {
    /// A configuration over the fixtures in `directory` (from `scripts/gen-test-certs`):
    /// `server.pem`/`server.key`, keys `TESTKEY123` (`token-key.pub.pem`) and `OTHERKEY99`
    /// (`other-key.pub.pem`) of team `TESTTEAM01`, bundle id `com.example.pushq.test`,
    /// client CA `ca.pem` when `certificateAuth` is true. Other fields keep their defaults.
    public static func testFixtures(directory: String, certificateAuth: Bool = false) -> MockAPNsConfiguration {
        var configuration = MockAPNsConfiguration(
            certificatePath: directory + "/server.pem",
            privateKeyPath: directory + "/server.key",
            tokenKeys: [
                MockTokenKey(keyID: MockTestFixtures.keyID, teamID: MockTestFixtures.teamID, publicKeyPEMPath: directory + "/token-key.pub.pem"),
                MockTokenKey(keyID: MockTestFixtures.otherKeyID, teamID: MockTestFixtures.teamID, publicKeyPEMPath: directory + "/other-key.pub.pem"),
            ],
            bundleIDs: [MockTestFixtures.bundleID]
        )
        if certificateAuth { configuration.clientCAPath = directory + "/ca.pem" }
        return configuration
    }
}
