import COpenSSL

/// An RSA key held as an OpenSSL `EVP_PKEY`, used only to verify RS256 signatures
/// (FCM service-account assertions).
///
/// Owns the `EVP_PKEY*` and frees it in `deinit`.
///
/// `@unchecked Sendable`: the key is never mutated after `init`; OpenSSL allows a
/// constant `EVP_PKEY` to be used by several threads at once as long as each
/// verification has its own `EVP_MD_CTX`, which `verify` creates per call.
final class RSAPublicKey: @unchecked Sendable {
    private let pkey: OpaquePointer

    /// Loads a PEM public key (`BEGIN PUBLIC KEY`) or a PEM private key (its public half is used).
    ///
    /// - Throws: `MockAPNsError.keyLoadFailed` naming `path` and OpenSSL's message.
    init(pemPath path: String, pem: [UInt8]) throws {
        pkey = try readVerifyingKey(pemPath: path, pem: pem, baseID: EVP_PKEY_RSA, kind: "an RSA key")
    }

    deinit { EVP_PKEY_free(pkey) }

    /// Whether `signature` is a valid RSASSA-PKCS1-v1_5 SHA-256 signature of `message`.
    func verify(signature: [UInt8], of message: [UInt8]) -> Bool {
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, pkey) == 1 else {
            ERR_clear_error()
            return false
        }
        let ok = signature.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { msg in
                EVP_DigestVerify(ctx, sig.baseAddress, sig.count, msg.baseAddress, msg.count)
            }
        }
        if ok != 1 { ERR_clear_error() }
        return ok == 1
    }
}
