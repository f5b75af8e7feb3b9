import Foundation

/// Verifies the RS256 assertions service accounts send to the mock's token endpoint, as
/// Google's does (by Google's rules, ``MockFCMRules``): three base64url parts; header `alg` = `RS256` (and `kid` = the account's
/// key id when configured); `iss` a known account; the signature against its public key;
/// `scope` naming firebase.messaging; `aud` the token URL; `exp` not past and at most
/// 3600 s after `iat`; `iat` not in the future beyond the tolerated skew.
struct MockFCMVerifier: Sendable {
    struct Account: Sendable {
        var configuration: MockFCMServiceAccount
        var publicKey: MockVerifyingKey
    }

    /// Why an assertion is refused: the OAuth `error`, its description and HTTP status, as Google answers.
    struct Refusal: Error, Sendable, Hashable {
        var status: Int
        var error: String
        var description: String
        /// The assertion's `iss`, when it could be read (for records).
        var issuer: String?

        static func invalidGrant(_ description: String, issuer: String?) -> Refusal {
            Refusal(status: 400, error: "invalid_grant", description: description, issuer: issuer)
        }
    }

    let accounts: [String: Account]
    let futureSkewSeconds: Int64

    /// - Throws: `MockPushError.keyLoadFailed` when a key file is missing or not RSA.
    init(configuration: MockFCMConfiguration, futureSkewSeconds: Int64) throws {
        var accounts: [String: Account] = [:]
        for account in configuration.serviceAccounts {
            let publicKey = try MockVerifyingKey(pemPath: account.publicKeyPEMPath, algorithm: .rs256, owner: "FCM account \(account.clientEmail)")
            accounts[account.clientEmail] = Account(configuration: account, publicKey: publicKey)
        }
        self.accounts = accounts
        self.futureSkewSeconds = futureSkewSeconds
    }

    /// Verifies `assertion` at `now` for a token endpoint reachable as one of `audiences`.
    func verify(_ assertion: String, now: Int64, audiences: [String]) -> Result<MockFCMServiceAccount, Refusal> {
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = MockBase64URL.decode(parts[0]), let claimsBytes = MockBase64URL.decode(parts[1]),
              let signature = MockBase64URL.decode(parts[2]),
              let header = MockJSON.object(headerBytes), let claims = MockJSON.object(claimsBytes)
        else { return .failure(.invalidGrant("Invalid JWT: could not decode the assertion.", issuer: nil)) }
        let issuer = claims["iss"] as? String
        guard header["alg"] as? String == MockFCMRules.assertionAlgorithm else {
            return .failure(.invalidGrant("Invalid JWT: alg must be RS256.", issuer: issuer))
        }
        guard let issuer, let account = accounts[issuer] else {
            return .failure(.invalidGrant("Invalid grant: account not found", issuer: issuer))
        }
        if let keyID = account.configuration.keyID, header["kid"] as? String != keyID {
            return .failure(.invalidGrant("Invalid JWT Signature.", issuer: issuer))
        }
        let signed = Array(assertion.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard account.publicKey.verify(signature: signature, of: signed) else {
            return .failure(.invalidGrant("Invalid JWT Signature.", issuer: issuer))
        }
        let scopes = (claims["scope"] as? String ?? "").split(separator: " ")
        guard scopes.contains(Substring(MockFCMRules.oauthScope)) else {
            return .failure(Refusal(status: 400, error: "invalid_scope", description: "Invalid OAuth scope or ID token audience provided.", issuer: issuer))
        }
        guard let aud = claims["aud"] as? String, audiences.contains(aud) else {
            return .failure(.invalidGrant("Invalid JWT: Failed audience check. The expected audience is \(audiences.first ?? "")", issuer: issuer))
        }
        guard let iat = MockJSON.int64(claims["iat"]), let exp = MockJSON.int64(claims["exp"]),
              exp > now, exp - iat <= MockFCMRules.maxAssertionLifetimeSeconds, exp > iat, iat - now <= futureSkewSeconds else {
            return .failure(.invalidGrant("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.", issuer: issuer))
        }
        return .success(account.configuration)
    }
}
