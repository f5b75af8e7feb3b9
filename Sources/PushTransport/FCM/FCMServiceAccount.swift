import PushCore

/// A Google service account, loaded from the JSON key file the Google Cloud console
/// (or Firebase's "Generate new private key") downloads.
///
/// Reads `type` (must be `service_account`), `project_id`, `private_key_id`, `private_key`
/// (PEM, RSA), `client_email` and `token_uri`; other fields are ignored. `description`
/// names the account, never the key.
public struct FCMServiceAccount: Sendable, CustomStringConvertible {
    /// The file it was read from (for messages).
    public let file: String
    /// `project_id`: the Firebase project messages are sent through.
    public let projectID: String
    /// `private_key_id`: the assertion's `kid`.
    public let privateKeyID: String
    /// `client_email`: the assertion's `iss`.
    public let clientEmail: String
    /// `token_uri`: where assertions are exchanged for access tokens (the assertion's `aud`).
    public let tokenURI: String
    /// `private_key`.
    public let key: RS256PrivateKey

    public var description: String {
        "service account \(clientEmail) of project \(projectID) (key \(privateKeyID), from \(file))"
    }

    /// Reads and checks a service-account JSON file.
    ///
    /// - Throws: ``FCMTransportError`` `.invalidServiceAccount` naming the file and the missing
    ///   or bad field (never its value when it is the key).
    public init(file path: String) throws(FCMTransportError) {
        let bytes: [UInt8]
        do {
            bytes = try readWholeFile(path)
        } catch {
            throw FCMTransportError(.invalidServiceAccount, "cannot read the FCM service account file \(error)")
        }
        try self.init(json: bytes, file: path)
    }

    /// Parses the contents of a service-account JSON file; `file` names it in errors.
    ///
    /// - Throws: ``FCMTransportError`` `.invalidServiceAccount`.
    public init(json bytes: [UInt8], file path: String) throws(FCMTransportError) {
        func bad(_ what: String) -> FCMTransportError {
            FCMTransportError(.invalidServiceAccount, "the FCM service account file \(path) \(what)")
        }
        guard let json = JSONValue.parse(bytes) else {
            throw bad("is not valid JSON: download the key file again from the Google Cloud console (IAM → Service accounts → Keys)")
        }
        guard json.objectValue != nil else { throw bad("is not a JSON object") }
        func field(_ name: String) throws(FCMTransportError) -> String {
            guard let value = json[name] else { throw bad("has no \"\(name)\" field: is it a service account key file?") }
            guard let text = value.stringValue, !text.isEmpty else { throw bad("has an empty or non-string \"\(name)\" field") }
            return text
        }
        let type = try field("type")
        guard type == "service_account" else {
            throw bad("has \"type\": \(JSONValue.quoted(type)), not \"service_account\": use a service account key, not an OAuth client or user credential")
        }
        let projectID = try field("project_id")
        guard projectID.utf8.count <= 128, projectID.utf8.allSatisfy({ c in
            (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c == UInt8(ascii: "-") || c == UInt8(ascii: ".") || c == UInt8(ascii: ":")
        }) else {
            throw bad("has a malformed \"project_id\" (expected lower-case letters, digits and hyphens)")
        }
        let keyID = try field("private_key_id")
        guard ProviderTokenClaims.isValidID(keyID) else {
            throw bad("has a malformed \"private_key_id\" (expected hex digits)")
        }
        let clientEmail = try field("client_email")
        guard clientEmail.contains("@"), clientEmail.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "\"") }) else {
            throw bad("has a malformed \"client_email\" (expected the service account's e-mail address)")
        }
        let tokenURI = try field("token_uri")
        guard tokenURI.hasPrefix("https://"), tokenURI.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "\"") }) else {
            throw bad("has \"token_uri\" \(JSONValue.quoted(tokenURI)), not an https:// URL (normally https://oauth2.googleapis.com/token)")
        }
        let pem = try field("private_key")
        let key: RS256PrivateKey
        do throws(RS256PrivateKey.KeyProblem) {
            key = try RS256PrivateKey(pem: Array(pem.utf8))
        } catch {
            throw bad("has a \"private_key\" that \(error.message)")
        }
        self.file = path
        self.projectID = projectID
        self.privateKeyID = keyID
        self.clientEmail = clientEmail
        self.tokenURI = tokenURI
        self.key = key
    }

    /// A signed assertion for the token endpoint, issued at `now` (UNIX seconds), valid an hour.
    /// Secret: never log it.
    ///
    /// - Throws: ``FCMTransportError`` `.signingFailed`.
    public func assertion(now: Int64) throws(FCMTransportError) -> String {
        let claims = FCMOAuthClaims(keyID: privateKeyID, clientEmail: clientEmail, audience: tokenURI, issuedAt: now)
        return claims.assertion(signature: try key.sign(Array(claims.signingInput.utf8)))
    }
}
