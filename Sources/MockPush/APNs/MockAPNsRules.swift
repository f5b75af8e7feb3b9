/// Apple's rules for a request's device token, headers and provider token, as the mock checks them.
///
/// Written from Apple's documentation, not from pushq's code (see ``MockAPNsPushType`` for the
/// push types): "Sending notification requests to APNs" (developer.apple.com/documentation/
/// usernotifications/sending-notification-requests-to-apns), "Establishing a token-based
/// connection to APNs" (…/establishing-a-token-based-connection-to-apns) and "Handling
/// notification responses from APNs" (…/handling-notification-responses-from-apns).
public enum MockAPNsRules {
    /// Whether `token` can be a device token: a non-empty, even number of hexadecimal digits.
    ///
    /// Apple, "Sending notification requests to APNs", `:path`: `/3/device/<device_token>`, the
    /// device token written as hexadecimal bytes. Apple documents no length for device tokens (and
    /// asks apps not to assume one), so none is checked; whole bytes are. Anything else is 400
    /// `BadDeviceToken`.
    public static func isValidDeviceToken(_ token: some StringProtocol) -> Bool {
        let utf8 = token.utf8
        guard !utf8.isEmpty, utf8.count % 2 == 0 else { return false }
        return utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
        }
    }

    /// Whether `apns-expiration` is well formed: a UNIX epoch date in seconds, so digits only
    /// (`0`: deliver once, don't store). Apple, `apns-expiration`; else 400 `BadExpirationDate`.
    public static func isValidExpiration(_ value: some StringProtocol) -> Bool {
        !value.isEmpty && value.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// The longest `apns-collapse-id`, bytes. Apple, `apns-collapse-id`: "The value of this key
    /// must not exceed 64 bytes"; else 400 `BadCollapseId`.
    public static let maxCollapseIDBytes = 64

    /// Whether `apns-id` is a canonical UUID in lowercase: 32 lowercase hexadecimal digits in
    /// groups of 8-4-4-4-12 separated by hyphens. Apple, `apns-id`; else 400 `BadMessageId`.
    public static func isValidApnsID(_ s: some StringProtocol) -> Bool {
        let u = s.utf8
        guard u.count == 36 else { return false }
        for (i, c) in u.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                if c != UInt8(ascii: "-") { return false }
            } else if !((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66)) {
                return false
            }
        }
        return true
    }

    /// The JWT `alg` a provider token must name. Apple, "Establishing a token-based connection":
    /// the header holds `alg` ES256 and `kid`, the 10-character key identifier of the signing key;
    /// the claims `iss`, the 10-character team id, and `iat`, seconds since the epoch; the token is
    /// signed with the `.p8` key (P-256, SHA-256). Else 403 `InvalidProviderToken`.
    public static let providerTokenAlgorithm = "ES256"

    /// The oldest provider token APNs accepts, seconds: "APNs rejects any request whose token
    /// contains a timestamp that is more than one hour old" (403 `ExpiredProviderToken`).
    public static let providerTokenMaxAgeSeconds: Int64 = 3600

    /// How soon a connection may move to another provider token, seconds: Apple asks to refresh
    /// the token no more than once every 20 minutes; sooner is 429 `TooManyProviderTokenUpdates`.
    public static let providerTokenMinimumSwitchSeconds: Int64 = 20 * 60
}
