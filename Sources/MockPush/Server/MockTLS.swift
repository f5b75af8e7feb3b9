import NIOSSL

/// The server's TLS context: TLS 1.2+, ALPN `h2` (or `http/1.1` for an HTTP/1.1-only Web Push
/// origin), and optional client certificates verified against the configured CA.
enum MockTLS {
    /// - Parameter applicationProtocols: what ALPN offers: `h2` for every listener but the
    ///   HTTP/1.1-only Web Push origins (`http/1.1`).
    /// - Throws: `MockPushError.tlsSetupFailed` naming the file that could not be used.
    static func makeContext(_ configuration: MockPushConfiguration, applicationProtocols: [String] = ["h2"]) throws -> NIOSSLContext {
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
        tls.applicationProtocols = applicationProtocols
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
