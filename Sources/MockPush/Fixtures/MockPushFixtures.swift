import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Everything a test suite needs to run a sender against the mock, generated in process into a
/// directory the caller names: a CA (trust it), the mock's server certificate, a client
/// certificate (certificate auth), an APNs signing key (`.p8`) with its key id and team id, and
/// an FCM service account's key.
///
/// ```swift
/// let fixtures = try MockPushFixtures.generate(into: temporaryDirectory)
/// let server = try MockPushServer(configuration: fixtures.configuration(), logger: logger)
/// try await server.start()
/// // APNs: server.url, fixtures.caCertificatePath, fixtures.apnsKeyPath,
/// //       fixtures.identity.apnsKeyID, .apnsTeamID, .bundleID
/// // FCM:  try fixtures.fcmServiceAccountJSON(tokenURI: server.url! + "/token")
/// ```
///
/// Files (keys mode 0600): `ca.pem`, `server.pem`, `server.key`, `client.pem`, `client.key`,
/// `AuthKey_<key id>.p8`, `fcm-key.pem`, and `mock-push-fixtures.json`, the identity they were
/// made for. Never commit them: use a temporary or ignored directory.
public struct MockPushFixtures: Sendable, Hashable {
    /// The names the fixtures stand for. The defaults look like Apple's and Google's and are
    /// nobody's.
    public struct Identity: Sendable, Hashable, Codable {
        /// The APNs key id (JWT `kid`): 10 characters, as Apple assigns them.
        public var apnsKeyID: String
        /// The team owning the key (JWT `iss`).
        public var apnsTeamID: String
        /// The bundle id the mock takes topics under (`apns-topic` = bundle id + the push type's suffix).
        public var bundleID: String
        /// The Firebase project of the service account.
        public var fcmProjectID: String
        /// The service account's `client_email`.
        public var fcmClientEmail: String
        /// The service account's `private_key_id` (the assertion's `kid`).
        public var fcmKeyID: String

        public init(apnsKeyID: String = "MOCKKEY001", apnsTeamID: String = "MOCKTEAM01", bundleID: String = "com.example.app",
                    fcmProjectID: String = "mock-project", fcmClientEmail: String = "mock-sender@mock-project.iam.gserviceaccount.com",
                    fcmKeyID: String = "0123456789abcdef0123456789abcdef01234567") {
            self.apnsKeyID = apnsKeyID
            self.apnsTeamID = apnsTeamID
            self.bundleID = bundleID
            self.fcmProjectID = fcmProjectID
            self.fcmClientEmail = fcmClientEmail
            self.fcmKeyID = fcmKeyID
        }
    }

    /// Where the files are.
    public let directory: String
    /// The names they stand for.
    public let identity: Identity

    /// The CA that signed the server and client certificates: what a sender must trust
    /// (pushq: `PUSHQ_APNS_CA_FILE`).
    public var caCertificatePath: String { directory + "/ca.pem" }
    /// The mock's certificate, for 127.0.0.1, ::1 and localhost, and its key.
    public var serverCertificatePath: String { directory + "/server.pem" }
    public var serverKeyPath: String { directory + "/server.key" }
    /// A client certificate and key the mock accepts with ``configuration(certificateAuth:)`` true.
    public var clientCertificatePath: String { directory + "/client.pem" }
    public var clientKeyPath: String { directory + "/client.key" }
    /// The APNs signing key, PKCS#8 PEM like Apple's `AuthKey_<key id>.p8`.
    public var apnsKeyPath: String { directory + "/AuthKey_\(identity.apnsKeyID).p8" }
    /// The FCM service account's RSA key, PKCS#8 PEM.
    public var fcmKeyPath: String { directory + "/fcm-key.pem" }
    var manifestPath: String { directory + "/mock-push-fixtures.json" }

    /// Generates the fixtures into `directory` (created if missing), or takes the ones an earlier
    /// call left there for the same identity: cheap to call from every test. Concurrent callers,
    /// in this process or others, serialize on a lock file in the directory.
    ///
    /// - Throws: `MockPushError.badConfiguration` when the directory cannot be written;
    ///   `MockPushError.keyLoadFailed` when OpenSSL fails.
    public static func generate(into directory: String, identity: Identity = Identity()) throws -> MockPushFixtures {
        let fixtures = MockPushFixtures(directory: directory, identity: identity)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw MockPushError(.badConfiguration, "cannot create the fixtures directory \(directory)", cause: error)
        }
        let lock = open(directory + "/.mock-push-fixtures.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw MockPushError(.badConfiguration, "cannot open a lock file in \(directory) (errno \(errno))") }
        defer { close(lock) }
        flock(lock, LOCK_EX)
        if fixtures.isComplete { return fixtures }
        try fixtures.write()
        let manifest = try JSONEncoder().encode(identity)
        try save(Array(manifest), to: fixtures.manifestPath, secret: false)
        return fixtures
    }

