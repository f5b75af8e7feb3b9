import COpenSSL
import PushCore

/// A P-256 key pair for one message's ECDH: the application server's ephemeral key of RFC 8291
/// (`as_private`, `as_public`).
///
/// Owns its `EVP_PKEY` and frees it in `deinit`. A fresh pair is made for every message
/// (``generate()``); one is never used for two messages (``WebPushEncryptor``).
///
/// `@unchecked Sendable`: after `init` the `EVP_PKEY` is only read, and every derivation creates
/// its own `EVP_PKEY_CTX` (OpenSSL 3 allows a key to be shared that way).
public final class WebPushKeyPair: @unchecked Sendable {
    let key: OpaquePointer
    /// The public key, uncompressed (65 bytes, 0x04 ‖ x ‖ y): the aes128gcm header's key id.
    public let publicKey: [UInt8]

    /// Takes ownership of `key` (freed here, also when this throws).
    init(owning key: OpaquePointer) throws {
        do {
            publicKey = try encodedPublicKey(key, of: "the ephemeral key")
        } catch {
            EVP_PKEY_free(key)  // deinit does not run for an init that throws
            throw error
        }
        self.key = key
    }

    deinit { EVP_PKEY_free(key) }

    /// A new random key pair (OpenSSL's generator).
    ///
    /// - Throws: ``PushTransportError`` `.encryptionFailed` with OpenSSL's message.
    public static func generate() throws -> WebPushKeyPair {
        ERR_clear_error()
        guard let key = copenssl_ec_gen("P-256") else {
            throw PushTransportError(.encryptionFailed, "cannot generate a P-256 key pair: " + openSSLErrorMessage(fallback: "EVP_EC_gen failed"))
        }
        return try WebPushKeyPair(owning: key)
    }

    /// The key pair of a 32-byte private scalar (big-endian, as a JWK's `d`), its public key computed.
    ///
    /// - Throws: ``PushTransportError`` `.invalidKey` when the scalar is not a valid P-256 private key.
    public convenience init(privateKey scalar: [UInt8]) throws {
        guard scalar.count == 32 else {
            throw PushTransportError(.invalidKey, "a P-256 private key is 32 bytes, not \(scalar.count)")
        }
        // SEC1 ECPrivateKey (RFC 5915) without its optional public key, which OpenSSL computes:
        // SEQUENCE { INTEGER 1, OCTET STRING scalar, [0] OID prime256v1 }.
        let der: [UInt8] = [0x30, 0x31, 0x02, 0x01, 0x01, 0x04, 0x20] + scalar
            + [0xa0, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]
        ERR_clear_error()
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PrivateKey(EVP_PKEY_EC, nil, &cursor, buffer.count)
        }
        guard let key else {
            throw PushTransportError(.invalidKey, "not a P-256 private key: " + openSSLErrorMessage(fallback: "d2i_PrivateKey failed"))
        }
        try self.init(owning: key)
    }

    /// ECDH with `peer`: the 32-byte x coordinate of the shared point (RFC 8291's `ecdh_secret`).
    ///
    /// - Throws: ``PushTransportError`` `.encryptionFailed` with OpenSSL's message.
    func sharedSecret(with peer: WebPushPeerKey) throws -> [UInt8] {
        ERR_clear_error()
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else {
            throw PushTransportError(.encryptionFailed, "EVP_PKEY_CTX_new_from_pkey failed: " + openSSLErrorMessage(fallback: "out of memory"))
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        // The peer's point was checked on the curve when it was decoded (``WebPushPeerKey``), and
        // P-256's cofactor is 1: validating it again here would cost a second scalar multiplication.
        guard EVP_PKEY_derive_init(ctx) == 1, EVP_PKEY_derive_set_peer_ex(ctx, peer.key, 0) == 1 else {
            throw PushTransportError(.encryptionFailed, "ECDH set-up failed: " + openSSLErrorMessage(fallback: "EVP_PKEY_derive_init failed"))
        }
        var secret = [UInt8](repeating: 0, count: 32)
        var length = secret.count
        guard EVP_PKEY_derive(ctx, &secret, &length) == 1, length == 32 else {
            throw PushTransportError(.encryptionFailed, "ECDH failed: " + openSSLErrorMessage(fallback: "EVP_PKEY_derive failed"))
        }
        return secret
    }
}

