import PushTransport
import Foundation
import PushWorker
import PushCore
import PushStore

/// The credentials a worker can send with, by provider and name, and the APNs ones' default topics.
struct ResolvedCredentials {
    var credentials: [CredentialKey: Credential] = [:]
    var topics: [String: String] = [:]
    /// The credentials file's `max_per_second` caps.
    var caps: [RateBudget] = []
}

extension Settings {
    /// The credentials by name: the APNs token or certificate settings, the FCM service account
    /// and the Web Push VAPID key give `"default"` of their provider; the credentials file adds (or
    /// replaces) named ones, with the default topics it gives some APNs ones. Every file is loaded and checked.
    ///
    /// - Throws: ``SettingError`` for an incomplete or ambiguous APNs credential, or an error
    ///   naming the setting and the file that cannot be loaded.
    func credentials() throws -> ResolvedCredentials {
        var resolved = ResolvedCredentials()
        if let file = given(.fcmServiceAccountFile) {
            do {
                resolved.credentials[CredentialKey(.fcm, WorkerConfiguration.defaultCredentialName)] = .fcm(try FCMServiceAccount(file: file.text))
            } catch {
                throw CommandFailure("\(file.name): \(error)")
            }
        }
        if let credential = try defaultAPNsCredential() {
            resolved.credentials[CredentialKey(.apns, WorkerConfiguration.defaultCredentialName)] = .apns(credential)
        }
        if let credential = try defaultWebPushCredential() {
            resolved.credentials[CredentialKey(.webpush, WorkerConfiguration.defaultCredentialName)] = .webpush(credential)
        }
        if let file = given(.credentialsFile) {
            let loaded = try Self.loadCredentials(file: file)
            resolved.credentials.merge(loaded.credentials) { _, named in named }
            resolved.topics.merge(loaded.topics) { _, named in named }
            resolved.caps = loaded.caps
        }
        return resolved
    }

    /// The APNs credential of the team/key/key-file settings (token auth) or the certificate
    /// settings; nil when none is given.
    private func defaultAPNsCredential() throws -> APNsCredential? {
        let team = given(.teamID), key = given(.keyID), keyFile = given(.keyFile)
        let cert = given(.certFile), password = given(.certPassword)
        let token = [team, key, keyFile].compactMap { $0 }
        guard token.isEmpty else {
            guard let team, let key, let keyFile else {
                let first = token[0]
                let missing = [SettingKey.teamID, .keyID, .keyFile].filter { given($0) == nil }.map(\.variable)
                throw SettingError(setting: first.name, value: first.text,
                                   expected: missing.joined(separator: " and ") + " too (APNs token auth needs all three)")
            }
            if let cert {
                throw SettingError(setting: cert.name, value: cert.text, expected: "no certificate beside token auth "
                                   + "(\(keyFile.name)): choose one, or name both in PUSHQ_CREDENTIALS_FILE")
            }
            return try APNsCredential.token(teamID: team.text, keyID: key.text, keyFile: keyFile.text)
        }
        return cert.map { .certificate(APNsClientCertificate.detectingFormat(file: $0.text, password: password?.text)) }
    }

    /// Reads the credentials file and loads every credential it names (``CredentialsFile``
    /// checks its shape first).
    private static func loadCredentials(file given: Given) throws
        -> (credentials: [CredentialKey: Credential], topics: [String: String], caps: [RateBudget]) {
        let file = given.text
        let bytes: [UInt8]
        do { bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file))) } catch {
            throw CommandFailure("cannot read \(given.name) \(file): \(error.localizedDescription)")
        }
        let parsed: CredentialsFile
        do { parsed = try CredentialsFile.parse(bytes, file: file) } catch {
            throw CommandFailure(error.description)
        }
        var credentials: [CredentialKey: Credential] = [:]
        var topics: [String: String] = [:]
        var caps: [RateBudget] = []
        for (name, spec) in parsed.specs.sorted(by: { $0.key < $1.key }) {
            if let cap = spec.maxPerSecond {
                caps.append(RateBudget(provider: Provider(rawValue: spec.provider) ?? .apns, credential: name, perSecond: cap))
            }
            do {
                switch spec.kind {
                case .token(let team, let key, let path):
                    credentials[CredentialKey(.apns, name)] = .apns(try APNsCredential.token(teamID: team, keyID: key, keyFile: path))
                    topics[name] = spec.topic
                case .certificate(let cert, let password):
                    let certificate = APNsClientCertificate.detectingFormat(file: cert, password: password)
                    try certificate.validate()
                    credentials[CredentialKey(.apns, name)] = .apns(.certificate(certificate))
                    topics[name] = spec.topic
                case .fcm(let path):
                    credentials[CredentialKey(.fcm, name)] = .fcm(try FCMServiceAccount(file: path))
                case .webpush(let path, let subject):
                    credentials[CredentialKey(.webpush, name)] = .webpush(try WebPushCredential(keyFile: path, subject: subject))
                }
            } catch let error as VAPIDSubjectError {
                // Its message names the variable; here the subject is the file's.
                let message = error.message.replacingOccurrences(of: SettingKey.webPushVAPIDSubject.variable, with: "vapid_subject")
                throw CommandFailure("credential \(name) in \(file): \(message)")
            } catch {
                throw CommandFailure("credential \(name) in \(file): \(error)")
            }
        }
        return (credentials, topics, caps)
    }
}
