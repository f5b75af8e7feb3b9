/// How a sender authenticates to APNs: a provider-token key or a TLS client certificate.
public enum APNsCredential: Sendable {
    /// Token authentication: every request carries `authorization: bearer <JWT>` from this manager.
    /// Share one manager between all senders using the same (team, key).
    case token(ProviderTokenManager)
    /// Certificate authentication: a TLS client certificate; no `authorization` header.
    case certificate(APNsClientCertificate)

    /// For certificate authentication, what libcurl needs to present the certificate and its
    /// notAfter (UNIX seconds), checked now; nil for token authentication.
    ///
    /// - Throws: ``PushTransportError`` for a certificate that cannot be opened (the message names the file).
    func checkedClientCertificate() throws -> (options: CurlClientCertificate, notAfter: Int64?)? {
        guard case .certificate(let certificate) = self else { return nil }
        return (certificate.curlOptions, try certificate.validate())
    }

    /// Token authentication with a key read from a `.p8` file.
    ///
    /// - Throws: ``PushTransportError`` naming the file or the malformed id.
    public static func token(teamID: String, keyID: String, keyFile: String) throws -> APNsCredential {
        .token(try ProviderTokenManager(teamID: teamID, keyID: keyID, keyFile: keyFile))
    }
}

/// A TLS client certificate for APNs certificate authentication.
public struct APNsClientCertificate: Sendable {
    /// The file format.
    public enum Format: Sendable, Hashable {
        /// PKCS#12 (`.p12`): certificate and key in one file (`CURLOPT_SSLCERTTYPE "P12"`).
        case pkcs12
        /// PEM certificate, with the key in `keyFile` or in the same file.
        case pem(keyFile: String?)
    }

    public var file: String
    public var format: Format
    /// Password of the PKCS#12 file or of the PEM key. Secret: never logged.
    public var password: String?

    /// - Parameters:
    ///   - file: `PUSHQ_APNS_CERT_FILE`.
    ///   - format: `.pkcs12`, or `.pem(keyFile:)`. Use ``detectingFormat(file:password:)`` to guess from the name.
    ///   - password: `PUSHQ_APNS_CERT_PASSWORD`.
    public init(file: String, format: Format, password: String? = nil) {
        self.file = file
        self.format = format
        self.password = password
    }

    /// What libcurl needs to present it (`CURLOPT_SSLCERT`, `CURLOPT_SSLCERTTYPE`...).
    var curlOptions: CurlClientCertificate {
        switch format {
        case .pkcs12: return CurlClientCertificate(file: file, type: "P12", keyFile: nil, password: password)
        case .pem(let keyFile): return CurlClientCertificate(file: file, type: "PEM", keyFile: keyFile ?? file, password: password)
        }
    }

    /// `.pem` for files ending in `.pem`, `.crt` or `.cer`, PKCS#12 otherwise.
    public static func detectingFormat(file: String, password: String?) -> APNsClientCertificate {
        let lower = file.lowercased()
        let isPEM = lower.hasSuffix(".pem") || lower.hasSuffix(".crt") || lower.hasSuffix(".cer")
        return APNsClientCertificate(file: file, format: isPEM ? .pem(keyFile: nil) : .pkcs12, password: password)
    }
}
