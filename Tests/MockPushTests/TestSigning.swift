// OAuth assertions (RS256 JWTs), valid and deliberately wrong, signed here with OpenSSL: the mock's
// public API signs only whole, valid provider tokens, and these tests need any header and claims.
import COpenSSL
import Foundation

struct TestSigningError: Error, CustomStringConvertible {
    var description: String
}

/// Signs an OAuth assertion (RS256 JWT) with the RSA PEM key at `privateKeyPath`.
func fcmAssertion(privateKeyPath: String, headerJSON: String, claimsJSON: String) throws -> String {
    let signingInput = base64url(Array(headerJSON.utf8)) + "." + base64url(Array(claimsJSON.utf8))
    let signature = try rsaSHA256(privateKeyPath: privateKeyPath, message: Array(signingInput.utf8))
    return signingInput + "." + base64url(signature)
}

/// RSASSA-PKCS1-v1_5 with SHA-256 over `message`, with the PEM private key at `privateKeyPath`.
private func rsaSHA256(privateKeyPath: String, message: [UInt8]) throws -> [UInt8] {
    guard let pem = FileManager.default.contents(atPath: privateKeyPath) else {
        throw TestSigningError(description: "cannot read \(privateKeyPath)")
    }
    let key = Array(pem).withUnsafeBytes { raw -> OpaquePointer? in
        guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
        defer { BIO_free(bio) }
        return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
    }
    guard let key else { throw TestSigningError(description: "\(privateKeyPath) is not a PEM private key") }
    defer { EVP_PKEY_free(key) }
    guard let ctx = EVP_MD_CTX_new() else { throw TestSigningError(description: "EVP_MD_CTX_new failed") }
    defer { EVP_MD_CTX_free(ctx) }
    var length = 0
    guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, key) == 1,
          EVP_DigestSign(ctx, nil, &length, message, message.count) == 1 else {
        throw TestSigningError(description: "cannot sign with \(privateKeyPath)")
    }
    var signature = [UInt8](repeating: 0, count: length)
    guard EVP_DigestSign(ctx, &signature, &length, message, message.count) == 1 else {
        throw TestSigningError(description: "cannot sign with \(privateKeyPath)")
    }
    return Array(signature.prefix(length))
}
