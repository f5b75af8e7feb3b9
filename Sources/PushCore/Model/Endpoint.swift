/// Where a notification goes: one credential in one APNs environment, one FCM credential, or
/// one Web Push credential at one origin (push service).
///
/// Connections, pauses, outages and burst detection are all per endpoint: tokens belong
/// to one environment, and one connection never mixes keys. Credential names are per
/// provider: the APNs credential `default` and the FCM credential `default` are two endpoints.
///
/// A Web Push credential speaks to many origins (FCM's, Mozilla's, Apple's, self-hosted ones),
/// any of which a subscriber chooses: its rows' endpoints carry their ``origin``, so that one
/// slow, dead or refusing origin holds only its own rows. The credential's sender is the endpoint
/// without an origin (``webPush(_:origin:)`` with nil), which serves every origin.
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// The credential's name (`"default"` for rows whose `credential` is NULL).
    public var credential: String
    /// The APNs environment; always `.production` for FCM and Web Push, which have none.
    public var environment: APNsEnvironment
    public var provider: Provider
    /// Web Push: the origin (`https://host[:port]`) of the rows' endpoints; nil for the credential
    /// as a whole, and for APNs and FCM.
    public var origin: WebPushOrigin?

    public init(credential: String, environment: APNsEnvironment, provider: Provider = .apns) {
        self.credential = credential
        self.environment = provider == .apns ? environment : .production
        self.provider = provider
        self.origin = nil
    }

    /// An FCM credential's endpoint.
    public static func fcm(_ credential: String) -> Endpoint {
        Endpoint(credential: credential, environment: .production, provider: .fcm)
    }

    /// A Web Push credential's endpoint at `origin`, or the credential as a whole (nil).
    public static func webPush(_ credential: String, origin: WebPushOrigin?) -> Endpoint {
        var e = Endpoint(credential: credential, environment: .production, provider: .webpush)
        e.origin = origin
        return e
    }

    /// The endpoint's second key in the database (`pushq.credential_pauses.environment`):
    /// `production` or `development` for APNs, `fcm` for FCM; for Web Push its origin as RFC 6454
    /// serialises it (`https://host`, or `https://host:port` for a port other than 443; the host
    /// lower-cased), `webpush` without an origin. Never a metric label: an origin is whatever a
    /// subscriber wrote (``metricEnvironment`` is the label).
    public var channel: String {
        switch provider {
        case .apns: return environment.rawValue
        case .fcm: return Self.fcmChannel
        case .webpush: return origin?.description ?? Self.webPushChannel
        }
    }

    /// This endpoint without its Web Push origin: the credential as a whole (itself for APNs and FCM).
    public var withoutOrigin: Endpoint {
        var e = self
        e.origin = nil
        return e
    }

    /// The endpoint's `environment` label in metrics: a closed set, ``channel`` but `webpush` for
    /// every Web Push endpoint whatever its origin.
    public var metricEnvironment: String { provider == .webpush ? Self.webPushChannel : channel }

    /// ``channel`` of every FCM endpoint.
    public static let fcmChannel = "fcm"

    /// ``channel`` of a Web Push credential without an origin, and ``metricEnvironment`` of every
    /// Web Push endpoint.
    public static let webPushChannel = "webpush"

    /// The endpoint a ``channel`` value names, nil for an unknown one.
    public init?(credential: String, channel: String) {
        if channel == Self.fcmChannel {
            self = .fcm(credential)
        } else if channel == Self.webPushChannel {
            self = .webPush(credential, origin: nil)
        } else if channel.hasPrefix("https://") {
            guard case .success(let origin) = WebPushOrigin.parse(channel) else { return nil }
            self = .webPush(credential, origin: origin)
        } else if let environment = APNsEnvironment(rawValue: channel) {
            self.init(credential: credential, environment: environment)
        } else {
            return nil
        }
    }

    /// The provider's name for messages: `APNs`, `FCM` or `Web Push`.
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
