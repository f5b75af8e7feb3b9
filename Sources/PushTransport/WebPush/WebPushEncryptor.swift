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
/// Owns the fetched HMAC and AES-128-GCM implementations (`EVP_MAC`, `EVP_CIPHER`), fetched once
/// and freed in `deinit`, so that a message costs no algorithm look-up; the P-256 work goes to
/// ``P256``'s shared group.
///
/// `@unchecked Sendable`: the fetched algorithms are immutable and reference-counted by OpenSSL;
/// every message makes its own contexts, so any number of threads may encrypt at once.
public final class WebPushEncryptor: @unchecked Sendable {
    private let mac: OpaquePointer
    private let cipher: OpaquePointer
    /// Each message's key pair and salt.
    public let source: any WebPushEphemeralSource

    /// The record size written in the header: 4096, the size RFC 8291 §4 assumes.
    public static let recordSize: UInt32 = 4096

    /// - Parameter source: each message's key pair and salt; defaults to fresh ones.
    /// - Throws: ``PushTransportError`` `.encryptionFailed` when OpenSSL has no HMAC or AES-128-GCM.
    public init(source: any WebPushEphemeralSource = FreshWebPushEphemerals()) throws {
        ERR_clear_error()
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else {
            throw PushTransportError(.encryptionFailed, "OpenSSL has no HMAC: " + openSSLErrorMessage(fallback: "EVP_MAC_fetch failed"))
        }
        guard let cipher = EVP_CIPHER_fetch(nil, "AES-128-GCM", nil) else {
            EVP_MAC_free(mac)
            throw PushTransportError(.encryptionFailed, "OpenSSL has no AES-128-GCM: " + openSSLErrorMessage(fallback: "EVP_CIPHER_fetch failed"))
        }
        self.mac = mac
        self.cipher = cipher
        self.source = source
    }

    deinit {
        EVP_MAC_free(mac)
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
    ///
    /// HKDF-SHA256 (RFC 5869) written out as its HMACs, all on one HMAC context re-keyed per step:
    /// every output here is at most one hash long, so expand is a single HMAC of `info ‖ 0x01`,
    /// and `CEK` and `NONCE` share their extract (same `IKM`, same salt). Five HMACs, where
    /// `EVP_KDF`'s HKDF made a context, parsed its parameters and extracted again for each of
    /// the three outputs.
    func deriveKeys(ecdhSecret: [UInt8], auth: [UInt8], uaPublic: [UInt8], asPublic: [UInt8],
                    salt: [UInt8]) throws -> (ikm: [UInt8], cek: [UInt8], nonce: [UInt8]) {
        ERR_clear_error()
        guard let ctx = EVP_MAC_CTX_new(mac) else {
            throw PushTransportError(.encryptionFailed, "EVP_MAC_CTX_new failed: " + openSSLErrorMessage(fallback: "out of memory"))
        }
        defer { EVP_MAC_CTX_free(ctx) }
        var digest = Array("SHA256".utf8CString)
        let set = digest.withUnsafeMutableBufferPointer { d in
            var params = [OSSL_PARAM_construct_utf8_string(cName("digest"), d.baseAddress, 0), OSSL_PARAM_construct_end()]
            return EVP_MAC_CTX_set_params(ctx, &params)
        }
        guard set == 1 else {
            throw PushTransportError(.encryptionFailed, "HMAC-SHA256 set-up failed: " + openSSLErrorMessage(fallback: "EVP_MAC_CTX_set_params failed"))
        }
        func hmac(key: [UInt8], _ parts: [UInt8]...) throws -> [UInt8] {
            var out = [UInt8](repeating: 0, count: 32)
            var written = 0
            var ok = EVP_MAC_init(ctx, key, key.count, nil) == 1
            for part in parts where ok { ok = EVP_MAC_update(ctx, part, part.count) == 1 }
            guard ok, EVP_MAC_final(ctx, &out, &written, 32) == 1, written == 32 else {
                throw PushTransportError(.encryptionFailed, "HKDF failed: " + openSSLErrorMessage(fallback: "HMAC-SHA256 failed"))
            }
            return out
        }
        let one: [UInt8] = [1]
        let ikm = try hmac(key: hmac(key: auth, ecdhSecret), Self.keyInfoLabel, uaPublic, asPublic, one)
        let prk = try hmac(key: salt, ikm)
        let cek = try hmac(key: prk, Self.cekInfo, one)
        let nonce = try hmac(key: prk, Self.nonceInfo, one)
        return (ikm, Array(cek[0..<16]), Array(nonce[0..<12]))
    }

    /// RFC 8291 §3.3's `key_info` up to the two public keys: `"WebPush: info" ‖ 0x00`.
    static let keyInfoLabel = Array("WebPush: info".utf8) + [0]
    /// RFC 8188 §2.2's `cek_info` and `nonce_info`.
    static let cekInfo = Array("Content-Encoding: aes128gcm".utf8) + [0]
    static let nonceInfo = Array("Content-Encoding: nonce".utf8) + [0]

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
