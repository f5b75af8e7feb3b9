/// The unsigned part of the JWT a service account signs (RS256) to get an OAuth 2.0 access
/// token for FCM ("OAuth 2.0 for server to server applications").
///
/// Header `{"alg":"RS256","typ":"JWT","kid":"<private_key_id>"}`, claims
/// `{"iss":"<client_email>","scope":"https://www.googleapis.com/auth/firebase.messaging","aud":"<token_uri>","iat":<s>,"exp":<s>}`,
/// each base64url-encoded without padding and joined by a dot. `PushTransport` signs
/// ``signingInput`` with the account's RSA key and POSTs the assertion to `token_uri`.
public struct FCMOAuthClaims: Sendable, Hashable {
    /// The only scope pushq asks for.
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// Google's ceiling for `exp - iat`, and the lifetime pushq asks for: one hour.
    public static let maxLifetimeSeconds: Int64 = 3600

    /// The service account's `private_key_id` (`kid`).
    public var keyID: String
    /// The service account's `client_email` (`iss`).
    public var clientEmail: String
    /// The service account's `token_uri` (`aud`).
    public var audience: String
    /// When the assertion was made, UNIX seconds (`iat`).
    public var issuedAt: Int64
    /// When it stops being accepted, UNIX seconds (`exp`); at most ``maxLifetimeSeconds`` after `issuedAt`.
    public var expiresAt: Int64

    /// - Parameters:
    ///   - lifetime: seconds from `issuedAt` to `exp`, clamped to 1...3600. Defaults to 3600.
    public init(keyID: String, clientEmail: String, audience: String, issuedAt: Int64, lifetime: Int64 = maxLifetimeSeconds) {
        self.keyID = keyID
        self.clientEmail = clientEmail
        self.audience = audience
        self.issuedAt = issuedAt
        self.expiresAt = issuedAt + min(max(lifetime, 1), Self.maxLifetimeSeconds)
    }

    /// The JOSE header JSON.
    public var headerJSON: String {
        #"{"alg":"RS256","typ":"JWT","kid":"# + JSONValue.quoted(keyID) + "}"
    }

    /// The claims JSON.
    public var claimsJSON: String {
        #"{"iss":"# + JSONValue.quoted(clientEmail) + #","scope":"# + JSONValue.quoted(Self.scope)
            + #","aud":"# + JSONValue.quoted(audience) + #","iat":"# + String(issuedAt)
            + #","exp":"# + String(expiresAt) + "}"
    }

    /// `base64url(header) + "." + base64url(claims)`: the bytes RS256 signs.
    public var signingInput: String {
        Base64URL.encode(Array(headerJSON.utf8)) + "." + Base64URL.encode(Array(claimsJSON.utf8))
    }

    /// The complete assertion: signing input, a dot, and the base64url signature. Secret: never log it.
    public func assertion(signature: [UInt8]) -> String {
        signingInput + "." + Base64URL.encode(signature)
    }

    /// The form body POSTed to `token_uri`. The assertion's characters (base64url and dots)
    /// need no percent-encoding. Secret: never log it.
    public static func tokenRequestBody(assertion: String) -> String {
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion
    }
}
