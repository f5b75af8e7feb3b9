/// An error from a sender: a key, certificate, libcurl or configuration problem (FCM's
/// service accounts and token exchanges have ``FCMTransportError``).
///
/// `description` is one sentence naming the file, variable or library call at fault and
/// carrying the library's own message. It never contains a key, a password or a token.
public struct PushTransportError: Error, Sendable, CustomStringConvertible {
    /// What kind of problem this is.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let name: String
        public var description: String { name }
        /// The `.p8` key could not be read or is not a P-256 PKCS#8 key.
        public static let invalidKey = Code(name: "invalidKey")
        /// OpenSSL failed to sign a provider token.
        public static let signingFailed = Code(name: "signingFailed")
        /// The client certificate (PKCS#12 or PEM) could not be read or decrypted.
        public static let invalidCertificate = Code(name: "invalidCertificate")
        /// The installed libcurl cannot do what pushq needs (HTTP/2, version ≥ 7.77.0).
        public static let unsupportedLibcurl = Code(name: "unsupportedLibcurl")
        /// A libcurl call failed while setting up handles.
        public static let curlSetup = Code(name: "curlSetup")
        /// A configuration value is missing or malformed.
        public static let configuration = Code(name: "configuration")
        /// The sender was used in a state that does not allow it (not started, shut down).
        public static let invalidState = Code(name: "invalidState")
    }

    public var code: Code
    public var message: String
    public var cause: (any Error & Sendable)?

    public init(_ code: Code, _ message: String, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String {
        if let cause { return "\(message) (\(cause))" }
        return message
    }
}
