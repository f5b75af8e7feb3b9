// The mock's internal signer (MockPushFixtures.signSHA256), to craft OAuth assertions, valid and
// deliberately wrong, without a sender: the only reason this file reaches into the module.
@testable import MockPush

/// Signs an OAuth assertion (RS256 JWT) with the RSA PEM key at `privateKeyPath`.
func fcmAssertion(privateKeyPath: String, headerJSON: String, claimsJSON: String) throws -> String {
    let signingInput = base64url(Array(headerJSON.utf8)) + "." + base64url(Array(claimsJSON.utf8))
    let signature = try MockPushFixtures.signSHA256(privateKeyPath: privateKeyPath, message: Array(signingInput.utf8))
    return signingInput + "." + base64url(signature)
}
