import COpenSSL

/// Opens an `aes128gcm` Web Push message as the user agent does, written from the RFCs (not
/// from pushq's encryptor, so that a mistake in one is not agreed with by the other):
///
/// - RFC 8188 §2.1, the header: `salt` (16) ‖ `rs` (uint32, big-endian) ‖ `idlen` (uint8) ‖
///   `keyid` (idlen octets), then the records.
/// - RFC 8291 §4: one record only; `keyid` is the application server's ECDH public key, an
///   uncompressed P-256 point (65 octets); `rs` greater than the record.
/// - RFC 8291 §3.3–3.4: `ecdh_secret = ECDH(ua_private, as_public)`;
///   `IKM = HKDF(salt = auth_secret, ikm = ecdh_secret, info = "WebPush: info" ‖ 0x00 ‖
///   ua_public ‖ as_public, 32)`; then RFC 8188 §2.2–2.3: `PRK = HKDF-Extract(salt, IKM)`,
///   `CEK` = 16 octets with info `"Content-Encoding: aes128gcm" ‖ 0x00`, `NONCE` = 12 octets
///   with info `"Content-Encoding: nonce" ‖ 0x00` (the single record's sequence number is 0).
/// - AEAD_AES_128_GCM with a 16-octet tag, no associated data; the padded plaintext ends with
///   the delimiter 0x02 (last record) followed only by zero octets (RFC 8188 §2; RFC 8291 §4:
///   any other delimiter discards the message).
enum MockWebPushDecryptor {
    /// Why a message does not decrypt, in words for the 400's `message` and the record.
    struct Failure: Error, Equatable, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static let headerLength = 16 + 4 + 1
    static let tagLength = 16

    /// The plaintext of `body` for the subscription whose private key is `receiver` and whose
    /// authentication secret is `authSecret`.
    static func decrypt(_ body: [UInt8], receiver: MockWebPushKey, authSecret: [UInt8]) -> Result<[UInt8], Failure> {
        guard body.count >= headerLength else {
            return .failure(Failure("the body (\(body.count) octets) is shorter than an aes128gcm header (RFC 8188 §2.1)"))
        }
        let salt = Array(body[0..<16])
        let rs = body[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let idlen = Int(body[20])
        guard rs >= 18 else { return .failure(Failure("record size rs=\(rs) is below 18 (RFC 8188 §2.1)")) }
        guard idlen == 65 else {
            return .failure(Failure("keyid is \(idlen) octets; it must be the sender's 65-octet P-256 public key (RFC 8291 §4)"))
        }
        guard body.count >= headerLength + idlen + tagLength + 1 else {
            return .failure(Failure("the body (\(body.count) octets) holds no whole record after its \(headerLength + idlen)-octet header"))
        }
        let keyID = Array(body[headerLength..<(headerLength + idlen)])
        let record = Array(body[(headerLength + idlen)...])
        guard record.count < rs else {
            return .failure(Failure("the record (\(record.count) octets) is not smaller than rs=\(rs): one record only (RFC 8291 §4)"))
        }
        guard let sender = MockWebPushKey.publicKey(point: keyID) else {
            return .failure(Failure("keyid is not an uncompressed point on P-256 (RFC 8291 §4)"))
        }
        guard let ecdhSecret = receiver.sharedSecret(with: sender) else {
            return .failure(Failure("ECDH with the sender's key failed"))
        }
        guard let (cek, nonce) = contentKeys(ecdhSecret: ecdhSecret, authSecret: authSecret, salt: salt,
                                             receiverPublic: receiver.publicPoint, senderPublic: keyID) else {
            return .failure(Failure("HKDF failed: \(openSSLErrorMessage())"))
        }
        guard let padded = aes128GCMOpen(record, key: cek, nonce: nonce) else {
            return .failure(Failure("AES-128-GCM authentication failed: wrong keys, auth secret, salt or ciphertext (RFC 8291 §3.4)"))
        }
        guard let end = padded.lastIndex(where: { $0 != 0 }) else {
            return .failure(Failure("the record holds only padding, no delimiter (RFC 8188 §2)"))
        }
        guard padded[end] == 0x02 else {
            return .failure(Failure("padding delimiter 0x\(String(padded[end], radix: 16)), not 0x02 (RFC 8291 §4)"))
        }
        return .success(Array(padded[..<end]))
    }

    /// RFC 8291 §3.4 and RFC 8188 §2.2–2.3: the content-encryption key and the nonce.
    static func contentKeys(
        ecdhSecret: [UInt8], authSecret: [UInt8], salt: [UInt8], receiverPublic: [UInt8], senderPublic: [UInt8]
    ) -> (cek: [UInt8], nonce: [UInt8])? {
        let keyInfo = Array("WebPush: info".utf8) + [0] + receiverPublic + senderPublic
        guard let prkKey = hmacSHA256(key: authSecret, ecdhSecret),
              let ikm = hmacSHA256(key: prkKey, keyInfo + [1]),
              let prk = hmacSHA256(key: salt, ikm),
              let cek = hmacSHA256(key: prk, Array("Content-Encoding: aes128gcm".utf8) + [0, 1]),
              let nonce = hmacSHA256(key: prk, Array("Content-Encoding: nonce".utf8) + [0, 1])
        else { return nil }
        // HKDF-Expand of at most 32 octets is the first block, T(1) = HMAC(PRK, info ‖ 0x01), cut.
        return (Array(cek.prefix(16)), Array(nonce.prefix(12)))
    }

    /// HMAC-SHA-256 (one HKDF-Extract, or one block of HKDF-Expand).
    static func hmacSHA256(key: [UInt8], _ data: [UInt8]) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: 32)
        var length = 0
        let done = EVP_Q_mac(nil, "HMAC", nil, "SHA256", nil, key, key.count, data, data.count, &out, out.count, &length)
        guard done != nil, length == 32 else { return nil }
        return out
    }

    /// AES-128-GCM decryption of `sealed` (ciphertext ‖ 16-octet tag), no associated data; nil
    /// when the tag does not verify.
    static func aes128GCMOpen(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8]) -> [UInt8]? {
        guard sealed.count >= tagLength, key.count == 16, nonce.count == 12, let ctx = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(ctx) }
        let ciphertext = Array(sealed.dropLast(tagLength))
        var tag = Array(sealed.suffix(tagLength))
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var written: Int32 = 0
        var final: Int32 = 0
        let ok = EVP_DecryptInit_ex(ctx, EVP_aes_128_gcm(), nil, key, nonce) == 1
            && EVP_DecryptUpdate(ctx, &plaintext, &written, ciphertext, Int32(ciphertext.count)) == 1
            && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, Int32(tagLength), &tag) == 1
            && plaintext.withUnsafeMutableBufferPointer { buf in
                EVP_DecryptFinal_ex(ctx, buf.baseAddress! + Int(written), &final) == 1
            }
        guard ok else {
            ERR_clear_error()
            return nil
        }
        return Array(plaintext.prefix(Int(written + final)))
    }
}
