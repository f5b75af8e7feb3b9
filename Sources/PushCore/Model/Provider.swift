/// The push service a notification goes through: a row's `provider` column.
public enum Provider: String, Sendable, Hashable, CaseIterable {
    /// Apple Push Notification service (HTTP/2, token or certificate authentication).
    case apns
    /// Firebase Cloud Messaging, HTTP v1 API (OAuth 2.0 service account).
    case fcm
    /// Web Push (RFC 8030, 8291, 8292): one subscription endpoint per row, on any push service.
    case webpush

    /// The provider's name for messages: `APNs`, `FCM` or `Web Push`.
    public var serviceName: String {
        switch self {
        case .apns: return "APNs"
        case .fcm: return "FCM"
        case .webpush: return "Web Push"
        }
    }
}
