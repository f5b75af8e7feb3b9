/// Where a notification goes: one credential in one APNs environment, or one FCM credential.
///
/// Connections, pauses, outages and burst detection are all per endpoint: tokens belong
/// to one environment, and one connection never mixes keys. Credential names are per
/// provider: the APNs credential `default` and the FCM credential `default` are two endpoints.
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// The credential's name (`"default"` for rows whose `credential` is NULL).
    public var credential: String
    /// The APNs environment; always `.production` for FCM, which has none.
    public var environment: APNsEnvironment
    public var provider: Provider

    public init(credential: String, environment: APNsEnvironment, provider: Provider = .apns) {
        self.credential = credential
        self.environment = provider == .fcm ? .production : environment
        self.provider = provider
    }

    /// An FCM credential's endpoint.
    public static func fcm(_ credential: String) -> Endpoint {
        Endpoint(credential: credential, environment: .production, provider: .fcm)
    }

    /// The endpoint's second key in the database (`pushq.credential_pauses.environment`) and
    /// its `environment` label in metrics: `production` or `development` for APNs, `fcm` for FCM.
    public var channel: String { provider == .fcm ? Self.fcmChannel : environment.rawValue }

    /// ``channel`` of every FCM endpoint.
    public static let fcmChannel = "fcm"

    /// The endpoint a ``channel`` value names, nil for an unknown one.
    public init?(credential: String, channel: String) {
        if channel == Self.fcmChannel {
            self = .fcm(credential)
        } else if let environment = APNsEnvironment(rawValue: channel) {
            self.init(credential: credential, environment: environment)
        } else {
            return nil
        }
    }

    /// The provider's name for messages: `APNs` or `FCM`.
    public var serviceName: String { provider.serviceName }

    public var description: String { "\(credential) (\(channel))" }
}

/// Why every worker holds back an endpoint's rows (a row of `pushq.credential_pauses`).
public enum HoldKind: String, Sendable, Hashable, CaseIterable {
    /// APNs rejected the credential as a whole (bad key, revoked certificate, wrong clock).
    case credential
    /// Most recent answers were `BadDeviceToken` or `DeviceTokenNotForTopic`: a wrong
    /// environment or topic, not bad tokens.
    case burst
    /// APNs cannot be reached or answers only 5xx.
    case outage
}

/// A hold for the worker to record: every worker skips the endpoint's rows until its probe
/// succeeds.
public struct HoldRequest: Sendable, Hashable {
    public var endpoint: Endpoint
    public var kind: HoldKind
    /// `InvalidProviderToken`, `BadDeviceTokenBurst`, `ServiceUnavailable`, `TransportConnectFailed`...
    public var reason: String
    /// One sentence for operators: what happened and what to check.
    public var message: String
    /// Seconds until the first probe when the service said how long to wait (FCM's
    /// `Retry-After` on QUOTA_EXCEEDED); nil to follow ``HoldPolicy``.
    public var seconds: Double?

    public init(endpoint: Endpoint, kind: HoldKind, reason: String, message: String, seconds: Double? = nil) {
        self.endpoint = endpoint
        self.kind = kind
        self.reason = reason
        self.message = message
        self.seconds = seconds
    }
}
