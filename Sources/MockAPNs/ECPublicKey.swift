import COpenSSL

/// A P-256 key held as an OpenSSL `EVP_PKEY`, used only to verify ES256 signatures.
///
/// Owns the `EVP_PKEY*` and frees it in `deinit`.
///
/// `@unchecked Sendable`: the key is never mutated after `init`; OpenSSL allows a
/// constant `EVP_PKEY` to be used by several threads at once as long as each
/// verification has its own `EVP_MD_CTX`, which `verify` creates per call.
final class ECPublicKey: @unchecked Sendable {
    private let pkey: OpaquePointer

    /// Loads a PEM public key (`BEGIN PUBLIC KEY`) or a PKCS#8 private key (`.p8`).
    ///
    /// - Throws: `MockAPNsError.keyLoadFailed` naming `path` and OpenSSL's message.
    init(pemPath path: String, pem: [UInt8]) throws {
        pkey = try readVerifyingKey(pemPath: path, pem: pem, baseID: EVP_PKEY_EC, kind: "a P-256 key")
    }

    deinit { EVP_PKEY_free(pkey) }

    /// Whether `signature` (raw r‖s, 64 bytes, as in a JWT) is a valid ES256 signature of `message`.
    func verify(signature: [UInt8], of message: Substring.UTF8View) -> Bool {
        guard signature.count == 64, let der = Self.derSignature(rawRS: signature) else { return false }
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, pkey) == 1 else {
            ERR_clear_error()
            return false
        }
        let ok = der.withUnsafeBufferPointer { sig in
            Array(message).withUnsafeBufferPointer { msg in
                EVP_DigestVerify(ctx, sig.baseAddress, sig.count, msg.baseAddress, msg.count)
            }
        }
        if ok != 1 { ERR_clear_error() }
        return ok == 1
    }

    /// Converts JWT's raw r‖s into the DER `ECDSA-Sig-Value` OpenSSL verifies.
    static func derSignature(rawRS: [UInt8]) -> [UInt8]? {
        guard let sig = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(sig) }
        let (r, s) = rawRS.withUnsafeBufferPointer { buf in
            (BN_bin2bn(buf.baseAddress, 32, nil), BN_bin2bn(buf.baseAddress! + 32, 32, nil))
        }
        guard let r, let s else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        guard ECDSA_SIG_set0(sig, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(sig, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buf -> Int32 in
            var p: UnsafeMutablePointer<UInt8>? = buf.baseAddress
            return i2d_ECDSA_SIG(sig, &p)
        }
        return written == length ? der : nil
    }
}

/// OpenSSL's error queue as one string (and cleared).
func openSSLErrorMessage() -> String {
    var messages: [String] = []
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        var buf = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buf, buf.count)
        messages.append(String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return messages.isEmpty ? "no OpenSSL error" : messages.joined(separator: "; ")
}
