import COpenSSL

/// Reads the key a signature is checked with from PEM: a public key (`BEGIN PUBLIC KEY`), or a
/// private key whose public half is used. The caller owns the returned `EVP_PKEY*` and frees it.
///
/// - Parameters:
///   - baseID: the OpenSSL key type required (`EVP_PKEY_EC`, `EVP_PKEY_RSA`).
///   - kind: how errors name that type ("a P-256 key", "an RSA key").
/// - Throws: `MockAPNsError.keyLoadFailed` naming `path` and OpenSSL's message.
func readVerifyingKey(pemPath path: String, pem: [UInt8], baseID: Int32, kind: String) throws -> OpaquePointer {
    func readKey(_ read: (OpaquePointer) -> OpaquePointer?) -> OpaquePointer? {
        pem.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return read(bio)
        }
    }
    let key = readKey { PEM_read_bio_PUBKEY($0, nil, nil, nil) }
        ?? readKey { PEM_read_bio_PrivateKey($0, nil, nil, nil) }
    guard let key else {
        throw MockAPNsError(.keyLoadFailed, "cannot read \(kind) from \(path): \(openSSLErrorMessage())")
    }
    guard EVP_PKEY_get_base_id(key) == baseID else {
        EVP_PKEY_free(key)
        throw MockAPNsError(.keyLoadFailed, "\(path) is not \(kind)")
    }
    ERR_clear_error()
    return key
}
