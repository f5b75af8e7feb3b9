import COpenSSL
import PushCore

/// One message's ephemeral secrets: the application server's key pair and the salt.
public struct WebPushEphemeral: Sendable {
    public var keyPair: WebPushKeyPair
    /// 16 bytes.
    public var salt: [UInt8]

    public init(keyPair: WebPushKeyPair, salt: [UInt8]) {
        self.keyPair = keyPair
        self.salt = salt
    }
}

/// Where each message's key pair and salt come from: ``FreshWebPushEphemerals`` (a new key pair
/// and 16 random bytes per call) in production; a source of fixed values reproduces RFC 8291's
/// example in tests.
public protocol WebPushEphemeralSource: Sendable {
    /// A key pair and a salt never handed out before.
    func next() throws -> WebPushEphemeral
}

/// A fresh P-256 key pair (OpenSSL's generator) and 16 bytes of `RAND_bytes` per message.
public struct FreshWebPushEphemerals: WebPushEphemeralSource {
    public init() {}

    public func next() throws -> WebPushEphemeral {
        var salt = [UInt8](repeating: 0, count: 16)
        ERR_clear_error()
        guard RAND_bytes(&salt, 16) == 1 else {
            throw PushTransportError(.encryptionFailed, "RAND_bytes failed: " + openSSLErrorMessage(fallback: "no randomness"))
        }
        return WebPushEphemeral(keyPair: try WebPushKeyPair.generate(), salt: salt)
    }
}

/// Encrypts Web Push messages: RFC 8291's `aes128gcm` (RFC 8188), one record.
///
/// For each message: ECDH between a fresh key pair (from ``source``) and the subscription's
/// `p256dh`; HKDF-SHA256 in RFC 8291's two stages (§3.3: `IKM` from the ECDH secret keyed by the
/// subscription's `auth`, with `"WebPush: info" 0x00 ‖ ua_public ‖ as_public`; §3.4: `CEK` (16
/// bytes) and `NONCE` (12 bytes) from `IKM` keyed by the salt); AES-128-GCM over the plaintext and
/// its 0x02 padding delimiter. The body is the RFC 8188 header — salt (16), record size 4096 (4,
/// big-endian), key id length 65 (1), the sender's public key (65) — then the ciphertext and its
/// 16-byte tag.
///
/// Owns the fetched HKDF and AES-128-GCM implementations (`EVP_KDF`, `EVP_CIPHER`), fetched once
/// and freed in `deinit`, so that a message costs no algorithm look-up.
///
/// `@unchecked Sendable`: the fetched algorithms are immutable and reference-counted by OpenSSL;
/// every message makes its own contexts, so any number of threads may encrypt at once.
public final class WebPushEncryptor: @unchecked Sendable {
    private let kdf: OpaquePointer
    private let cipher: OpaquePointer
    /// Each message's key pair and salt.
    public let source: any WebPushEphemeralSource

    /// The record size written in the header: 4096, the size RFC 8291 §4 assumes.
    public static let recordSize: UInt32 = 4096

    /// - Parameter source: each message's key pair and salt; defaults to fresh ones.
    /// - Throws: ``PushTransportError`` `.encryptionFailed` when OpenSSL has no HKDF or AES-128-GCM.
    public init(source: any WebPushEphemeralSource = FreshWebPushEphemerals()) throws {
        ERR_clear_error()
        guard let kdf = EVP_KDF_fetch(nil, "HKDF", nil) else {
            throw PushTransportError(.encryptionFailed, "OpenSSL has no HKDF: " + openSSLErrorMessage(fallback: "EVP_KDF_fetch failed"))
        }
        guard let cipher = EVP_CIPHER_fetch(nil, "AES-128-GCM", nil) else {
            EVP_KDF_free(kdf)
            throw PushTransportError(.encryptionFailed, "OpenSSL has no AES-128-GCM: " + openSSLErrorMessage(fallback: "EVP_CIPHER_fetch failed"))
        }
        self.kdf = kdf
        self.cipher = cipher
        self.source = source
    }

    deinit {
        EVP_KDF_free(kdf)
        EVP_CIPHER_free(cipher)
    }

    /// The `aes128gcm` body of `plaintext` (the payload's bytes, as they are) for `keys`.
    ///
    /// - Throws: ``PushRequest/Refusal`` `PayloadTooLarge` beyond 3 993 bytes (never truncated) or
    ///   `InvalidSubscriptionKeys` for a `p256dh` not on the curve: the row's fault.
    ///   ``PushTransportError`` `.encryptionFailed` when OpenSSL fails.
    public func encrypt(_ plaintext: [UInt8], for keys: WebPushKeys) throws -> [UInt8] {
        if let refusal = WebPushHeaders.payloadRefusal(byteCount: plaintext.count) { throw refusal }
        let peer = try WebPushPeerKey(point: keys.p256dh)
        let ephemeral = try source.next()
        guard ephemeral.salt.count == 16 else {
            throw PushTransportError(.encryptionFailed, "the salt is \(ephemeral.salt.count) bytes, not 16")
        }
        let secret = try ephemeral.keyPair.sharedSecret(with: peer)
        let derived = try deriveKeys(ecdhSecret: secret, auth: keys.auth, uaPublic: keys.p256dh,
                                     asPublic: ephemeral.keyPair.publicKey, salt: ephemeral.salt)
        var body: [UInt8] = []
        body.reserveCapacity(86 + plaintext.count + 1 + 16)
        body += ephemeral.salt
        body += [UInt8(Self.recordSize >> 24), UInt8(Self.recordSize >> 16 & 0xff), UInt8(Self.recordSize >> 8 & 0xff), UInt8(Self.recordSize & 0xff)]
        body.append(65)
        body += ephemeral.keyPair.publicKey
        body += try seal(plaintext + [0x02], key: derived.cek, nonce: derived.nonce)
        return body
    }

