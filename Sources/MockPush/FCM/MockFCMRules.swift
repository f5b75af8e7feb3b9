/// Google's rules for FCM HTTP v1 sends and service-account token exchanges, as the mock checks them.
///
/// Written from Google's documentation, not from pushq's code: "REST Resource: projects.messages"
/// (firebase.google.com/docs/reference/fcm/rest/v1/projects.messages: the `Message` fields),
/// "Set the message type" (firebase.google.com/docs/cloud-messaging/customize-messages/
/// set-message-type: the payload size), "ErrorCode" (…/fcm/rest/v1/ErrorCode) and "Using OAuth
/// 2.0 for Server to Server Applications" (developers.google.com/identity/protocols/oauth2/
/// service-account: the assertion).
public enum MockFCMRules {
    /// The largest message payload, bytes. Google, "Set the message type": the maximum payload for
    /// both message types (notification and data) is 4096 bytes. Measured here as the `message`
    /// object written compactly without its target (`token`, `topic` or `condition`): what the
    /// sender chose to deliver. Larger: 400 INVALID_ARGUMENT (ErrorCode: "message too big").
    public static let maxPayloadBytes = 4096

    /// The `Message` fields a send may set (projects.messages, "Resource: Message"), in proto
    /// and JSON (lowerCamelCase) spelling: `name` is output only but accepted, `data` a map of
    /// strings, the others objects, and the target a string. Any other: 400 INVALID_ARGUMENT
    /// `Unknown name "…" at 'message': Cannot find field.`
    public static let messageObjectFields: Set<String> = ["notification", "android", "webpush", "apns", "fcm_options", "fcmOptions"]
    /// The target fields: exactly one must be set ("Union field target").
    public static let targetFields = ["token", "topic", "condition"]

    /// Keys `data` may not use (projects.messages, `data`: "The key should not be a reserved word
    /// ("from", "message_type", or any word starting with "google." or "gcm.notification.")").
    public static func isReservedDataKey(_ key: String) -> Bool {
        key == "from" || key == "message_type" || key.hasPrefix("google.") || key.hasPrefix("gcm.notification.")
    }

    /// Whether `token` can be a registration token. Google documents no format; the tokens
    /// FCM's client SDKs hand out are an instance id, `:`, and a base64url registration
    /// (`APA91b…`), so: 1 to 4096 characters of A-Z, a-z, 0-9, `-`, `_` and `:` (4096: a bound
    /// on what a header-sized value can be, none is documented). Else 400 INVALID_ARGUMENT,
    /// "The registration token is not a valid FCM registration token".
    public static func isValidRegistrationToken(_ token: some StringProtocol) -> Bool {
        // One call per send: read the bytes in place when they are contiguous.
        if let valid = token.utf8.withContiguousStorageIfAvailable({ isValidRegistrationToken(bytes: $0) }) { return valid }
        return isValidRegistrationToken(bytes: Array(token.utf8))
    }

    private static func isValidRegistrationToken(bytes: some Collection<UInt8>) -> Bool {
        guard !bytes.isEmpty, bytes.count <= 4096 else { return false }
        return bytes.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
                || c == UInt8(ascii: "-") || c == UInt8(ascii: "_") || c == UInt8(ascii: ":")
        }
    }

    /// The OAuth scope an assertion must ask for to send (projects.messages.send, "Authorization
    /// scopes"); else 400 `invalid_scope`.
    public static let oauthScope = "https://www.googleapis.com/auth/firebase.messaging"

    /// The longest an assertion may live, `exp - iat`, seconds. Google, "Using OAuth 2.0 for
    /// Server to Server Applications": `exp` is at most 1 hour after `iat`; else 400 `invalid_grant`.
    public static let maxAssertionLifetimeSeconds: Int64 = 3600

    /// The assertion's `alg` (the same page: "Service accounts rely on the RSA SHA-256 algorithm").
    public static let assertionAlgorithm = "RS256"
}
