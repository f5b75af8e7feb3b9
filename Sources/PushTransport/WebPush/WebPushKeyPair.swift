import COpenSSL
import PushCore

/// P-256 as OpenSSL's point arithmetic sees it: the group and its order, made once.
///
/// Web Push's two scalar multiplications per message (the fresh key's k·G and the ECDH's k·Q) go
/// straight to `EC_POINT_mul` on this group (the `nistz256` code on x86-64: constant-time, k·G
/// from its precomputed table), without the EVP layer's per-call contexts, key-manager look-ups
/// and parameter parsing, which cost as much again as the multiplications (docs/notes/
/// 2026-11-29-webpush-end-to-end.md).
///
/// `@unchecked Sendable`: the group and its order are only read after `init` (OpenSSL allows an
/// `EC_GROUP` to be shared so); each operation brings its own `BN_CTX` and points.
final class P256: @unchecked Sendable {
    let group: OpaquePointer
    let order: OpaquePointer

    /// The process's curve, or nil when OpenSSL has no P-256 (then every message fails alike).
    static let shared = P256()

    private init?() {
        guard let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else { return nil }
        guard let order = EC_GROUP_get0_order(group) else {
            EC_GROUP_free(group)
            return nil
        }
        self.group = group
        self.order = order
    }

    deinit { EC_GROUP_free(group) }

    /// ``shared``, or `.encryptionFailed`.
    static func curve() throws -> P256 {
        guard let shared else {
            throw PushTransportError(.encryptionFailed, "OpenSSL has no P-256: " + openSSLErrorMessage(fallback: "EC_GROUP_new_by_curve_name failed"))
        }
        return shared
    }

    /// `scalar`·`point` (the generator when `point` is nil), uncompressed (65 bytes) or, with
    /// `xOnly`, its 32-byte x coordinate.
    func multiply(_ scalar: OpaquePointer, _ point: OpaquePointer?, xOnly: Bool) throws -> [UInt8] {
        ERR_clear_error()
        guard let bn = BN_CTX_new(), let result = EC_POINT_new(group) else {
            throw PushTransportError(.encryptionFailed, "P-256 set-up failed: " + openSSLErrorMessage(fallback: "out of memory"))
        }
        defer {
            EC_POINT_clear_free(result)
            BN_CTX_free(bn)
        }
        let multiplied = point == nil
            ? EC_POINT_mul(group, result, scalar, nil, nil, bn)
            : EC_POINT_mul(group, result, nil, point, scalar, bn)
        guard multiplied == 1 else {
            throw PushTransportError(.encryptionFailed, "P-256 multiplication failed: " + openSSLErrorMessage(fallback: "EC_POINT_mul failed"))
        }
        if xOnly {
            BN_CTX_start(bn)
            defer { BN_CTX_end(bn) }
            var out = [UInt8](repeating: 0, count: 32)
            guard let x = BN_CTX_get(bn), EC_POINT_get_affine_coordinates(group, result, x, nil, bn) == 1,
                  BN_bn2binpad(x, &out, 32) == 32 else {
                throw PushTransportError(.encryptionFailed, "ECDH failed: " + openSSLErrorMessage(fallback: "no affine x coordinate"))
            }
            return out
        }
        var out = [UInt8](repeating: 0, count: 65)
        guard EC_POINT_point2oct(group, result, POINT_CONVERSION_UNCOMPRESSED, &out, 65, bn) == 65 else {
            throw PushTransportError(.encryptionFailed, "cannot encode a P-256 point: " + openSSLErrorMessage(fallback: "EC_POINT_point2oct failed"))
        }
        return out
    }
}

/// A P-256 key pair for one message's ECDH: the application server's ephemeral key of RFC 8291
/// (`as_private`, `as_public`).
///
/// Owns its private scalar (a `BIGNUM`, cleared and freed in `deinit`). A fresh pair is made for
/// every message (``generate()``); one is never used for two messages (``WebPushEncryptor``).
///
/// `@unchecked Sendable`: after `init` the scalar is only read.
public final class WebPushKeyPair: @unchecked Sendable {
    /// 0 < k < n, flagged constant-time.
    let scalar: OpaquePointer
    /// The public key, uncompressed (65 bytes, 0x04 ‖ x ‖ y): the aes128gcm header's key id.
    public let publicKey: [UInt8]

    /// Takes ownership of `scalar` (freed here, also when this throws) and computes k·G.
    private init(owning scalar: OpaquePointer, on curve: P256) throws {
        BN_set_flags(scalar, BN_FLG_CONSTTIME)
        do {
            publicKey = try curve.multiply(scalar, nil, xOnly: false)
        } catch {
            BN_clear_free(scalar)  // deinit does not run for an init that throws
            throw error
        }
        self.scalar = scalar
    }

