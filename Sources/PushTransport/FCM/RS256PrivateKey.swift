import COpenSSL

/// An RSA private key for RS256 signatures (a service account's `private_key`).
///
/// Owns its `EVP_PKEY` and frees it in `deinit`. The key bytes never leave OpenSSL:
/// no description, log line or error message contains them.
///
/// `@unchecked Sendable`: after `init` the `EVP_PKEY` is only read. OpenSSL 3 allows a
/// key to be used by several threads at once as long as each uses its own `EVP_MD_CTX`,
/// which ``sign(_:)`` creates per call.
public final class RS256PrivateKey: @unchecked Sendable, CustomStringConvertible {
    private let key: OpaquePointer
    /// The modulus size in bits.
    public let bits: Int

    /// Parses a PEM private key (PKCS#8 `BEGIN PRIVATE KEY` or PKCS#1 `BEGIN RSA PRIVATE KEY`)
    /// and checks it is an RSA key of at least 2048 bits.
    ///
    /// - Throws: a message (without key material) saying what is wrong.
    init(pem: [UInt8]) throws(KeyProblem) {
        let parsed = readPEMPrivateKey(pem)
        guard let parsed else {
            throw KeyProblem(message: "is not a PEM private key (" + openSSLErrorMessage(fallback: "no PEM private key found") + ")")
        }
        guard EVP_PKEY_get_base_id(parsed) == EVP_PKEY_RSA else {
            EVP_PKEY_free(parsed)
            throw KeyProblem(message: "is not an RSA key; FCM service accounts sign with RS256")
        }
        let bits = Int(EVP_PKEY_get_bits(parsed))
        guard bits >= 2048 else {
            EVP_PKEY_free(parsed)
            throw KeyProblem(message: "is a \(bits)-bit RSA key; Google issues 2048-bit keys and RS256 needs at least 2048")
        }
        self.key = parsed
        self.bits = bits
    }

    deinit { EVP_PKEY_free(key) }

    /// Why a PEM is not a usable key: a message meant to follow the field's name.
    struct KeyProblem: Error {
        var message: String
    }

    public var description: String { "RS256PrivateKey(\(bits) bits)" }

    /// Signs `message` with RSASSA-PKCS1-v1_5 / SHA-256 and returns the signature.
    ///
    /// - Throws: ``FCMTransportError`` `.signingFailed` with OpenSSL's message.
    public func sign(_ message: [UInt8]) throws(FCMTransportError) -> [UInt8] {
        guard let ctx = EVP_MD_CTX_new() else {
            throw FCMTransportError(.signingFailed, "EVP_MD_CTX_new failed: " + openSSLErrorMessage(fallback: "out of memory"))
        }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, key) == 1 else {
            throw FCMTransportError(.signingFailed, "EVP_DigestSignInit failed: " + openSSLErrorMessage(fallback: "unknown error"))
        }
        var length = Int(EVP_PKEY_get_size(key))  // the modulus size: an RSA signature's length
        var signature = [UInt8](repeating: 0, count: length)
        let ok = message.withUnsafeBufferPointer { m in
            EVP_DigestSign(ctx, &signature, &length, m.baseAddress, m.count)
        }
        guard ok == 1 else {
            throw FCMTransportError(.signingFailed, "EVP_DigestSign failed: " + openSSLErrorMessage(fallback: "unknown error"))
        }
        return Array(signature.prefix(length))
    }
}
