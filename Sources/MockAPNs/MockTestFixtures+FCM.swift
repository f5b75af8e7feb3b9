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
        let signingInput = Base64URL.encode(Array(headerJSON.utf8)) + "." + Base64URL.encode(Array(claimsJSON.utf8))
        let signature = try signSHA256(privateKeyPath: privateKeyPath, message: Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
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
