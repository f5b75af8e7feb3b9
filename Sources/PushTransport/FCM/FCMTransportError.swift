import PushCore

/// An error from the FCM side of the transport: a service-account file, its key, the OAuth
/// exchange, or libcurl.
///
/// `description` is one sentence naming the file, field or endpoint at fault and saying
/// what to fix. It never contains the private key, an assertion or an access token.
public struct FCMTransportError: Error, Sendable, CustomStringConvertible {
    /// What kind of problem this is.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let name: String
        public var description: String { name }
        /// The service-account JSON file is unreadable, not JSON, or lacks or mangles a field.
        public static let invalidServiceAccount = Code(name: "invalidServiceAccount")
        /// OpenSSL failed to sign an assertion.
        public static let signingFailed = Code(name: "signingFailed")
        /// The token endpoint answered, but refused: see ``FCMTransportError/refusal``.
        public static let tokenRefused = Code(name: "tokenRefused")
        /// The token endpoint could not be reached or did not answer in time (libcurl's message).
        public static let tokenEndpointUnreachable = Code(name: "tokenEndpointUnreachable")
        /// The token endpoint's TLS certificate did not verify against the trusted CAs.
        public static let tokenEndpointUntrusted = Code(name: "tokenEndpointUntrusted")
        /// A libcurl call failed while setting up the exchange.
        public static let curlSetup = Code(name: "curlSetup")
        /// A configuration value (CA file, timeouts) is missing or malformed.
        public static let configuration = Code(name: "configuration")
    }

    public var code: Code
    public var message: String
    /// For ``Code/tokenRefused``: what the endpoint said, classified.
    public var refusal: FCMTokenRefusal?

    public init(_ code: Code, _ message: String, refusal: FCMTokenRefusal? = nil) {
        self.code = code
        self.message = message
        self.refusal = refusal
    }

    /// Whether trying again later may work without anyone changing anything (an unreachable
    /// or overloaded token endpoint). Otherwise the credential should be paused with ``description``.
    public var isTransient: Bool {
        code == .tokenEndpointUnreachable || (refusal?.isTransient ?? false)
    }

    public var description: String { message }
}