    /// RFC 8291 §3.3–3.4: `IKM`, then `CEK` and `NONCE` (also read by the tests against Appendix A).
    func deriveKeys(ecdhSecret: [UInt8], auth: [UInt8], uaPublic: [UInt8], asPublic: [UInt8],
                    salt: [UInt8]) throws -> (ikm: [UInt8], cek: [UInt8], nonce: [UInt8]) {
        let keyInfo = Array("WebPush: info".utf8) + [0] + uaPublic + asPublic
        let ikm = try hkdf(key: ecdhSecret, salt: auth, info: keyInfo, length: 32)
        let cek = try hkdf(key: ikm, salt: salt, info: Array("Content-Encoding: aes128gcm".utf8) + [0], length: 16)
        let nonce = try hkdf(key: ikm, salt: salt, info: Array("Content-Encoding: nonce".utf8) + [0], length: 12)
        return (ikm, cek, nonce)
    }

    /// HKDF-SHA256 (RFC 5869, extract then expand) of `length` bytes, by OpenSSL's `EVP_KDF`.
    func hkdf(key: [UInt8], salt: [UInt8], info: [UInt8], length: Int) throws -> [UInt8] {
        ERR_clear_error()
        guard let ctx = EVP_KDF_CTX_new(kdf) else {
            throw PushTransportError(.encryptionFailed, "EVP_KDF_CTX_new failed: " + openSSLErrorMessage(fallback: "out of memory"))
        }
        defer { EVP_KDF_CTX_free(ctx) }
        var out = [UInt8](repeating: 0, count: length)
        var digest = Array("SHA256".utf8CString)
        // OSSL_PARAM keeps pointers to its name and its data: the names are static strings (a
        // String argument would be a temporary C string, gone once the constructor returns) and
        // the data arrays are pinned by the closures around the derive call.
        let ok = key.withUnsafeBytes { k in
            salt.withUnsafeBytes { s in
                info.withUnsafeBytes { i in
                    digest.withUnsafeMutableBufferPointer { d in
                        var params = [
                            OSSL_PARAM_construct_utf8_string(cName("digest"), d.baseAddress, 0),
                            OSSL_PARAM_construct_octet_string(cName("key"), UnsafeMutableRawPointer(mutating: k.baseAddress), k.count),
                            OSSL_PARAM_construct_octet_string(cName("salt"), UnsafeMutableRawPointer(mutating: s.baseAddress), s.count),
                            OSSL_PARAM_construct_octet_string(cName("info"), UnsafeMutableRawPointer(mutating: i.baseAddress), i.count),
                            OSSL_PARAM_construct_end(),
                        ]
                        return EVP_KDF_derive(ctx, &out, length, &params)
                    }
                }
            }
        }
        guard ok == 1 else {
            throw PushTransportError(.encryptionFailed, "HKDF failed: " + openSSLErrorMessage(fallback: "EVP_KDF_derive failed"))
        }
        return out
    }

    /// AES-128-GCM of `plaintext` under `key` and `nonce`, no associated data: ciphertext ‖ 16-byte tag.
    func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8]) throws -> [UInt8] {
        ERR_clear_error()
        guard let ctx = EVP_CIPHER_CTX_new() else {
            throw PushTransportError(.encryptionFailed, "EVP_CIPHER_CTX_new failed: " + openSSLErrorMessage(fallback: "out of memory"))
        }
        defer { EVP_CIPHER_CTX_free(ctx) }
        guard EVP_EncryptInit_ex2(ctx, cipher, key, nonce, nil) == 1 else {
            throw PushTransportError(.encryptionFailed, "AES-128-GCM set-up failed: " + openSSLErrorMessage(fallback: "EVP_EncryptInit_ex2 failed"))
        }
        var out = [UInt8](repeating: 0, count: plaintext.count + 16)
        var written: Int32 = 0
        var final: Int32 = 0
        let ok = out.withUnsafeMutableBufferPointer { o in
            EVP_EncryptUpdate(ctx, o.baseAddress, &written, plaintext, Int32(plaintext.count)) == 1
                && EVP_EncryptFinal_ex(ctx, o.baseAddress! + Int(written), &final) == 1
                && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, o.baseAddress! + plaintext.count) == 1
        }
        guard ok, Int(written + final) == plaintext.count else {
            throw PushTransportError(.encryptionFailed, "AES-128-GCM failed: " + openSSLErrorMessage(fallback: "EVP_EncryptUpdate failed"))
        }
        return out
    }
}
