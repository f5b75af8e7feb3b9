import COpenSSL

/// A P-256 key of the mock's Web Push side, held as an OpenSSL `EVP_PKEY`: a subscription's
/// private key (the user agent's, RFC 8291's `ua_private`), or a sender's public key read from
/// an aes128gcm header's `keyid` or a VAPID `k`.
///
/// Owns the `EVP_PKEY*` and frees it in `deinit`.
///
/// `@unchecked Sendable`: the key is never mutated after `init`; OpenSSL allows a constant
/// `EVP_PKEY` to be used by several threads at once as long as each operation has its own
/// context, which `sharedSecret(with:)` creates per call.
final class MockWebPushKey: @unchecked Sendable {
    /// The DER SubjectPublicKeyInfo of a P-256 key up to its point (RFC 5480: id-ecPublicKey,
    /// prime256v1, then a BIT STRING of 66 bytes holding the 65-byte point).
    private static let publicKeyPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
        0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]
    /// A SEC1 `ECPrivateKey` (RFC 5915) without its public key, up to the 32-byte scalar; the
    /// curve follows it (`privateKeySuffix`). OpenSSL computes the public point when reading it.
    private static let privateKeyPrefix: [UInt8] = [0x30, 0x31, 0x02, 0x01, 0x01, 0x04, 0x20]
    private static let privateKeySuffix: [UInt8] = [0xA0, 0x0A, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]

    let pkey: OpaquePointer
    /// The uncompressed point (X9.62: 0x04 ‖ X ‖ Y, 65 bytes), as `p256dh` and `keyid` carry it.
    let publicPoint: [UInt8]

    private init(owning pkey: OpaquePointer) throws {
        self.pkey = pkey
        var der = [UInt8](repeating: 0, count: 128)
        let length = der.withUnsafeMutableBufferPointer { buf -> Int32 in
            var p: UnsafeMutablePointer<UInt8>? = buf.baseAddress
            return i2d_PUBKEY(pkey, &p)
        }
        guard length == Int32(Self.publicKeyPrefix.count + 65) else {
            EVP_PKEY_free(pkey)
            throw MockPushError(.keyLoadFailed, "not an uncompressed P-256 key: \(openSSLErrorMessage())")
        }
        self.publicPoint = Array(der[Self.publicKeyPrefix.count..<Int(length)])
    }

    deinit { EVP_PKEY_free(pkey) }

    /// A fresh key pair (a new subscription's).
    ///
    /// - Throws: `MockPushError.keyLoadFailed` with OpenSSL's message.
    static func generate() throws -> MockWebPushKey {
        guard let key = copenssl_ec_gen("P-256") else {
            throw MockPushError(.keyLoadFailed, "cannot generate a P-256 key: \(openSSLErrorMessage())")
        }
        return try MockWebPushKey(owning: key)
    }

    /// The private key whose scalar is `scalar` (32 bytes, big-endian, as RFC 8291's examples
    /// print `ua_private`).
    ///
    /// - Throws: `MockPushError.keyLoadFailed` when it is not a valid P-256 scalar.
    static func privateKey(scalar: [UInt8]) throws -> MockWebPushKey {
        guard scalar.count == 32 else {
            throw MockPushError(.keyLoadFailed, "a P-256 private key is 32 bytes, not \(scalar.count)")
        }
        let der = privateKeyPrefix + scalar + privateKeySuffix
        let key = der.withUnsafeBufferPointer { buf -> OpaquePointer? in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            return d2i_PrivateKey(EVP_PKEY_EC, nil, &p, buf.count)
        }
        guard let key else { throw MockPushError(.keyLoadFailed, "not a P-256 private key: \(openSSLErrorMessage())") }
        return try MockWebPushKey(owning: key)
    }

    /// The public key at `point` (65 bytes, 0x04 ‖ X ‖ Y); nil when it is not an uncompressed
    /// point on P-256 (OpenSSL checks that the point is on the curve, as RFC 8291 §7 requires).
    static func publicKey(point: [UInt8]) -> MockWebPushKey? {
        guard point.count == 65, point[0] == 0x04 else { return nil }
        let der = publicKeyPrefix + point
        let key = der.withUnsafeBufferPointer { buf -> OpaquePointer? in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            return d2i_PUBKEY(nil, &p, buf.count)
        }
        guard let key else {
            ERR_clear_error()
            return nil
        }
        return try? MockWebPushKey(owning: key)
    }

    /// The 32-byte ECDH secret (the X coordinate) of this private key and `peer`'s public key;
    /// nil when OpenSSL refuses (no private key here, a peer on another curve).
    func sharedSecret(with peer: MockWebPushKey) -> [UInt8]? {
        guard let ctx = EVP_PKEY_CTX_new(pkey, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(ctx) }
        var length = 32
        var secret = [UInt8](repeating: 0, count: 32)
        guard EVP_PKEY_derive_init(ctx) == 1, EVP_PKEY_derive_set_peer(ctx, peer.pkey) == 1,
              EVP_PKEY_derive(ctx, &secret, &length) == 1, length == 32 else {
            ERR_clear_error()
            return nil
        }
        return secret
    }

    /// Whether `signature` (JWT's raw r‖s, 64 bytes) is an ES256 signature of `message` by this key.
    func verifyES256(signature: [UInt8], of message: [UInt8]) -> Bool {
        guard let der = MockVerifyingKey.derSignature(rawRS: signature), let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, pkey) == 1 else {
            ERR_clear_error()
            return false
        }
        let ok = EVP_DigestVerify(ctx, der, der.count, message, message.count)
        if ok != 1 { ERR_clear_error() }
        return ok == 1
    }
}
