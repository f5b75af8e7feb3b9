/// The unsigned part of an APNs provider token (an ES256 JWT).
///
/// Header `{"alg":"ES256","kid":"<key id>"}`, claims `{"iss":"<team id>","iat":<seconds>}`,
/// each base64url-encoded without padding and joined by a dot. The signer in
/// `PushTransport` signs ``signingInput`` and appends `.` and the base64url signature.
public struct ProviderTokenClaims: Sendable, Hashable {
    /// The 10-character key id from Apple's developer account (`kid`).
    public var keyID: String
    /// The 10-character team id (`iss`).
    public var teamID: String
    /// When the token was issued, in UNIX epoch seconds (`iat`).
    public var issuedAt: Int64

    public init(keyID: String, teamID: String, issuedAt: Int64) {
        self.keyID = keyID
        self.teamID = teamID
        self.issuedAt = issuedAt
    }

    /// Whether `id` is usable as a key or team id: 1 to 64 ASCII letters and digits.
    ///
    /// Apple's ids are 10 upper-case alphanumerics; anything else would need JSON
    /// escaping and is certainly a configuration mistake.
    public static func isValidID(_ id: String) -> Bool {
        let u = id.utf8
        return !u.isEmpty && u.count <= 64 && u.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
        }
    }

    /// The JOSE header JSON, e.g. `{"alg":"ES256","kid":"ABC123DEFG"}`.
    public var headerJSON: String { #"{"alg":"ES256","kid":""# + keyID + #""}"# }

    /// The claims JSON, e.g. `{"iss":"DEF123GHIJ","iat":1437179036}`.
    public var claimsJSON: String { #"{"iss":""# + teamID + #"","iat":"# + String(issuedAt) + "}" }

    /// `base64url(header) + "." + base64url(claims)`: the bytes ES256 signs.
    public var signingInput: String {
        Base64URL.encode(Array(headerJSON.utf8)) + "." + Base64URL.encode(Array(claimsJSON.utf8))
    }

    /// The complete token: signing input, a dot, and the base64url of the raw 64-byte r‖s signature.
    public func token(rawSignature: [UInt8]) -> String {
        signingInput + "." + Base64URL.encode(rawSignature)
    }
}

/// When a provider token must be replaced, by its age on the host's clock (pure: the caller
/// passes the time). A negative age means the clock went back after the token was signed:
/// its `iat` lies in the future, APNs may refuse it, and an age rule would keep it for as
/// long as the jump plus the interval. Such a token is replaced at once, like an old one.
public enum ProviderTokenAge {
    /// Whether a token issued at `issuedAt` (UNIX seconds) is at least `limit` seconds old at
    /// `now`, or issued after `now` (the clock went back): either way, sign another.
    public static func needsReplacing(issuedAt: Int64, now: Int64, limit: Int64) -> Bool {
        if now < issuedAt { return true }
        let (age, overflow) = now.subtractingReportingOverflow(issuedAt)
        return overflow || age >= limit
    }
}
