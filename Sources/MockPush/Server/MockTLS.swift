import NIOSSL

/// The server's TLS context: TLS 1.2+, ALPN `h2`, and optional client certificates
/// verified against the configured CA.
enum MockTLS {
    /// - Throws: `MockPushError.tlsSetupFailed` naming the file that could not be used.
    static func makeContext(_ configuration: MockPushConfiguration) throws -> NIOSSLContext {
        let chain: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMFile(configuration.certificatePath)
        } catch {
            throw MockPushError(.tlsSetupFailed, "cannot read the server certificate \(configuration.certificatePath)", cause: error)
        }
        do {
            key = try NIOSSLPrivateKey(file: configuration.privateKeyPath, format: .pem)
        } catch {
            throw MockPushError(.tlsSetupFailed, "cannot read the server private key \(configuration.privateKeyPath)", cause: error)
        }
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = ["h2"]
        if let caPath = configuration.clientCAPath {
            tls.certificateVerification = .optionalVerification
            tls.trustRoots = .file(caPath)
        }
        do {
            return try NIOSSLContext(configuration: tls)
        } catch {
            throw MockPushError(.tlsSetupFailed, "cannot build the TLS context (client CA \(configuration.clientCAPath ?? "none"))", cause: error)
        }
    }
}
