/// The public parts of a VAPID authorization that verified (RFC 8292).
struct MockVAPIDClaims: Sendable, Hashable {
    /// `k`: the application server's public key, base64url as sent.
    var publicKey: String
    var audience: String
    var expiresAt: Int64
    var subject: String
}

/// Checks `Authorization: vapid t=<JWT>, k=<key>` (RFC 8292 §3), by RFC 8292 and Apple's
/// stricter reading (``MockWebPushRules``): the scheme `vapid` with both parameters; `k` an
/// uncompressed P-256 point; the JWT three base64url parts, header `alg` ES256, the signature
/// valid under `k`; `aud` exactly the endpoint's origin; `exp` after now and at most 24 hours
/// ahead; `sub` a reachable `mailto:` or `https:` URI.
enum MockWebPushVAPID {
    /// The `t` and `k` parameters of a `vapid` authorization, or nil when it is not one.
    static func parameters(_ authorization: String) -> (token: Substring, key: Substring)? {
        let trimmed = authorization.drop { $0 == " " }
        guard let space = trimmed.firstIndex(of: " "), trimmed[..<space].lowercased() == "vapid" else { return nil }
        var token: Substring?
        var key: Substring?
        for part in trimmed[trimmed.index(after: space)...].split(separator: ",") {
            let item = part.trimmingPrefixAndSuffix(" ")
            guard let equals = item.firstIndex(of: "=") else { return nil }
            let name = item[..<equals].lowercased()
            var value = item[item.index(after: equals)...]
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
            switch name {
            case "t": token = value
            case "k": key = value
            default: break
            }
        }
        guard let token, let key, !token.isEmpty, !key.isEmpty else { return nil }
        return (token, key)
    }

    /// The claims of a valid JWT signed by `k`, or what is wrong (for the 403's `message`).
    /// The audience and the expiry are checked by `check(_:origin:now:)` on every request.
    static func verify(token: Substring, key: Substring) -> Result<MockVAPIDClaims, MockWebPushDecryptor.Failure> {
        guard let point = MockBase64URL.decode(key), let publicKey = MockWebPushKey.publicKey(point: point) else {
            return .failure(.init("k is not a base64url uncompressed P-256 public key (RFC 8292 §3.2)"))
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = MockBase64URL.decode(parts[0]), let claimsBytes = MockBase64URL.decode(parts[1]),
              let signature = MockBase64URL.decode(parts[2]),
              let header = MockJSON.object(headerBytes), let claims = MockJSON.object(claimsBytes) else {
            return .failure(.init("t is not a JWT (three base64url parts, JSON header and claims)"))
        }
        guard header["alg"] as? String == MockWebPushRules.jwtAlgorithm else {
            return .failure(.init("the JWT's alg is \(header["alg"].map { "\($0)" } ?? "missing"), not ES256 (RFC 8292 §2)"))
        }
        let signed = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard publicKey.verifyES256(signature: signature, of: signed) else {
            return .failure(.init("the JWT's signature does not verify with k"))
        }
        guard let audience = claims["aud"] as? String else { return .failure(.init("the JWT has no aud claim")) }
        guard let exp = MockJSON.int64(claims["exp"]) else { return .failure(.init("the JWT has no integer exp claim")) }
        let subject = claims["sub"] as? String
        if let problem = MockWebPushRules.subjectProblem(subject) { return .failure(.init(problem)) }
        return .success(MockVAPIDClaims(publicKey: String(key), audience: audience, expiresAt: exp, subject: subject ?? ""))
    }

    /// What the claims lack for a request to an endpoint on `origin` at `now`, nil when fine.
    static func check(_ claims: MockVAPIDClaims, origin: String, now: Int64) -> String? {
        if claims.audience != origin {
            return "the JWT's aud is \"\(claims.audience)\", not the endpoint's origin \"\(origin)\" (RFC 8292 §2)"
        }
        if claims.expiresAt <= now { return "the JWT expired (exp \(claims.expiresAt), now \(now))" }
        if claims.expiresAt - now > MockWebPushRules.maxJWTLifetimeSeconds {
            return "the JWT's exp is \(claims.expiresAt - now) s ahead, more than 24 hours (RFC 8292 §2)"
        }
        return nil
    }
}

extension Substring {
    fileprivate func trimmingPrefixAndSuffix(_ c: Character) -> Substring {
        var s = self
        while s.first == c { s = s.dropFirst() }
        while s.last == c { s = s.dropLast() }
        return s
    }
}
