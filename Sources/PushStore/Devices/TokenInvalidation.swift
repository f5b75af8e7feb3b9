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
        // (Its environment in pushq.devices: the row's for APNs, always production for the others.)
        if case .fixed = TokenKey.of(provider).registry { self.environment = .production } else { self.environment = environment }
        self.reason = reason
        self.atMilliseconds = atMilliseconds
        self.provider = provider
    }

    /// The token as `pushq.devices` keys it: lower-case for APNs, as given for FCM and Web Push.
    var storedToken: String { provider.storedToken(deviceToken) }
}

extension Provider {
    /// A token as this provider matches it, in `pushq.devices` and `pushq.token_throttles`:
    /// lower-case for APNs (hex, any case), byte for byte for FCM and Web Push (an endpoint URL's
    /// path is case-sensitive).
    func storedToken(_ token: String) -> String { TokenKey.of(self).lowercased ? token.lowercased() : token }
}

/// A token its push service throttled (APNs `TooManyRequests`, a Web Push 429): the claim sets
/// its other rows aside until `delay` seconds from now, whichever provider they go to.
///
/// `pushq.token_throttles` is keyed by (token, environment): an APNs token lower-case in its
/// environment; any other provider's token as given, with the provider's name in `environment`
/// (an endpoint cannot collide with an APNs token of the same text). The claim's check
/// (`ClaimStatement.throttleMatch`) computes the same key from the row (both from ``TokenKey``).
public struct TokenThrottle: Sendable, Hashable {
    public var deviceToken: String
    public var environment: APNsEnvironment
    public var delaySeconds: Double
    public var provider: Provider

    public init(deviceToken: String, environment: APNsEnvironment, delaySeconds: Double, provider: Provider = .apns) {
        self.deviceToken = deviceToken
        self.environment = environment
        self.delaySeconds = delaySeconds
        self.provider = provider
    }

    /// The row's key in `pushq.token_throttles`.
    var storedToken: String { provider.storedToken(deviceToken) }
    var storedEnvironment: String { (TokenKey.of(provider).throttle ?? .fixed(provider.rawValue)).value(environment) }
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
