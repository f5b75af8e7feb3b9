#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import Logging
import NIOCore
import NIOSSL
import Synchronization

/// serve's own certificate chain and private key (`PUSHQ_HTTP_TLS_CERT`, `PUSHQ_HTTP_TLS_KEY`),
/// re-read when either file changes, or on SIGHUP (``reload()``), so that a renewal
/// (cert-manager rewriting its secret, an operator moving new files into place) reaches the next
/// connections without a restart.
///
/// Every TLS handshake asks ``current()`` through NIOSSL's `sslContextCallback`, which `stat`s
/// both files (device, inode, size, modification time: two system calls, nothing beside a
/// handshake's own cost) and reads them again only when one of these changed. A new pair is
/// used only once it loads and its key is its first certificate's (the public halves compared);
/// otherwise the last good pair stays and one error names the file, logged once
/// per version of the files, not at every handshake. The files are small and read on the event
/// loop of the handshake that first sees the change.
final class ServeCertificate: Sendable {
    let certificateFile: String
    let keyFile: String
    private let logger: Logger
    private let state: Mutex<State>

    /// Where each file stood when last read: a change of any field is a new version.
    struct Version: Equatable {
        var device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int
    }

    struct Loaded {
        var chain: [NIOSSLCertificate]
        var key: NIOSSLPrivateKey
        var versions: [Version?]
    }

    struct State {
        var current: Loaded
        /// The versions of the files last refused (logged once).
        var refused: [Version?]?
    }

    /// Reads the pair.
    ///
    /// - Throws: ``ServeError`` naming the variable and file that cannot be read or used.
    init(certificateFile: String, keyFile: String, logger: Logger) throws {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.logger = logger
        let versions = [Self.version(certificateFile), Self.version(keyFile)]
        state = Mutex(State(current: try Self.load(certificateFile: certificateFile, keyFile: keyFile, versions: versions), refused: nil))
    }

    /// serve's TLS: TLS 1.2 at least; the certificate and key of each handshake are this pair's
    /// as it stands then (``current()``).
    func tlsConfiguration() -> TLSConfiguration {
        let (chain, key) = current()
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        configuration.sslContextCallback = { [self] _, promise in
            let (chain, key) = current()
            var override = NIOSSLContextConfigurationOverride()
            override.certificateChain = chain.map { .certificate($0) }
            override.privateKey = .privateKey(key)
            promise.succeed(override)
        }
        return configuration
    }

    /// The pair to present now: read again when a file changed since it was last read, the last
    /// good one when the new files cannot be used.
    func current() -> ([NIOSSLCertificate], NIOSSLPrivateKey) {
        let versions = [Self.version(certificateFile), Self.version(keyFile)]
        return state.withLock { state in
            if versions != state.current.versions, versions != state.refused { reread(&state, versions: versions) }
            return (state.current.chain, state.current.key)
        }
    }

    /// Reads the pair again now, whether or not the files look changed (SIGHUP: a file
    /// rewritten in place within one tick of its modification time looks the same to `stat`).
    /// A pair that cannot be used is logged and the last good one stays, as in ``current()``.
    func reload() {
        let versions = [Self.version(certificateFile), Self.version(keyFile)]
        state.withLock { reread(&$0, versions: versions) }
    }

    private func reread(_ state: inout State, versions: [Version?]) {
        do {
            state.current = try Self.load(certificateFile: certificateFile, keyFile: keyFile, versions: versions)
            state.refused = nil
            logger.notice("serve's certificate re-read", metadata: ["tls.certificate": "\(certificateFile)", "tls.key": "\(keyFile)"])
        } catch {
            state.refused = versions
            logger.error("serve's new certificate or key cannot be used; the previous pair is still served: \(error)",
                         metadata: ["tls.certificate": "\(certificateFile)", "tls.key": "\(keyFile)"])
        }
    }

    static func load(certificateFile: String, keyFile: String, versions: [Version?]) throws(ServeError) -> Loaded {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateFile)
        } catch {
            throw ServeError("PUSHQ_HTTP_TLS_CERT \(certificateFile): not a readable PEM certificate chain (\(error))")
        }
        guard !chain.isEmpty else { throw ServeError("PUSHQ_HTTP_TLS_CERT \(certificateFile): no certificate in the file") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
        } catch {
            throw ServeError("PUSHQ_HTTP_TLS_KEY \(keyFile): not a readable PEM private key (\(error))")
        }
        guard let certified = try? chain[0].extractPublicKey().toSPKIBytes(), certified == publicKey(of: key) else {
            throw ServeError("PUSHQ_HTTP_TLS_KEY \(keyFile) is not the key of the first certificate in PUSHQ_HTTP_TLS_CERT \(certificateFile)")
        }
        return Loaded(chain: chain, key: key, versions: versions)
    }

    /// The public half of `key` as SubjectPublicKeyInfo DER (what the certificate holds), by
    /// OpenSSL; nil when it cannot be derived.
    static func publicKey(of key: NIOSSLPrivateKey) -> [UInt8]? {
        guard let der = try? key.derBytes else { return nil }
        return der.withUnsafeBufferPointer { buffer -> [UInt8]? in
            var input = buffer.baseAddress
            guard let pkey = d2i_AutoPrivateKey(nil, &input, buffer.count) else {
                ERR_clear_error()
                return nil
            }
            defer { EVP_PKEY_free(pkey) }
            let length = i2d_PUBKEY(pkey, nil)
            guard length > 0 else { return nil }
            var out = [UInt8](repeating: 0, count: Int(length))
            let written = out.withUnsafeMutableBufferPointer { outBuffer -> Int32 in
                var cursor = outBuffer.baseAddress
                return i2d_PUBKEY(pkey, &cursor)
            }
            return written == length ? out : nil
        }
    }

    /// The file's version as `stat` (following links, as a Kubernetes secret's are) sees it; nil
    /// when it cannot be seen.
    static func version(_ path: String) -> Version? {
        var s = stat()
        guard stat(path, &s) == 0 else { return nil }
        return Version(device: UInt64(s.st_dev), inode: UInt64(s.st_ino), size: Int64(s.st_size),
                       seconds: Int(s.st_mtim.tv_sec), nanoseconds: Int(s.st_mtim.tv_nsec))
    }
}
