import PushCore

/// How a sender authenticates to push services for Web Push (RFC 8292, VAPID): the P-256 key that
/// signs the `Authorization: vapid` tokens and the subject they name.
///
/// One credential speaks to every origin (unlike APNs and FCM, whose credential belongs to one
/// host). `PUSHQ_WEBPUSH_VAPID_KEY_FILE` with `PUSHQ_WEBPUSH_VAPID_SUBJECT` give the `default` one,
/// a credentials-file entry `{"type": "webpush", "vapid_key_file": …, "vapid_subject": …}` a named one.
public struct WebPushCredential: Sendable {
    /// The VAPID key; its public half is the `applicationServerKey` subscriptions were made with.
    public let key: VAPIDKey
    /// The contact every token names (`sub`).
    public let subject: VAPIDSubject

    public init(key: VAPIDKey, subject: VAPIDSubject) {
        self.key = key
        self.subject = subject
    }

    /// The key read from `keyFile` (PEM, PKCS#8 or SEC1, P-256) with `subject` checked first, so
    /// that a bad subject is told before any file is read.
    ///
    /// - Throws: ``VAPIDSubjectError`` for a subject push services refuse; ``PushTransportError``
    ///   `.invalidKey` naming the file (never the key) for a key that cannot be read.
    public init(keyFile: String, subject: String) throws {
        let checked = try VAPIDSubject(subject)
        self.init(key: try VAPIDKey(file: keyFile), subject: checked)
    }
}
