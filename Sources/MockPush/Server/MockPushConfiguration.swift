/// A provider-token signing key the mock accepts: JWTs whose header names `keyID`
/// must carry `iss == teamID` and verify against the public key in `publicKeyPEMPath`.
public struct MockTokenKey: Sendable, Hashable {
    /// The 10-character key id Apple assigns (the JWT header's `kid`).
    public var keyID: String
    /// The team that owns the key (the JWT claim `iss`).
    public var teamID: String
    /// A PEM file holding the P-256 public key (`-----BEGIN PUBLIC KEY-----`), or the
    /// PKCS#8 private key itself (`.p8`): the public half is derived from it.
    public var publicKeyPEMPath: String

    public init(keyID: String, teamID: String, publicKeyPEMPath: String) {
        self.keyID = keyID
        self.teamID = teamID
        self.publicKeyPEMPath = publicKeyPEMPath
    }
}

/// The APNs environment the mock plays: what its answers look like.
public enum MockAPNsEnvironment: String, Sendable, CaseIterable, Hashable {
    /// `api.push.apple.com`.
    case production
    /// `api.sandbox.push.apple.com`: every answer also carries `apns-unique-id`, as Apple's
    /// sandbox does ("Handling notification responses from APNs", `apns-unique-id`).
    case development
}

/// Everything a ``MockPushServer`` needs to start: TLS material, the APNs token keys and bundle
/// ids it accepts, the FCM service accounts, faults at start and recording.
///
/// ``MockPushFixtures/configuration(certificateAuth:)`` builds one over generated fixtures.
///
/// Defaults (see `init`): bind `127.0.0.1:0`, production environment, no client CA
/// (token auth only), 1000 streams per connection, 1 stream until the first request
/// with a valid token succeeds, requests and bodies recorded (at most 100,000),
/// one event-loop thread, the wall clock.
public struct MockPushConfiguration: Sendable {
    /// Address to bind. Only loopback is allowed: `127.0.0.1` (default) or `localhost`.
    public var host: String
    /// Port to bind; 0 (default) picks an ephemeral port, reported by `start()`.
    public var port: Int
    /// Port of the channel-management API (Apple's separate host on 2196 / 2195); 0 (default)
    /// picks an ephemeral port, reported by ``MockPushServer/managementPort``.
    public var managementPort: Int
    /// Server certificate chain, PEM (e.g. ``MockPushFixtures/serverCertificatePath``).
    public var certificatePath: String
    /// Server private key, PEM (e.g. ``MockPushFixtures/serverKeyPath``).
    public var privateKeyPath: String
    /// When set, clients may present a certificate; it must verify against this CA (PEM).
    /// A request without `authorization` is then accepted when the client certificate
    /// verified (certificate auth). Defaults to nil (token auth only).
    public var clientCAPath: String?
    /// Provider-token keys accepted, by key id.
    public var tokenKeys: [MockTokenKey]
    /// Bundle ids whose topics are allowed (`apns-topic` = bundle id + the push type's suffix).
    public var bundleIDs: [String]
    /// `.development` adds `apns-unique-id` to every answer, as Apple's sandbox does.
    /// Defaults to `.production`.
    public var environment: MockAPNsEnvironment
    /// SETTINGS_MAX_CONCURRENT_STREAMS once a connection is in good standing. Defaults to 1000.
    public var maxConcurrentStreams: Int
    /// Advertise 1 stream on a new connection until its first request with a valid
    /// token (or certificate) succeeds, then raise to `maxConcurrentStreams`. Defaults to true.
    public var limitStreamsUntilFirstValidToken: Bool
    /// The FCM HTTP v1 endpoints (token exchange, `messages:send`). Defaults to no accounts.
    public var fcm: MockFCMConfiguration
    /// Connection faults in force at start (also settable at run time). Defaults to none.
    public var faults: MockConnectionFaults
    /// Record each request (headers, token, times, answer). Defaults to true.
    /// Turn off for benchmarks: counters in `stats()` are kept either way.
    public var recordRequests: Bool
    /// Keep request bodies in the records. Defaults to true.
    public var recordBodies: Bool
    /// Stop recording (counting `recordsDropped`) after this many records. Defaults to 100,000.
    public var maxRecordedRequests: Int
    /// Event-loop threads. Defaults to 1.
    public var eventLoopThreads: Int
    /// Tolerated future skew of a JWT's `iat`, seconds. Defaults to 60.
    public var jwtFutureSkewSeconds: Int64
    /// The mock's clock, UNIX seconds: JWT age and the 20-minute token-switch rule use it,
    /// so tests can move time without waiting. Defaults to the wall clock.
    public var clock: @Sendable () -> Int64

    public init(
        certificatePath: String,
        privateKeyPath: String,
        tokenKeys: [MockTokenKey] = [],
        bundleIDs: [String] = []
    ) {
        self.host = "127.0.0.1"
        self.port = 0
        self.managementPort = 0
        self.certificatePath = certificatePath
        self.privateKeyPath = privateKeyPath
        self.clientCAPath = nil
        self.tokenKeys = tokenKeys
        self.bundleIDs = bundleIDs
        self.environment = .production
        self.maxConcurrentStreams = 1000
        self.limitStreamsUntilFirstValidToken = true
        self.faults = MockConnectionFaults()
        self.fcm = MockFCMConfiguration()
        self.recordRequests = true
        self.recordBodies = true
        self.maxRecordedRequests = 100_000
        self.eventLoopThreads = 1
        self.jwtFutureSkewSeconds = 60
        self.clock = MockClock.wallSeconds
    }
}
