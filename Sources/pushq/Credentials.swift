import ArgumentParser
import Foundation
import PushTransport
import PushWorker

/// The credentials a worker can send with: APNs ones with their default topics, and FCM ones.
struct ResolvedCredentials {
    var apns: [String: APNsCredential] = [:]
    var topics: [String: String] = [:]
    var fcm: [String: FCMServiceAccount] = [:]
}

/// APNs and FCM credential flags, shared by `pushq worker` (and `make run`).
struct CredentialOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Apple team id (token auth).", discussion: "Defaults to $PUSHQ_APNS_TEAM_ID."))
    var teamID: String?
    @Option(help: ArgumentHelp("Key id of the .p8 key (token auth).", discussion: "Defaults to $PUSHQ_APNS_KEY_ID."))
    var keyID: String?
    @Option(help: ArgumentHelp("Path of the .p8 key, PKCS#8 PEM (token auth).", discussion: "Defaults to $PUSHQ_APNS_KEY_FILE."))
    var keyFile: String?
    @Option(help: ArgumentHelp("PKCS#12 (.p12) or PEM client certificate (certificate auth).", discussion: "Defaults to $PUSHQ_APNS_CERT_FILE."))
    var certFile: String?
    @Option(help: ArgumentHelp("Password of the certificate file. Prefer the variable: flags show in `ps`.", discussion: "Defaults to $PUSHQ_APNS_CERT_PASSWORD."))
    var certPassword: String?
    @Option(help: ArgumentHelp("JSON file naming several credentials (for the rows' credential column).", discussion: """
        Defaults to $PUSHQ_CREDENTIALS_FILE. Form: {"NAME": {"team_id": "...", "key_id": "...", "key_file": "...", "topic": "..."}, \
        "OTHER": {"cert_file": "...", "cert_password": "...", "topic": "..."}, \
        "ANDROID": {"type": "fcm", "service_account_file": "..."}}. "topic" (optional, APNs) is the bundle id for that \
        credential's rows whose topic is NULL (else --topic). A credential named "default" there replaces the one from the \
        flags above (of its provider). Every credential is loaded and checked at start.
        """))
    var credentialsFile: String?
    @Option(help: ArgumentHelp("Firebase service account JSON key file: the default FCM credential.",
                               discussion: "Defaults to $PUSHQ_FCM_SERVICE_ACCOUNT_FILE. Rows with provider 'fcm' and no credential use it."))
    var fcmServiceAccountFile: String?

    /// The credentials by name (the flags/variables give `"default"` of each provider), and
    /// the default topics the credentials file gives some APNs ones.
    func resolve() throws -> ResolvedCredentials {
        var resolved = ResolvedCredentials()
        var out: [String: APNsCredential] = [:]
        var topics: [String: String] = [:]
        if let file = fcmServiceAccountFile ?? Environment.nonEmpty("PUSHQ_FCM_SERVICE_ACCOUNT_FILE") {
            do {
                resolved.fcm[WorkerConfiguration.defaultCredentialName] = try FCMServiceAccount(file: file)
            } catch {
                throw ValidationError("PUSHQ_FCM_SERVICE_ACCOUNT_FILE: \(error)")
            }
        }
        let team = teamID ?? Environment.nonEmpty("PUSHQ_APNS_TEAM_ID")
        let key = keyID ?? Environment.nonEmpty("PUSHQ_APNS_KEY_ID")
        let keyPath = keyFile ?? Environment.nonEmpty("PUSHQ_APNS_KEY_FILE")
        let cert = certFile ?? Environment.nonEmpty("PUSHQ_APNS_CERT_FILE")
        let password = certPassword ?? Environment.nonEmpty("PUSHQ_APNS_CERT_PASSWORD")
        if team != nil || key != nil || keyPath != nil {
            guard let team, let key, let keyPath else {
                throw ValidationError("token auth needs all three of PUSHQ_APNS_TEAM_ID, PUSHQ_APNS_KEY_ID and PUSHQ_APNS_KEY_FILE (or --team-id, --key-id, --key-file)")
            }
            if cert != nil {
                throw ValidationError("both token auth (PUSHQ_APNS_KEY_FILE) and certificate auth (PUSHQ_APNS_CERT_FILE) are set: choose one, or name them in PUSHQ_CREDENTIALS_FILE")
            }
            out[WorkerConfiguration.defaultCredentialName] = try APNsCredential.token(teamID: team, keyID: key, keyFile: keyPath)
        } else if let cert {
            out[WorkerConfiguration.defaultCredentialName] = .certificate(APNsClientCertificate.detectingFormat(file: cert, password: password))
        }
        if let file = credentialsFile ?? Environment.nonEmpty("PUSHQ_CREDENTIALS_FILE") {
            let loaded = try Self.load(file: file)
            for (name, entry) in loaded.apns {
                out[name] = entry.credential
                topics[name] = entry.topic
            }
            for (name, account) in loaded.fcm { resolved.fcm[name] = account }
        }
        resolved.apns = out
        resolved.topics = topics
        return resolved
    }

    /// Reads the credentials file and loads every credential it names (``CredentialsFile``
    /// checks its shape first).
    static func load(file: String) throws -> (apns: [String: (credential: APNsCredential, topic: String?)], fcm: [String: FCMServiceAccount]) {
        let bytes: [UInt8]
        do { bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file))) } catch {
            throw ValidationError("cannot read PUSHQ_CREDENTIALS_FILE \(file): \(error.localizedDescription)")
        }
        let parsed: CredentialsFile
        do { parsed = try CredentialsFile.parse(bytes, file: file) } catch {
            throw ValidationError(error.description)
        }
        var out: [String: (credential: APNsCredential, topic: String?)] = [:]
        var fcm: [String: FCMServiceAccount] = [:]
        for (name, spec) in parsed.specs.sorted(by: { $0.key < $1.key }) {
            do {
                switch spec.kind {
                case .token(let team, let key, let path):
                    out[name] = (try APNsCredential.token(teamID: team, keyID: key, keyFile: path), spec.topic)
                case .certificate(let cert, let password):
                    let certificate = APNsClientCertificate.detectingFormat(file: cert, password: password)
                    try certificate.validate()
                    out[name] = (.certificate(certificate), spec.topic)
                case .fcm(let path):
                    fcm[name] = try FCMServiceAccount(file: path)
                }
            } catch {
                throw ValidationError("credential \(name) in \(file): \(error)")
            }
        }
        return (out, fcm)
    }
}
