import ChildProcess
import Foundation
import MockPush

/// This repository's own test fixtures: what `scripts/gen-test-certs` makes (besides the mock's
/// TLS material: client certificates, an expired one, a PKCS#12 file, second keys) and the fixed
/// identities its files stand for, so tests, `make run` and benchmarks agree on them without
/// repeating strings. The mock itself knows none of this (``MockPushFixtures`` is its own).
public enum MockTestFixtures {
    /// Key id of `token-key.p8` / `AuthKey_TESTKEY123.p8`.
    public static let keyID = "TESTKEY123"
    /// Key id of `other-key.p8` (a second key of the same team).
    public static let otherKeyID = "OTHERKEY99"
    /// Team id owning both keys.
    public static let teamID = "TESTTEAM01"
    /// The bundle id the fixtures' topics are built on.
    public static let bundleID = "com.example.pushq.test"
    /// The Firebase project of the FCM test service account (`fcm-key.pem`).
    public static let fcmProjectID = "pushq-test"
    /// Its `client_email`.
    public static let fcmClientEmail = "pushq-sender@pushq-test.iam.gserviceaccount.com"
    /// Its `private_key_id`.
    public static let fcmKeyID = "5f0c1d2e3a4b5c6d7e8f90a1b2c3d4e5f6a7b8c9"

    /// The text of a service-account JSON file for the key in `privateKeyPath` (e.g.
    /// `fcm-key.pem`) exchanging tokens at `tokenURI` (e.g. `https://127.0.0.1:<mock port>/token`).
    ///
    /// - Throws: `MockPushError.keyLoadFailed` when the key file cannot be read.
    public static func fcmServiceAccountJSON(
        privateKeyPath: String, tokenURI: String, projectID: String = fcmProjectID,
        clientEmail: String = fcmClientEmail, keyID: String = fcmKeyID
    ) throws -> String {
        try MockPushFixtures.serviceAccountJSON(privateKeyPath: privateKeyPath, projectID: projectID,
                                                clientEmail: clientEmail, keyID: keyID, tokenURI: tokenURI)
    }

    /// Runs `scripts/gen-test-certs directory` (idempotent; skips files already present).
    ///
    /// - Parameters:
    ///   - directory: where the fixtures go (a temp dir or `.pushq/…`, never committed).
    ///   - script: path of `scripts/gen-test-certs`.
    /// - Throws: `MockPushError.badConfiguration` when the script fails.
    public static func generate(into directory: String, script: String) throws {
        let result = try ChildProcess.runBlocking("/bin/bash", [script, directory])
        guard result.termination == .exit(0) else {
            throw MockPushError(.badConfiguration, "\(script) \(directory) failed (\(result.termination)): \(result.stderr)")
        }
    }
}

extension MockPushConfiguration {
    /// A configuration over the fixtures in `directory` (from `scripts/gen-test-certs`):
    /// `server.pem`/`server.key`, keys `TESTKEY123` (`token-key.pub.pem`) and `OTHERKEY99`
    /// (`other-key.pub.pem`) of team `TESTTEAM01`, bundle id `com.example.pushq.test`,
    /// client CA `ca.pem` when `certificateAuth` is true, and the FCM service account
    /// `fcmClientEmail` of project `fcmProjectID` (`fcm-key.pub.pem`, key id `fcmKeyID`).
    /// Other fields keep their defaults.
    public static func testFixtures(directory: String, certificateAuth: Bool = false) -> MockPushConfiguration {
        var configuration = MockPushConfiguration(
            certificatePath: directory + "/server.pem",
            privateKeyPath: directory + "/server.key",
            tokenKeys: [
                MockTokenKey(keyID: MockTestFixtures.keyID, teamID: MockTestFixtures.teamID, publicKeyPEMPath: directory + "/token-key.pub.pem"),
                MockTokenKey(keyID: MockTestFixtures.otherKeyID, teamID: MockTestFixtures.teamID, publicKeyPEMPath: directory + "/other-key.pub.pem"),
            ],
            bundleIDs: [MockTestFixtures.bundleID]
        )
        if certificateAuth { configuration.clientCAPath = directory + "/ca.pem" }
        configuration.fcm.serviceAccounts = [MockFCMServiceAccount(
            clientEmail: MockTestFixtures.fcmClientEmail, projectID: MockTestFixtures.fcmProjectID,
            publicKeyPEMPath: directory + "/fcm-key.pub.pem", keyID: MockTestFixtures.fcmKeyID)]
        return configuration
    }
}
