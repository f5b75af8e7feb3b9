import Foundation

/// The public parts of a provider token that verified.
struct VerifiedJWT: Sendable, Hashable {
    var keyID: String
    var issuer: String
    var issuedAt: Int64
}

/// Verifies APNs provider tokens (ES256 JWTs) against the configured keys.
///
/// Checks, by Apple's rules (``MockAPNsRules``), in order: three base64url parts; header `alg` =
/// `ES256` and a known `kid`
/// (else `InvalidProviderToken`); the signature; `iss` = the key's team (else
/// `InvalidProviderToken`). Age is checked separately by `checkAge`, because a
/// connection re-checks the age of a token it already verified on every request, against
/// the maximum in force then (`MockConnectionFaults.tokenMaxAgeSeconds`).
struct JWTVerifier: Sendable {
    struct Key: Sendable {
        var teamID: String
        var publicKey: MockVerifyingKey
    }

    let keys: [String: Key]
    let futureSkewSeconds: Int64

    /// - Throws: `MockPushError.keyLoadFailed` when a key file is missing or not a P-256 key.
    init(tokenKeys: [MockTokenKey], futureSkewSeconds: Int64) throws {
        var keys: [String: Key] = [:]
        for key in tokenKeys {
            let publicKey = try MockVerifyingKey(pemPath: key.publicKeyPEMPath, algorithm: .es256, owner: "key id \(key.keyID)")
            keys[key.keyID] = Key(teamID: key.teamID, publicKey: publicKey)
        }
        self.keys = keys
        self.futureSkewSeconds = futureSkewSeconds
    }

    private struct Header: Decodable {
        var alg: String?
        var kid: String?
    }

    private struct Claims: Decodable {
        var iss: String?
        var iat: Int64?
    }

    /// Verifies `jwt` (the part after `bearer `).
    func verify(_ jwt: Substring) -> Checked<VerifiedJWT> {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = MockBase64URL.decode(parts[0]),
              let claimsBytes = MockBase64URL.decode(parts[1]),
              let signature = MockBase64URL.decode(parts[2]),
              let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes)),
              let claims = try? JSONDecoder().decode(Claims.self, from: Data(claimsBytes))
        else { return .failure(.invalidProviderToken) }
        guard header.alg == MockAPNsRules.providerTokenAlgorithm, let kid = header.kid, let key = keys[kid] else {
            return .failure(.invalidProviderToken)
        }
        let signedPart = jwt[jwt.startIndex..<parts[1].endIndex]
        guard key.publicKey.verify(signature: signature, of: signedPart.utf8) else {
            return .failure(.invalidProviderToken)
        }
        guard let iss = claims.iss, iss == key.teamID, let iat = claims.iat else {
            return .failure(.invalidProviderToken)
        }
        return .success(VerifiedJWT(keyID: kid, issuer: iss, issuedAt: iat))
    }

    /// `ExpiredProviderToken` when older than `maxAgeSeconds` (every token when it is
    /// negative), `InvalidProviderToken` when issued further in the future than the
    /// tolerated skew, nil when fine.
    func checkAge(_ token: VerifiedJWT, now: Int64, maxAgeSeconds: Int64 = MockAPNsRules.providerTokenMaxAgeSeconds) -> MockAPNsReason? {
        if maxAgeSeconds < 0 || now - token.issuedAt > maxAgeSeconds { return .expiredProviderToken }
        if token.issuedAt - now > futureSkewSeconds { return .invalidProviderToken }
        return nil
    }
}
