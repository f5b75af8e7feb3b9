/// A Google service account the mock's FCM token endpoint knows.
public struct MockFCMServiceAccount: Sendable, Hashable {
    /// `client_email`: the assertion's `iss`.
    public var clientEmail: String
    /// The Firebase project its access tokens may send to.
    public var projectID: String
    /// A PEM file with the account's RSA public key (or the private key itself).
    public var publicKeyPEMPath: String
    /// The `private_key_id` the assertion's `kid` must name; nil accepts any `kid`.
    public var keyID: String?

    public init(clientEmail: String, projectID: String, publicKeyPEMPath: String, keyID: String? = nil) {
        self.clientEmail = clientEmail
        self.projectID = projectID
        self.publicKeyPEMPath = publicKeyPEMPath
        self.keyID = keyID
    }
}

/// The mock's FCM HTTP v1 side: a token endpoint and `messages:send`, on the same
/// port (the paths do not overlap).
///
/// Defaults: no accounts (every assertion is refused), access tokens live 3600 s, the
/// token endpoint is `POST /token`, and the assertion's `aud` must be
/// `https://127.0.0.1:<port>/token` or `https://localhost:<port>/token` for the port the
/// request arrived on.
public struct MockFCMConfiguration: Sendable, Hashable {
    /// Accounts whose assertions are accepted.
    public var serviceAccounts: [MockFCMServiceAccount]
    /// Lifetime of the access tokens issued (`expires_in`), seconds. Also settable at run time.
    public var accessTokenLifetimeSeconds: Int64
    /// Path of the token endpoint.
    public var tokenPath: String
    /// Audiences accepted besides the mock's own token URL (e.g. Google's), for tests that
    /// sign with another `token_uri`. Defaults to none.
    public var extraAudiences: [String]
    /// SETTINGS_MAX_CONCURRENT_STREAMS a connection gets once an authenticated `messages:send`
    /// succeeds on it, as Google's front end advertises: 100. (Before that, the connection has
    /// the mock's opening limit: 1 with `limitStreamsUntilFirstValidToken`.)
    public var maxConcurrentStreams: Int

    public init(serviceAccounts: [MockFCMServiceAccount] = [], accessTokenLifetimeSeconds: Int64 = 3600,
                tokenPath: String = "/token", extraAudiences: [String] = [], maxConcurrentStreams: Int = 100) {
        self.serviceAccounts = serviceAccounts
        self.accessTokenLifetimeSeconds = accessTokenLifetimeSeconds
        self.tokenPath = tokenPath
        self.extraAudiences = extraAudiences
        self.maxConcurrentStreams = maxConcurrentStreams
    }
}