    deinit { BN_clear_free(scalar) }

    /// A new random key pair: k uniform in 1…n−1 from OpenSSL's private generator, as
    /// `EC_KEY_generate_key` draws it.
    ///
    /// - Throws: ``PushTransportError`` `.encryptionFailed` with OpenSSL's message.
    public static func generate() throws -> WebPushKeyPair {
        let curve = try P256.curve()
        ERR_clear_error()
        guard let scalar = BN_new() else {
            throw PushTransportError(.encryptionFailed, "cannot generate a P-256 key pair: " + openSSLErrorMessage(fallback: "out of memory"))
        }
        repeat {
            guard BN_priv_rand_range(scalar, curve.order) == 1 else {
                BN_clear_free(scalar)
                throw PushTransportError(.encryptionFailed, "cannot generate a P-256 key pair: " + openSSLErrorMessage(fallback: "BN_priv_rand_range failed"))
            }
        } while BN_is_zero(scalar) == 1
        return try WebPushKeyPair(owning: scalar, on: curve)
    }

    /// The key pair of a 32-byte private scalar (big-endian, as a JWK's `d`), its public key computed.
    ///
    /// - Throws: ``PushTransportError`` `.invalidKey` when the scalar is not a valid P-256 private key.
    public convenience init(privateKey bytes: [UInt8]) throws {
        guard bytes.count == 32 else {
            throw PushTransportError(.invalidKey, "a P-256 private key is 32 bytes, not \(bytes.count)")
        }
        let curve = try P256.curve()
        guard let scalar = BN_bin2bn(bytes, 32, nil) else {
            throw PushTransportError(.encryptionFailed, "BN_bin2bn failed: " + openSSLErrorMessage(fallback: "out of memory"))
        }
        guard BN_is_zero(scalar) == 0, BN_cmp(scalar, curve.order) < 0 else {
            BN_clear_free(scalar)
            throw PushTransportError(.invalidKey, "not a P-256 private key: the scalar is 0 or not below the group order")
        }
        try self.init(owning: scalar, on: curve)
    }

    /// ECDH with `peer`: the 32-byte x coordinate of the shared point (RFC 8291's `ecdh_secret`).
    ///
    /// The peer's point was checked on the curve when it was decoded (``WebPushPeerKey``), and
    /// P-256's cofactor is 1, so k·Q is the whole ECDH.
    ///
    /// - Throws: ``PushTransportError`` `.encryptionFailed` with OpenSSL's message.
    func sharedSecret(with peer: WebPushPeerKey) throws -> [UInt8] {
        try P256.curve().multiply(scalar, peer.point, xOnly: true)
    }
}

/// A subscription's P-256 public key (`keys.p256dh`), decoded and checked on the curve.
///
/// Owns its `EC_POINT`; `@unchecked Sendable` as ``WebPushKeyPair`` (read only after `init`).
public final class WebPushPeerKey: @unchecked Sendable {
    let point: OpaquePointer
    /// The 65-byte uncompressed point, as given.
    public let bytes: [UInt8]

    /// Decodes `point` (65 bytes, 0x04 ‖ x ‖ y). OpenSSL refuses coordinates beyond the field and
    /// a point that is not on the curve (`EC_POINT_oct2point` checks both).
    ///
    /// - Throws: ``PushRequest/Refusal`` `InvalidSubscriptionKeys`: the row's keys are wrong, not the sender.
    public init(point: [UInt8]) throws {
        guard point.count == 65, point[0] == 0x04 else {
            throw PushRequest.Refusal(reason: "InvalidSubscriptionKeys", message: "keys.p256dh is not a 65-byte uncompressed P-256 point")
        }
        let curve = try P256.curve()
        ERR_clear_error()
        guard let decoded = EC_POINT_new(curve.group) else {
            throw PushTransportError(.encryptionFailed, "EC_POINT_new failed: " + openSSLErrorMessage(fallback: "out of memory"))
        }
        guard EC_POINT_oct2point(curve.group, decoded, point, 65, nil) == 1 else {
            EC_POINT_free(decoded)
            throw PushRequest.Refusal(reason: "InvalidSubscriptionKeys",
                                      message: "keys.p256dh is not a point on P-256: " + openSSLErrorMessage(fallback: "EC_POINT_oct2point failed"))
        }
        self.point = decoded
        bytes = point
    }

    deinit { EC_POINT_free(point) }
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