    /// Whether the directory holds every file, made for this identity.
    private var isComplete: Bool {
        guard let data = FileManager.default.contents(atPath: manifestPath),
              (try? JSONDecoder().decode(Identity.self, from: data)) == identity else { return false }
        return [caCertificatePath, serverCertificatePath, serverKeyPath, clientCertificatePath, clientKeyPath,
                apnsKeyPath, fcmKeyPath].allSatisfy { FileManager.default.fileExists(atPath: $0) }
    }

    /// A configuration serving these fixtures: the server certificate, the APNs key of
    /// `identity` (team, key id, bundle id) and the FCM service account. Other fields keep
    /// their defaults (``MockPushConfiguration``).
    ///
    /// - Parameter certificateAuth: also accept client certificates signed by the fixtures' CA
    ///   (``clientCertificatePath``), for senders that authenticate with a certificate.
    public func configuration(certificateAuth: Bool = false) -> MockPushConfiguration {
        var configuration = MockPushConfiguration(
            certificatePath: serverCertificatePath, privateKeyPath: serverKeyPath,
            tokenKeys: [MockTokenKey(keyID: identity.apnsKeyID, teamID: identity.apnsTeamID, publicKeyPEMPath: apnsKeyPath)],
            bundleIDs: [identity.bundleID])
        configuration.fcm.serviceAccounts = [MockFCMServiceAccount(
            clientEmail: identity.fcmClientEmail, projectID: identity.fcmProjectID,
            publicKeyPEMPath: fcmKeyPath, keyID: identity.fcmKeyID)]
        if certificateAuth { configuration.clientCAPath = caCertificatePath }
        return configuration
    }

    /// The service account's JSON file, as Google's console downloads it, exchanging its tokens
    /// at `tokenURI` (the mock's: `server.url! + "/token"`). Secret: it holds the private key.
    ///
    /// - Throws: `MockPushError.keyLoadFailed` when the key file cannot be read.
    public func fcmServiceAccountJSON(tokenURI: String) throws -> String {
        try Self.serviceAccountJSON(privateKeyPath: fcmKeyPath, projectID: identity.fcmProjectID,
                                    clientEmail: identity.fcmClientEmail, keyID: identity.fcmKeyID, tokenURI: tokenURI)
    }

    /// A service account's JSON file for the RSA key in `privateKeyPath`, with these names.
    ///
    /// - Throws: `MockPushError.keyLoadFailed` when the key file cannot be read.
    public static func serviceAccountJSON(privateKeyPath: String, projectID: String, clientEmail: String,
                                          keyID: String, tokenURI: String) throws -> String {
        guard let pem = FileManager.default.contents(atPath: privateKeyPath) else {
            throw MockPushError(.keyLoadFailed, "cannot read \(privateKeyPath)")
        }
        let fields: [(String, String)] = [
            ("type", "service_account"), ("project_id", projectID), ("private_key_id", keyID),
            ("private_key", String(decoding: pem, as: UTF8.self)), ("client_email", clientEmail),
            ("client_id", "100000000000000000001"), ("auth_uri", "https://accounts.google.com/o/oauth2/auth"),
            ("token_uri", tokenURI),
        ]
        return "{\n" + fields.map { "  " + MockJSON.quoted($0.0) + ": " + MockJSON.quoted($0.1) }.joined(separator: ",\n") + "\n}\n"
    }

    /// An APNs provider token (ES256 JWT) of the fixtures' key, issued at `issuedAt` (UNIX
    /// seconds): for raw requests (curl, h2load) without a sender. Without `bearer `.
    ///
    /// - Throws: `MockPushError.keyLoadFailed` when the key cannot be read or used.
    public func providerToken(issuedAt: Int64) throws -> String {
        try Self.providerToken(privateKeyPath: apnsKeyPath, keyID: identity.apnsKeyID, teamID: identity.apnsTeamID, issuedAt: issuedAt)
    }
}
