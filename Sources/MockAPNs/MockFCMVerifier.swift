import Foundation
import PushCore

/// Verifies the RS256 assertions service accounts send to the mock's token endpoint, as
/// Google's does: three base64url parts; header `alg` = `RS256` (and `kid` = the account's
/// key id when configured); `iss` a known account; the signature against its public key;
/// `scope` naming firebase.messaging; `aud` the token URL; `exp` not past and at most
/// 3600 s after `iat`; `iat` not in the future beyond the tolerated skew.
struct MockFCMVerifier: Sendable {
    struct Account: Sendable {
        var configuration: MockFCMServiceAccount
        var publicKey: RSAPublicKey
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

    /// - Throws: `MockAPNsError.keyLoadFailed` when a key file is missing or not RSA.
    init(configuration: MockFCMConfiguration, futureSkewSeconds: Int64) throws {
        var accounts: [String: Account] = [:]
        for account in configuration.serviceAccounts {
            guard let data = FileManager.default.contents(atPath: account.publicKeyPEMPath) else {
                throw MockAPNsError(.keyLoadFailed, "cannot read the public key file \(account.publicKeyPEMPath) of FCM account \(account.clientEmail)")
            }
            accounts[account.clientEmail] = Account(configuration: account, publicKey: try RSAPublicKey(pemPath: account.publicKeyPEMPath, pem: Array(data)))
        }
        self.accounts = accounts
        self.futureSkewSeconds = futureSkewSeconds
    }

    /// Verifies `assertion` at `now` for a token endpoint reachable as one of `audiences`.
    func verify(_ assertion: String, now: Int64, audiences: [String]) -> Result<MockFCMServiceAccount, Refusal> {
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = Base64URL.decode(parts[0]), let claimsBytes = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2]),
              let header = JSONValue.parse(headerBytes), let claims = JSONValue.parse(claimsBytes)
        else { return .failure(.invalidGrant("Invalid JWT: could not decode the assertion.", issuer: nil)) }
        let issuer = claims["iss"]?.stringValue
        guard header["alg"]?.stringValue == "RS256" else {
            return .failure(.invalidGrant("Invalid JWT: alg must be RS256.", issuer: issuer))
        }
        guard let issuer, let account = accounts[issuer] else {
            return .failure(.invalidGrant("Invalid grant: account not found", issuer: issuer))
        }
        if let keyID = account.configuration.keyID, header["kid"]?.stringValue != keyID {
            return .failure(.invalidGrant("Invalid JWT Signature.", issuer: issuer))
        }
        let signed = Array(assertion.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard account.publicKey.verify(signature: signature, of: signed) else {
            return .failure(.invalidGrant("Invalid JWT Signature.", issuer: issuer))
        }
        let scopes = (claims["scope"]?.stringValue ?? "").split(separator: " ")
        guard scopes.contains(Substring(FCMOAuthClaims.scope)) else {
            return .failure(Refusal(status: 400, error: "invalid_scope", description: "Invalid OAuth scope or ID token audience provided.", issuer: issuer))
        }
        guard let aud = claims["aud"]?.stringValue, audiences.contains(aud) else {
            return .failure(.invalidGrant("Invalid JWT: Failed audience check. The expected audience is \(audiences.first ?? "")", issuer: issuer))
        }
        guard let iat = claims["iat"]?.int64Value, let exp = claims["exp"]?.int64Value,
              exp > now, exp - iat <= FCMOAuthClaims.maxLifetimeSeconds, exp > iat, iat - now <= futureSkewSeconds else {
            return .failure(.invalidGrant("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.", issuer: issuer))
        }
        return .success(account.configuration)
    }
}
