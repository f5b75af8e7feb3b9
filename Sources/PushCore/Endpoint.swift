/// Where a notification goes: one credential in one APNs environment.
///
/// Connections, pauses, outages and burst detection are all per endpoint: tokens belong
/// to one environment, and one connection never mixes keys.
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// The credential's name (`"default"` for rows whose `credential` is NULL).
    public var credential: String
    public var environment: APNsEnvironment

    public init(credential: String, environment: APNsEnvironment) {
        self.credential = credential
        self.environment = environment
    }

    public var description: String { "\(credential) (\(environment.rawValue))" }
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

    public init(endpoint: Endpoint, kind: HoldKind, reason: String, message: String) {
        self.endpoint = endpoint
        self.kind = kind
        self.reason = reason
        self.message = message
    }
}
