import Foundation

/// What a credentials file (`PUSHQ_CREDENTIALS_FILE`) asks for, checked for shape before any
/// key or certificate file is read.
///
/// The file is a JSON object of credentials by name:
/// `{"NAME": {"team_id": "…", "key_id": "…", "key_file": "…", "topic": "…"},
///   "OTHER": {"cert_file": "…", "cert_password": "…", "topic": "…"},
///   "ANDROID": {"type": "fcm", "service_account_file": "…", "max_per_second": 9000},
///   "WEB": {"type": "webpush", "vapid_key_file": "…", "vapid_subject": "mailto:…"}}`.
/// `type` is `apns` (the default), `fcm` or `webpush`; names are per provider (a row's `provider` and
/// `credential` pick one). `max_per_second` (a number above 0, optional) caps the credential's
/// sends, every worker together.
/// ``parse(_:file:)`` is pure (no file is opened) so that any bytes can be tried on it; the
/// `pushq` command then loads each ``Spec``'s key or certificate. Errors name the file and the
/// credential, never a password.
///
/// Self-contained (Foundation only): `scripts/fuzz credentials` compiles this file alone.
public struct CredentialsFile: Sendable, Equatable {
    /// One credential: how it authenticates, and its default topic.
    public struct Spec: Sendable, Equatable {
        public enum Kind: Sendable, Equatable {
            /// Token auth: an ES256 `.p8` key.
            case token(teamID: String, keyID: String, keyFile: String)
            /// Certificate auth: a PKCS#12 or PEM client certificate.
            case certificate(file: String, password: String?)
            /// FCM: a Google service account JSON file (OAuth 2.0 for server-to-server).
            case fcm(serviceAccountFile: String)
            /// Web Push: a VAPID key (P-256 PEM) and the subject its tokens name (RFC 8292).
            case webpush(vapidKeyFile: String, vapidSubject: String)
        }

        /// The provider this credential sends through.
        public var provider: String {
            switch kind {
            case .token, .certificate: return "apns"
            case .fcm: return "fcm"
            case .webpush: return "webpush"
            }
        }

        public var kind: Kind
        /// The bundle id for this credential's rows whose topic is NULL.
        public var topic: String?
        /// Sends per second of this credential, every worker together (`max_per_second`); nil: no cap.
        public var maxPerSecond: Double?

        public init(kind: Kind, topic: String?, maxPerSecond: Double? = nil) {
            self.kind = kind
            self.topic = topic
            self.maxPerSecond = maxPerSecond
        }
    }

    /// A credentials file that cannot be used, with a message naming the file (and the credential).
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The credentials by name.
    public var specs: [String: Spec]

