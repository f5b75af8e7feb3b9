import COpenSSL
import Testing

/// A P-256 key pair generated in-process (no fixtures): PKCS#8 private PEM and SPKI public PEM.
struct TestKeyPair {
    let privatePEM: [UInt8]
    let publicPEM: [UInt8]

    static func generate() -> TestKeyPair {
        let pkey = copenssl_ec_gen("P-256")!
        defer { EVP_PKEY_free(pkey) }
        return TestKeyPair(privatePEM: pem { PEM_write_bio_PrivateKey($0, pkey, nil, nil, 0, nil, nil) },
                           publicPEM: pem { PEM_write_bio_PUBKEY($0, pkey) })
    }

    private static func pem(_ write: (OpaquePointer) -> Int32) -> [UInt8] {
        let bio = BIO_new(BIO_s_mem())!
        defer { BIO_free(bio) }
        precondition(write(bio) == 1)
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = BIO_read(bio, &buffer, Int32(buffer.count))
            if n <= 0 { break }
            out += buffer.prefix(Int(n))
        }
        return out
    }
}

/// Verifies an ES256 JWS (raw r‖s signature) with OpenSSL's EVP_DigestVerify — independent of the signer.
func verifyES256(message: [UInt8], rawSignature: [UInt8], publicKeyPEM: [UInt8]) -> Bool {
    guard rawSignature.count == 64 else { return false }
    let pkey: OpaquePointer? = publicKeyPEM.withUnsafeBytes { raw in
        let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count))
        defer { BIO_free(bio) }
        return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
    }
    guard let pkey else { return false }
    defer { EVP_PKEY_free(pkey) }
    let sig = ECDSA_SIG_new()!
    defer { ECDSA_SIG_free(sig) }
    let r = BN_bin2bn(rawSignature, 32, nil)
    let s = rawSignature.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
    guard ECDSA_SIG_set0(sig, r, s) == 1 else { return false }
    var derPointer: UnsafeMutablePointer<UInt8>? = nil
    let derLength = i2d_ECDSA_SIG(sig, &derPointer)
    guard derLength > 0, let derPointer else { return false }
    defer { CRYPTO_free(derPointer, #file, #line) }
    let ctx = EVP_MD_CTX_new()!
    defer { EVP_MD_CTX_free(ctx) }
    guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, pkey) == 1 else { return false }
    return EVP_DigestVerify(ctx, derPointer, Int(derLength), message, message.count) == 1
}
