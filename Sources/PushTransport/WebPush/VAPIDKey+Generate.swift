import COpenSSL

extension VAPIDKey {
    /// A new P-256 private key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), for
    /// `pushq webpush-key --generate`: what `openssl genpkey -algorithm EC -pkeyopt
    /// ec_paramgen_curve:P-256` writes. The bytes are a secret: the caller writes them to a file
    /// only its owner can read and never prints them.
    ///
    /// - Throws: ``PushTransportError`` `.invalidKey` with OpenSSL's message.
    public static func generatePEM() throws -> [UInt8] {
        guard let key = copenssl_ec_gen("P-256") else {
            throw PushTransportError(.invalidKey, "cannot generate a P-256 key: " + openSSLErrorMessage(fallback: "EVP_EC_gen failed"))
        }
        defer { EVP_PKEY_free(key) }
        guard let bio = BIO_new(BIO_s_mem()) else {
            throw PushTransportError(.invalidKey, "cannot generate a P-256 key: " + openSSLErrorMessage(fallback: "BIO_new failed"))
        }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1 else {
            throw PushTransportError(.invalidKey, "cannot write the P-256 key as PEM: " + openSSLErrorMessage(fallback: "PEM_write_bio_PrivateKey failed"))
        }
        var pem: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while true {
            let n = BIO_read(bio, &chunk, Int32(chunk.count))
            guard n > 0 else { break }
            pem += chunk.prefix(Int(n))
        }
        return pem
    }
}