    /// Parses the bytes of the credentials file `file` (the name is only used in errors).
    ///
    /// - Throws: ``Failure`` when the bytes are not a JSON object of objects, when an APNs entry
    ///   has neither `team_id`, `key_id` and `key_file` nor `cert_file`, when an FCM entry has no
    ///   `service_account_file` or has an APNs member, when a Web Push entry lacks `vapid_key_file`
    ///   or `vapid_subject` or has another provider's member, when `type` is not `apns`, `fcm` or `webpush`,
    ///   when a value is not a string (`max_per_second`: a number above 0), or when a `topic` is
    ///   empty or holds a space or a control character.
    public static func parse(_ bytes: [UInt8], file: String) throws(Failure) -> CredentialsFile {
        let entries: [String: Entry]
        do {
            entries = try JSONDecoder().decode([String: Entry].self, from: Data(bytes))
        } catch {
            throw Failure(description: "PUSHQ_CREDENTIALS_FILE \(file) is not a JSON object of credentials: \(Self.describe(error))")
        }
        var specs: [String: Spec] = [:]
        for (name, e) in entries.sorted(by: { $0.key < $1.key }) {
            if let topic = e.topic, topic.isEmpty || topic.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7f }) {
                throw Failure(description: "credential \(name) in \(file): topic must be a bundle id such as com.example.app, not \(Self.quoted(topic))")
            }
            if let cap = e.max_per_second, !(cap > 0 && cap.isFinite) {
                throw Failure(description: "credential \(name) in \(file): max_per_second must be a number above 0 (sends per second, every worker together)")
            }
            switch e.type {
            case nil, "apns":
                if e.service_account_file != nil {
                    throw Failure(description: "credential \(name) in \(file): service_account_file is for FCM: add \"type\": \"fcm\"")
                }
                if e.vapid_key_file != nil || e.vapid_subject != nil {
                    throw Failure(description: "credential \(name) in \(file): vapid_key_file and vapid_subject are for Web Push: add \"type\": \"webpush\"")
                }
            case "fcm":
                if !e.apnsMembers.isEmpty {
                    throw Failure(description: "credential \(name) in \(file): \(e.apnsMembers.joined(separator: ", ")) is for APNs, not for an FCM credential")
                }
                if e.vapid_key_file != nil || e.vapid_subject != nil {
                    throw Failure(description: "credential \(name) in \(file): vapid_key_file and vapid_subject are for Web Push, not for an FCM credential")
                }
                guard let path = e.service_account_file, !path.isEmpty else {
                    throw Failure(description: "credential \(name) in \(file): an FCM credential needs service_account_file (the service account's JSON key file)")
                }
                specs[name] = Spec(kind: .fcm(serviceAccountFile: path), topic: nil, maxPerSecond: e.max_per_second)
                continue
            case "webpush":
                let others = e.apnsMembers + (e.service_account_file == nil ? [] : ["service_account_file"])
                if !others.isEmpty {
                    throw Failure(description: "credential \(name) in \(file): \(others.joined(separator: ", ")) is not for a Web Push credential (it takes vapid_key_file and vapid_subject)")
                }
                guard let path = e.vapid_key_file, !path.isEmpty else {
                    throw Failure(description: "credential \(name) in \(file): a Web Push credential needs vapid_key_file (a P-256 private key, PEM)")
                }
                guard let subject = e.vapid_subject, !subject.isEmpty else {
                    throw Failure(description: "credential \(name) in \(file): a Web Push credential needs vapid_subject (a mailto: or https: contact, e.g. mailto:push@example.com)")
                }
                specs[name] = Spec(kind: .webpush(vapidKeyFile: path, vapidSubject: subject), topic: nil, maxPerSecond: e.max_per_second)
                continue
            case let other?:
                throw Failure(description: "credential \(name) in \(file): type must be apns, fcm or webpush, not \(Self.quoted(other))")
            }
            if let team = e.team_id, let key = e.key_id, let path = e.key_file {
                if e.cert_file != nil {
                    throw Failure(description: "credential \(name) in \(file): both a key (key_file) and a certificate (cert_file): choose one")
                }
                specs[name] = Spec(kind: .token(teamID: team, keyID: key, keyFile: path), topic: e.topic, maxPerSecond: e.max_per_second)
            } else if let cert = e.cert_file {
                specs[name] = Spec(kind: .certificate(file: cert, password: e.cert_password), topic: e.topic, maxPerSecond: e.max_per_second)
            } else {
                throw Failure(description: "credential \(name) in \(file): needs team_id, key_id and key_file, or cert_file")
            }
        }
        return CredentialsFile(specs: specs)
    }

    private struct Entry: Decodable {
        var type: String?
        var service_account_file: String?
        var team_id: String?
        var key_id: String?
        var key_file: String?
        var cert_file: String?
        var cert_password: String?
        var topic: String?
        var max_per_second: Double?
        var vapid_key_file: String?
        var vapid_subject: String?

        /// The APNs members this entry has, by name.
        var apnsMembers: [String] {
            [("team_id", team_id), ("key_id", key_id), ("key_file", key_file), ("cert_file", cert_file),
             ("cert_password", cert_password), ("topic", topic)].filter { $0.1 != nil }.map(\.0)
        }
    }

    /// A decoding error in one line, with the path of the value at fault but never a value
    /// (a password may be the one that is malformed).
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "the JSON cannot be read" }
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map(\.stringValue).joined(separator: ".")
            return keys.isEmpty ? "the top level" : keys
        }
        switch error {
        case .typeMismatch(_, let context): return "\(path(context)) has the wrong type (credentials are objects of strings; max_per_second is a number)"
        case .valueNotFound(_, let context): return "\(path(context)) is null"
        case .keyNotFound(let key, _): return "\(key.stringValue) is missing"
        case .dataCorrupted(let context): return context.codingPath.isEmpty ? "it is not valid JSON" : "\(path(context)) cannot be read"
        @unknown default: return "the JSON cannot be read"
        }
    }

    /// `topic` quoted for a message, at most 64 characters, control characters escaped.
    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars.prefix(64) {
            out += scalar.value < 0x20 || scalar.value == 0x7f ? scalar.escaped(asASCII: true) : String(scalar)
        }
        return out + (text.unicodeScalars.count > 64 ? "…\"" : "\"")
    }
}
