import COpenSSL

/// A P-256 private key for ES256 signatures, loaded from a PEM file (PKCS#8, as APNs' `.p8`, or
/// SEC1 `EC PRIVATE KEY`): APNs' provider tokens and Web Push's VAPID tokens.
///
/// Owns its `EVP_PKEY` and frees it in `deinit`. The key bytes never leave OpenSSL:
/// no description, log line or error message contains them.
///
/// `@unchecked Sendable`: after `init` the `EVP_PKEY` is only read. OpenSSL 3 allows a
/// key to be used by several threads at once as long as each uses its own `EVP_MD_CTX`,
/// which ``sign(_:)`` creates per call.
public final class ES256PrivateKey: @unchecked Sendable {
    /// Read (never freed or changed) by Web Push's `VAPIDKey`, which derives the public key from it.
    let key: OpaquePointer

    /// Parses a PEM private key and checks it is an EC key on P-256.
    ///
    /// - Parameter pem: the PEM text (`-----BEGIN PRIVATE KEY-----`...).
    /// - Throws: ``PushTransportError`` `.invalidKey` with OpenSSL's message.
    public convenience init(pem: [UInt8]) throws {
        try self.init(pem: pem, named: "provider key", for: "APNs")
    }

    /// ``init(pem:)`` whose errors call the key `name` (`provider key`, `VAPID key`) and say
    /// `service` needs a P-256 key.
    init(pem: [UInt8], named name: String, for service: String) throws {
        let parsed = readPEMPrivateKey(pem)
        guard let parsed else {
            throw PushTransportError(.invalidKey, "cannot parse the \(name) as a PEM private key: "
                + openSSLErrorMessage(fallback: "no PEM private key found"))
        }
        guard EVP_PKEY_get_base_id(parsed) == EVP_PKEY_EC else {
            EVP_PKEY_free(parsed)
            throw PushTransportError(.invalidKey, "the \(name) is not an EC key; \(service) needs a P-256 (ES256) key")
        }
        var curve = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(parsed, &curve, curve.count, &length) == 1,
              String(decoding: curve.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "prime256v1" else {
            EVP_PKEY_free(parsed)
            throw PushTransportError(.invalidKey, "the \(name) is not on curve P-256 (prime256v1)")
        }
        key = parsed
    }

    /// Reads and parses a `.p8` file.
    ///
    /// - Throws: ``PushTransportError`` `.invalidKey` naming the file.
    public convenience init(file path: String) throws {
        try self.init(file: path, named: "provider key", for: "APNs")
    }

    /// ``init(file:)`` with the key's name and service in its errors (``init(pem:named:for:)``).
    convenience init(file path: String, named name: String, for service: String) throws {
        let bytes: [UInt8]
        do {
            bytes = try readWholeFile(path)
        } catch {
            throw PushTransportError(.invalidKey, "cannot read the \(name) file \(path)", cause: error)
        }
        do {
            try self.init(pem: bytes, named: name, for: service)
        } catch let error as PushTransportError {
            throw PushTransportError(.invalidKey, "\(path): \(error.message)")
        }
    }

    deinit { EVP_PKEY_free(key) }

    /// Signs `message` with ECDSA P-256 / SHA-256 and returns the raw 64-byte r‖s signature (JWS form).
    ///
    /// - Throws: ``PushTransportError`` `.signingFailed` with OpenSSL's message.
    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        guard let ctx = EVP_MD_CTX_new() else {
            throw PushTransportError(.signingFailed, "EVP_MD_CTX_new failed: " + openSSLErrorMessage(fallback: "out of memory"))
        }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, key) == 1 else {
            throw PushTransportError(.signingFailed, "EVP_DigestSignInit failed: " + openSSLErrorMessage(fallback: "unknown error"))
        }
        var der = [UInt8](repeating: 0, count: 80)  // a P-256 DER signature is at most 72 bytes
        var derLength = der.count
        let ok = message.withUnsafeBufferPointer { m in
            EVP_DigestSign(ctx, &der, &derLength, m.baseAddress, m.count)
        }
        guard ok == 1 else {
            throw PushTransportError(.signingFailed, "EVP_DigestSign failed: " + openSSLErrorMessage(fallback: "unknown error"))
        }
        return try Self.rawSignature(fromDER: Array(der.prefix(derLength)))
    }

    /// Converts a DER `ECDSA-Sig-Value` into r‖s, each left-padded to 32 bytes.
    static func rawSignature(fromDER der: [UInt8]) throws -> [UInt8] {
        let sig: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let sig else {
            throw PushTransportError(.signingFailed, "d2i_ECDSA_SIG failed: " + openSSLErrorMessage(fallback: "bad DER signature"))
        }
        defer { ECDSA_SIG_free(sig) }
        var raw = [UInt8](repeating: 0, count: 64)
        let okR = raw.withUnsafeMutableBufferPointer { BN_bn2binpad(ECDSA_SIG_get0_r(sig), $0.baseAddress, 32) }
        let okS = raw.withUnsafeMutableBufferPointer { BN_bn2binpad(ECDSA_SIG_get0_s(sig), $0.baseAddress! + 32, 32) }
        guard okR == 32, okS == 32 else {
            throw PushTransportError(.signingFailed, "BN_bn2binpad failed: " + openSSLErrorMessage(fallback: "r or s longer than 32 bytes"))
        }
        return raw
    }
}
