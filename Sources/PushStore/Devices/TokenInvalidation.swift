import PushCore
import PGClient

/// A token to record as invalid in `pushq.devices`: an APNs token lower-case in its environment,
/// an FCM token or a Web Push endpoint as given (byte for byte) with environment `production`.
public struct TokenInvalidation: Sendable, Hashable {
    public var deviceToken: String
    /// The APNs environment; always `.production` for FCM.
    public var environment: APNsEnvironment
    /// `Unregistered`, `ExpiredToken`, `BadDeviceToken` (APNs); `UNREGISTERED`, `INVALID_ARGUMENT` (FCM);
    /// `NotFound`, `Gone` (Web Push).
    public var reason: String
    /// Milliseconds since the epoch; nil for "now" (database clock).
    public var atMilliseconds: Int64?
    public var provider: Provider

    public init(deviceToken: String, environment: APNsEnvironment, reason: String, atMilliseconds: Int64?, provider: Provider = .apns) {
        self.deviceToken = deviceToken
        self.environment = provider == .apns ? environment : .production
        self.reason = reason
        self.atMilliseconds = atMilliseconds
        self.provider = provider
    }

    /// The token as `pushq.devices` keys it: lower-case for APNs, as given for FCM and Web Push.
    var storedToken: String { provider == .apns ? deviceToken.lowercased() : deviceToken }
}

/// A token APNs throttled (429): other rows for it wait until `delay` seconds from now (APNs
/// rows only: the claim never checks throttles for FCM rows).
public struct TokenThrottle: Sendable, Hashable {
    public var deviceToken: String
    public var environment: APNsEnvironment
    public var delaySeconds: Double

    public init(deviceToken: String, environment: APNsEnvironment, delaySeconds: Double) {
        self.deviceToken = deviceToken
        self.environment = environment
        self.delaySeconds = delaySeconds
    }
}

/// What one ``PGConnection/complete(_:invalidations:throttles:holds:resumed:workerID:)`` wrote.
public struct CompletionWrite: Sendable {
    /// Rows updated.
    public var updated = 0
    /// Holds written by this call (new, or of a higher kind than the one they replaced).
    public var heldNow: [HoldRequest] = []
    /// Holds deleted by this call, with their kind and reason.
    public var lifted: [HeldEndpoint] = []

    public init() {}
}
