import PushCore
import PushTransport

/// A credential a worker sends with: the value of ``WorkerConfiguration/credentials``, one case
/// per provider. A provider added later is one case here, and the compiler then names every
/// place that must learn it (its sender, its check at start).
public enum Credential: Sendable {
    /// APNs token (`.p8` key) or certificate authentication.
    case apns(APNsCredential)
    /// An FCM service account (OAuth 2.0 for server-to-server).
    case fcm(FCMServiceAccount)
    /// A Web Push VAPID key and its subject; one credential reaches every push service's origin.
    case webpush(WebPushCredential)

    /// The provider this credential sends through.
    public var provider: Provider {
        switch self {
        case .apns: return .apns
        case .fcm: return .fcm
        case .webpush: return .webpush
        }
    }
}

extension WorkerConfiguration {
    /// The APNs credential named `name`, nil when this worker has none by that name.
    public func apnsCredential(_ name: String) -> APNsCredential? {
        if case .apns(let credential)? = credentials[CredentialKey(.apns, name)] { return credential }
        return nil
    }

    /// The FCM service account named `name`, nil when this worker has none by that name.
    public func fcmAccount(_ name: String) -> FCMServiceAccount? {
        if case .fcm(let account)? = credentials[CredentialKey(.fcm, name)] { return account }
        return nil
    }

    /// The Web Push credential named `name`, nil when this worker has none by that name.
    public func webPushCredential(_ name: String) -> WebPushCredential? {
        if case .webpush(let credential)? = credentials[CredentialKey(.webpush, name)] { return credential }
        return nil
    }

    /// The names of this worker's credentials of `provider`, sorted.
    public func credentialNames(_ provider: Provider) -> [String] { credentials.names(of: provider) }
}
