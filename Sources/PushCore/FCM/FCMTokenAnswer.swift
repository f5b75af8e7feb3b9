/// What Google's token endpoint answered to an assertion: an access token, or a refusal
/// explained in words that say what to fix.
///
/// Pure: `PushTransport` hands it the HTTP status and body of the exchange.
public enum FCMTokenAnswer: Sendable, Hashable {
    /// 200 `{"access_token":"…","expires_in":3599,"token_type":"Bearer"}`.
    case granted(value: String, expiresIn: Int64)
    /// Anything else. The message never contains the assertion or a token.
    case refused(FCMTokenRefusal)

    /// Reads the answer to a token request.
    ///
    /// - Parameters:
    ///   - status: the HTTP status.
    ///   - body: the body (JSON, e.g. `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`).
    public static func parse(status: Int, body: [UInt8]) -> FCMTokenAnswer {
        let json = JSONValue.parse(body)
        if status == 200 {
            guard let json, let value = json["access_token"]?.stringValue, !value.isEmpty,
                  FCMAccessToken.isValidValue(value) else {
                return .refused(FCMTokenRefusal(status: status, error: nil, kind: .unreadable))
            }
            guard let type = json["token_type"]?.stringValue, type.lowercased() == "bearer" else {
                return .refused(FCMTokenRefusal(status: status, error: nil, kind: .unreadable))
            }
            guard let expiresIn = json["expires_in"]?.int64Value, expiresIn > 0 else {
                return .refused(FCMTokenRefusal(status: status, error: nil, kind: .unreadable))
            }
            return .granted(value: value, expiresIn: expiresIn)
        }
        let error = json?["error"]?.stringValue
        let description = json?["error_description"]?.stringValue ?? ""
        let kind: FCMTokenRefusal.Kind
        switch (status, error) {
        case (400, "invalid_grant"):
            if description.contains("Invalid JWT Signature") {
                kind = .keyRejected
            } else if description.contains("Token must be a short-lived token") || description.contains("iat") || description.contains("exp") {
                kind = .clock
            } else if description.contains("account not found") || description.contains("Invalid grant") {
                kind = .accountUnknown
            } else {
                kind = .keyRejected
            }
        case (400, "invalid_scope"):
            kind = .scope
        case (401, _), (400, "invalid_client"), (403, _):
            kind = .accountUnknown
        case (400, _):
            kind = .badRequest
        case (429, _), (500...599, _):
            kind = .unavailable
        default:
            kind = json == nil ? .unreadable : .badRequest
        }
        return .refused(FCMTokenRefusal(status: status, error: error, kind: kind))
    }
}

/// Why the token endpoint refused an assertion, and what to do about it.
public struct FCMTokenRefusal: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// `invalid_grant` "Invalid JWT Signature": the key is deleted, disabled or not this account's.
        case keyRejected
        /// `invalid_grant` about `iat`/`exp`: the machine's clock is off.
        case clock
        /// 401, `invalid_client`, or the account does not exist.
        case accountUnknown
        /// `invalid_scope`.
        case scope
        /// Another 400: pushq built a request Google does not accept.
        case badRequest
        /// 429 or 5xx: Google's token service is unavailable; try again later.
        case unavailable
        /// An answer that is not the documented JSON.
        case unreadable
    }

    /// The HTTP status.
    public var status: Int
    /// The OAuth `error` code (e.g. `invalid_grant`), nil if none.
    public var error: String?
    public var kind: Kind

    public init(status: Int, error: String?, kind: Kind) {
        self.status = status
        self.error = error
        self.kind = kind
    }

    /// Whether trying again later may work without anyone changing anything.
    public var isTransient: Bool { kind == .unavailable }

    /// One sentence saying what is wrong and what to fix.
    public var description: String {
        let code = "HTTP \(status)" + (error.map { " \($0)" } ?? "")
        switch kind {
        case .keyRejected:
            return "the service account key was rejected (\(code)): check that the key is not deleted or disabled in the Google Cloud console (IAM → Service accounts → Keys) and that the JSON file is the one downloaded for it"
        case .clock:
            return "the token endpoint refused the assertion's times (\(code)): check that this machine's clock is synchronized (NTP)"
        case .accountUnknown:
            return "the service account was not recognised (\(code)): check that the account in client_email exists and is enabled in the Google Cloud console"
        case .scope:
            return "the token endpoint refused the firebase.messaging scope (\(code)): check that the Firebase Cloud Messaging API is enabled for the project"
        case .badRequest:
            return "the token endpoint refused the request (\(code)): check token_uri in the service account file (normally https://oauth2.googleapis.com/token)"
        case .unavailable:
            return "the token endpoint is unavailable (\(code)); pushq tries again later"
        case .unreadable:
            return "the token endpoint's answer could not be read (\(code)): check token_uri in the service account file (normally https://oauth2.googleapis.com/token)"
        }
    }
}
