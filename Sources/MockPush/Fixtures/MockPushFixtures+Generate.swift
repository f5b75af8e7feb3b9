import COpenSSL
import Foundation

/// Writing the fixtures with OpenSSL, in process: keys, a CA, and certificates it signs.
extension MockPushFixtures {
    /// Generates every file of the fixtures into `directory` (which exists).
    ///
    /// - Throws: `MockPushError.keyLoadFailed` naming the step OpenSSL failed at.
    func write() throws {
        let caKey = try FixtureKey.ec()
        let ca = try FixtureCertificate(subject: "MockPush test CA", key: caKey, issuer: nil, extensions: [
            (NID_basic_constraints, "critical,CA:TRUE"), (NID_key_usage, "critical,keyCertSign,cRLSign"),
            (NID_subject_key_identifier, "hash"),
        ])
        let serverKey = try FixtureKey.ec()
        let server = try FixtureCertificate(subject: "localhost", key: serverKey, issuer: (ca, caKey), extensions: [
            (NID_basic_constraints, "CA:FALSE"), (NID_key_usage, "critical,digitalSignature,keyEncipherment"),
            (NID_ext_key_usage, "serverAuth"), (NID_subject_alt_name, "IP:127.0.0.1,IP:::1,DNS:localhost"),
        ])
        let clientKey = try FixtureKey.ec()
        let client = try FixtureCertificate(subject: "MockPush test client", key: clientKey, issuer: (ca, caKey), extensions: [
            (NID_basic_constraints, "CA:FALSE"), (NID_key_usage, "critical,digitalSignature"), (NID_ext_key_usage, "clientAuth"),
        ])
        try Self.save(try ca.pem(), to: caCertificatePath, secret: false)
        try Self.save(try server.pem(), to: serverCertificatePath, secret: false)
        try Self.save(try serverKey.pem(), to: serverKeyPath, secret: true)
        try Self.save(try client.pem(), to: clientCertificatePath, secret: false)
        try Self.save(try clientKey.pem(), to: clientKeyPath, secret: true)
        try Self.save(try FixtureKey.ec().pem(), to: apnsKeyPath, secret: true)
        try Self.save(try FixtureKey.rsa().pem(), to: fcmKeyPath, secret: true)
    }

    /// Writes `bytes` to `path` through a temporary file and a rename (readers never see half a
    /// file), mode 0600 for keys.
    static func save(_ bytes: [UInt8], to path: String, secret: Bool) throws {
        let temporary = path + ".tmp-\(getpid())"
        let attributes: [FileAttributeKey: Any] = [.posixPermissions: secret ? 0o600 : 0o644]
        guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes), attributes: attributes),
              rename(temporary, path) == 0 else {
            unlink(temporary)
            throw MockPushError(.badConfiguration, "cannot write \(path) (errno \(errno))")
        }
    }
}

/// A generated private key. Owns the `EVP_PKEY*` and frees it in `deinit`; used on one thread.
private final class FixtureKey {
    let pkey: OpaquePointer

    private init(_ pkey: OpaquePointer) { self.pkey = pkey }
    deinit { EVP_PKEY_free(pkey) }

    /// A P-256 key (TLS, APNs `.p8`).
    static func ec() throws -> FixtureKey {
        guard let pkey = copenssl_ec_gen("P-256") else { throw failure("cannot generate a P-256 key") }
        return FixtureKey(pkey)
    }

    /// An RSA-2048 key, as Google issues for service accounts.
    static func rsa() throws -> FixtureKey {
        guard let pkey = copenssl_rsa_gen(2048) else { throw failure("cannot generate an RSA key") }
        return FixtureKey(pkey)
    }

    /// PKCS#8 PEM (`BEGIN PRIVATE KEY`): the form of Apple's `.p8` files and of a service
    /// account's `private_key`.
    func pem() throws -> [UInt8] {
        try memoryPEM("cannot write a private key") { PEM_write_bio_PKCS8PrivateKey($0, pkey, nil, nil, 0, nil, nil) }
    }
}

/// A certificate, signed by an issuer or by its own key. Owns the `X509*`; used on one thread.
private final class FixtureCertificate {
    let x509: OpaquePointer

    /// - Parameters:
    ///   - subject: the common name.
    ///   - issuer: the CA certificate and key that sign it; nil signs it with `key` (a root).
    ///   - extensions: X.509 v3 extensions in OpenSSL's configuration syntax, by NID.
    init(subject: String, key: FixtureKey, issuer: (FixtureCertificate, FixtureKey)?, extensions: [(Int32, String)]) throws {
        guard let x509 = X509_new() else { throw failure("X509_new failed") }
        self.x509 = x509
        var serial = SystemRandomNumberGenerator()
        guard X509_set_version(x509, 2) == 1,  // v3
              ASN1_INTEGER_set(X509_get_serialNumber(x509), Int(serial.next() >> 2)) == 1,
              X509_gmtime_adj(X509_getm_notBefore(x509), -3600) != nil,  // a host clock a little behind
              X509_gmtime_adj(X509_getm_notAfter(x509), 3650 * 86400) != nil,
              X509_set_pubkey(x509, key.pkey) == 1,
              let name = X509_get_subject_name(x509),
              X509_NAME_add_entry_by_txt(name, "CN", COPENSSL_MBSTRING_ASC, subject, -1, -1, 0) == 1,
              X509_set_issuer_name(x509, issuer.map { X509_get_subject_name($0.0.x509) } ?? name) == 1
        else { throw failure("cannot fill in the certificate of \(subject)") }
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.0.x509 ?? x509, x509, nil, nil, 0)
        var all = extensions
        if issuer != nil { all.append((NID_authority_key_identifier, "keyid:always")) }
        for (nid, value) in all {
            guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else { throw failure("cannot make extension \(value)") }
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(x509, ext, -1) == 1 else { throw failure("cannot add extension \(value)") }
        }
        guard X509_sign(x509, (issuer?.1 ?? key).pkey, EVP_sha256()) > 0 else { throw failure("cannot sign the certificate of \(subject)") }
    }

    deinit { X509_free(x509) }

    func pem() throws -> [UInt8] {
        try memoryPEM("cannot write a certificate") { PEM_write_bio_X509($0, x509) }
    }
}

/// What `write` writes into a memory BIO, as bytes.
private func memoryPEM(_ what: String, _ write: (OpaquePointer) -> Int32) throws -> [UInt8] {
    guard let bio = BIO_new(BIO_s_mem()) else { throw failure(what) }
    defer { BIO_free(bio) }
    guard write(bio) == 1 else { throw failure(what) }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = BIO_read(bio, &chunk, Int32(chunk.count))
        if n <= 0 { break }
        out += chunk[0..<Int(n)]
    }
    return out
}

private func failure(_ what: String) -> MockPushError {
    MockPushError(.keyLoadFailed, "fixtures: \(what): \(openSSLErrorMessage())")
}
