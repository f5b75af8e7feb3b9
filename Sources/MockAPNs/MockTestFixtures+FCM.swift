import COpenSSL
import Foundation
import PushCore

extension MockTestFixtures {
    /// Signs an OAuth assertion (RS256 JWT) with an RSA PEM key, for tests that need one
    /// without the real exchange, including deliberately wrong ones.
    ///
    /// - Parameters:
    ///   - privateKeyPath: the RSA key (e.g. `fcm-key.pem` or `fcm-other-key.pem`).
    ///   - headerJSON: the JOSE header, e.g. `{"alg":"RS256","typ":"JWT","kid":"…"}`.
    ///   - claimsJSON: the claims, verbatim.
    /// - Throws: `MockAPNsError.keyLoadFailed` when the key cannot be read or used.
    public static func fcmAssertion(privateKeyPath: String, headerJSON: String, claimsJSON: String) throws -> String {
        guard let pem = FileManager.default.contents(atPath: privateKeyPath) else {
            throw MockAPNsError(.keyLoadFailed, "cannot read \(privateKeyPath)")
        }
        let key = Array(pem).withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let key else { throw MockAPNsError(.keyLoadFailed, "\(privateKeyPath) is not a PEM private key: \(openSSLErrorMessage())") }
        defer { EVP_PKEY_free(key) }
        let signingInput = Base64URL.encode(Array(headerJSON.utf8)) + "." + Base64URL.encode(Array(claimsJSON.utf8))
        let message = Array(signingInput.utf8)
        guard let ctx = EVP_MD_CTX_new() else { throw MockAPNsError(.keyLoadFailed, "EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, key) == 1 else {
            throw MockAPNsError(.keyLoadFailed, "cannot sign with \(privateKeyPath): \(openSSLErrorMessage())")
        }
        var length = Int(EVP_PKEY_get_size(key))
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(ctx, &signature, &length, message, message.count) == 1 else {
            throw MockAPNsError(.keyLoadFailed, "cannot sign with \(privateKeyPath): \(openSSLErrorMessage())")
        }
        return signingInput + "." + Base64URL.encode(signature.prefix(length))
    }

    /// The claims of a valid assertion of the fixtures' account for `audience`, issued at `issuedAt`.
    public static func fcmClaimsJSON(audience: String, issuedAt: Int64, lifetime: Int64 = 3600,
                                     scope: String = FCMOAuthClaims.scope, issuer: String = fcmClientEmail) -> String {
        #"{"iss":"# + JSONValue.quoted(issuer) + #","scope":"# + JSONValue.quoted(scope) + #","aud":"#
            + JSONValue.quoted(audience) + #","iat":"# + String(issuedAt) + #","exp":"# + String(issuedAt + lifetime) + "}"
    }

    /// The header of an assertion of the fixtures' account.
    public static let fcmHeaderJSON = #"{"alg":"RS256","typ":"JWT","kid":""# + fcmKeyID + #""}"#
}
