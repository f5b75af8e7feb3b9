import COpenSSL
import Foundation

/// Signing with the fixtures' keys (or any PEM key): provider tokens for raw requests.
extension MockPushFixtures {
    /// Signs an APNs provider token (ES256 JWT) with a PKCS#8 `.p8` key, for tests and
    /// benchmark scripts that need a token without a sender (and tokens the mock must refuse:
    /// another key, another team).
    ///
    /// - Parameters:
    ///   - privateKeyPath: the `.p8` file (e.g. ``apnsKeyPath``).
    ///   - keyID: the header's `kid`.
    ///   - teamID: the claim `iss`.
    ///   - issuedAt: the claim `iat`, UNIX seconds.
    /// - Returns: the JWT, without `bearer `.
    /// - Throws: `MockPushError.keyLoadFailed` when the key cannot be read or used.
    public static func providerToken(privateKeyPath: String, keyID: String, teamID: String, issuedAt: Int64) throws -> String {
        let header = MockBase64URL.encode(Array(#"{"alg":"\#(MockAPNsRules.providerTokenAlgorithm)","kid":"\#(keyID)"}"#.utf8))
        let claims = MockBase64URL.encode(Array(#"{"iss":"\#(teamID)","iat":\#(issuedAt)}"#.utf8))
        let der = try signSHA256(privateKeyPath: privateKeyPath, message: Array("\(header).\(claims)".utf8))
        guard let raw = rawSignature(der: der) else {
            throw MockPushError(.keyLoadFailed, "unexpected signature from \(privateKeyPath) (not P-256?)")
        }
        return "\(header).\(claims).\(MockBase64URL.encode(raw))"
    }

    /// Signs `message` with SHA-256 and the PEM private key at `privateKeyPath` (RSASSA-PKCS1-v1_5
    /// for an RSA key, DER ECDSA for an EC key).
    ///
    /// - Throws: `MockPushError.keyLoadFailed` when the key cannot be read or used.
    static func signSHA256(privateKeyPath: String, message: [UInt8]) throws -> [UInt8] {
        guard let pem = FileManager.default.contents(atPath: privateKeyPath) else {
            throw MockPushError(.keyLoadFailed, "cannot read \(privateKeyPath)")
        }
        let key = Array(pem).withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let key else { throw MockPushError(.keyLoadFailed, "\(privateKeyPath) is not a PEM private key: \(openSSLErrorMessage())") }
        defer { EVP_PKEY_free(key) }
        guard let ctx = EVP_MD_CTX_new() else { throw MockPushError(.keyLoadFailed, "EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, key) == 1 else {
            throw MockPushError(.keyLoadFailed, "cannot sign with \(privateKeyPath): \(openSSLErrorMessage())")
        }
        var length = 0
        guard EVP_DigestSign(ctx, nil, &length, message, message.count) == 1 else {
            throw MockPushError(.keyLoadFailed, "cannot sign with \(privateKeyPath): \(openSSLErrorMessage())")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(ctx, &signature, &length, message, message.count) == 1 else {
            throw MockPushError(.keyLoadFailed, "cannot sign with \(privateKeyPath): \(openSSLErrorMessage())")
        }
        return Array(signature.prefix(length))
    }

    /// DER `ECDSA-Sig-Value` → raw r‖s, 32 bytes each.
    static func rawSignature(der: [UInt8]) -> [UInt8]? {
        let sig = der.withUnsafeBufferPointer { buf -> OpaquePointer? in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            return d2i_ECDSA_SIG(nil, &p, buf.count)
        }
        guard let sig else { return nil }
        defer { ECDSA_SIG_free(sig) }
        guard let r = ECDSA_SIG_get0_r(sig), let s = ECDSA_SIG_get0_s(sig) else { return nil }
        var out = [UInt8](repeating: 0, count: 64)
        let ok = out.withUnsafeMutableBufferPointer { buf in
            BN_bn2binpad(r, buf.baseAddress, 32) == 32 && BN_bn2binpad(s, buf.baseAddress! + 32, 32) == 32
        }
        return ok ? out : nil
    }
}