/// A subscription's P-256 public key (`keys.p256dh`), decoded and checked on the curve.
///
/// Owns its `EVP_PKEY`; `@unchecked Sendable` as ``WebPushKeyPair`` (read only after `init`).
public final class WebPushPeerKey: @unchecked Sendable {
    let key: OpaquePointer
    /// The 65-byte uncompressed point, as given.
    public let bytes: [UInt8]

    /// `EVP_PKEY_PUBLIC_KEY` (a macro Swift does not import): the public key and the domain parameters.
    static let publicKeySelection = Int32(OSSL_KEYMGMT_SELECT_PUBLIC_KEY | OSSL_KEYMGMT_SELECT_ALL_PARAMETERS)

    /// Decodes `point` (65 bytes, 0x04 ‖ x ‖ y). OpenSSL refuses a point that is not on the curve.
    ///
    /// - Throws: ``PushRequest/Refusal`` `InvalidSubscriptionKeys`: the row's keys are wrong, not the sender.
    public init(point: [UInt8]) throws {
        guard point.count == 65, point[0] == 0x04 else {
            throw PushRequest.Refusal(reason: "InvalidSubscriptionKeys", message: "keys.p256dh is not a 65-byte uncompressed P-256 point")
        }
        // EVP_PKEY_fromdata imports the point through the EC key manager alone (OpenSSL checks
        // it is on the curve); d2i_PUBKEY would go through the decoder framework, which costs
        // more than the ECDH itself (≈125 µs against ≈55 µs on the reference machine).
        ERR_clear_error()
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw PushTransportError(.encryptionFailed, "EVP_PKEY_CTX_new_from_name failed: " + openSSLErrorMessage(fallback: "no EC key manager"))
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        var group = Array("prime256v1".utf8CString)
        var imported: OpaquePointer?
        let ok = point.withUnsafeBytes { p in
            group.withUnsafeMutableBufferPointer { g in
                var params = [
                    OSSL_PARAM_construct_utf8_string(cName("group"), g.baseAddress, 0),
                    OSSL_PARAM_construct_octet_string(cName("pub"), UnsafeMutableRawPointer(mutating: p.baseAddress), p.count),
                    OSSL_PARAM_construct_end(),
                ]
                return EVP_PKEY_fromdata_init(ctx) == 1 && EVP_PKEY_fromdata(ctx, &imported, Self.publicKeySelection, &params) == 1
            }
        }
        guard ok, let key = imported else {
            if let imported { EVP_PKEY_free(imported) }
            throw PushRequest.Refusal(reason: "InvalidSubscriptionKeys",
                                      message: "keys.p256dh is not a point on P-256: " + openSSLErrorMessage(fallback: "EVP_PKEY_fromdata failed"))
        }
        self.key = key
        bytes = point
    }

    deinit { EVP_PKEY_free(key) }
}

/// The uncompressed encoding (65 bytes) of an EC key's public point.
func encodedPublicKey(_ key: OpaquePointer, of name: String) throws -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 65)
    var length = 0
    ERR_clear_error()
    guard EVP_PKEY_get_octet_string_param(key, "encoded-pub-key", &out, out.count, &length) == 1, length == 65, out[0] == 0x04 else {
        throw PushTransportError(.invalidKey, "cannot read the public key of \(name): " + openSSLErrorMessage(fallback: "not an uncompressed P-256 point"))
    }
    return out
}

/// The NUL-terminated bytes of a string literal, which live as long as the program: an
/// `OSSL_PARAM`'s name must outlive its constructor (a `String` argument would be a temporary).
func cName(_ name: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self)
}

extension PushTransportError.Code {
    /// Web Push's encryption failed inside OpenSSL (key generation, ECDH, HKDF, AES-GCM).
    public static let encryptionFailed = PushTransportError.Code(name: "encryptionFailed")
}
