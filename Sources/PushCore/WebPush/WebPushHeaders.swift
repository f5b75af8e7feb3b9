/// The headers of one Web Push request, from its row's columns (issue 47's contract), and the
/// checks a row must pass before anything is encrypted: pure, table-tested.
///
/// - `TTL` (RFC 8030 §5.2): the whole seconds left until `expires_at` when the request goes out
///   (rounded down, never negative); ``defaultTTL`` (28 days) when `expires_at` is NULL.
/// - `Urgency` (§5.3): `priority` 10 → `high`, 5 → `normal`, 1 → `low`; NULL sends none.
/// - `Topic` (§5.4): `collapse_id` verbatim, 1–32 characters of the base64url alphabet
///   (`A-Z a-z 0-9 - _`), refused otherwise.
/// - The payload: at most ``maximumPayloadBytes``, refused (never truncated) beyond.
public struct WebPushHeaders: Sendable, Hashable {
    public var ttl: Int64
    public var urgency: WebPushUrgency?
    public var topic: String?

    public init(ttl: Int64, urgency: WebPushUrgency? = nil, topic: String? = nil) {
        self.ttl = ttl
        self.urgency = urgency
        self.topic = topic
    }

    /// `TTL` when the row has no `expires_at`: 2 419 200 seconds (28 days, as FCM's maximum).
    public static let defaultTTL: Int64 = 2_419_200

    /// The largest payload one aes128gcm record of 4 096 bytes carries (RFC 8291 §4): 4 096 less
    /// the 86-byte header, the 16-byte tag and the 1-byte padding delimiter.
    public static let maximumPayloadBytes = 3993

    /// The headers for a row.
    ///
    /// - Parameters:
    ///   - expiresAt: `expires_at` in UNIX milliseconds, nil for NULL.
    ///   - now: the time the request goes out, in UNIX milliseconds.
    ///   - priority: `priority` (10, 5, 1 — the table's check), nil for NULL.
    ///   - collapseID: `collapse_id`, nil for NULL.
    public static func make(expiresAt: Int64?, now: Int64, priority: Int?, collapseID: String?) -> Result<WebPushHeaders, PushRequest.Refusal> {
        let ttl = expiresAt.map { max(0, $0 - now) / 1000 } ?? defaultTTL
        var urgency: WebPushUrgency?
        if let priority {
            guard let u = WebPushUrgency(priority: priority) else {
                return .failure(PushRequest.Refusal(reason: "InvalidPriority", message: "priority \(priority) has no Web Push Urgency (10 high, 5 normal, 1 low)"))
            }
            urgency = u
        }
        if let collapseID, !isValidTopic(collapseID) {
            return .failure(PushRequest.Refusal(reason: "InvalidTopic",
                                                message: "collapse_id is \(collapseID.utf8.count) bytes; a Web Push Topic is 1-32 characters of A-Z a-z 0-9 - _ (RFC 8030 section 5.4)"))
        }
        return .success(WebPushHeaders(ttl: ttl, urgency: urgency, topic: collapseID))
    }

    /// Whether `topic` is 1–32 characters of `A-Z a-z 0-9 - _`.
    public static func isValidTopic(_ topic: String) -> Bool {
        let u = topic.utf8
        return (1...32).contains(u.count) && u.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c == 0x2d || c == 0x5f
        }
    }

    /// Nil when a payload of `byteCount` bytes fits one record, else the refusal that ends the
    /// row `failed` / `PayloadTooLarge` without a request.
    public static func payloadRefusal(byteCount: Int) -> PushRequest.Refusal? {
        guard byteCount > maximumPayloadBytes else { return nil }
        return PushRequest.Refusal(reason: WebPushReason.payloadTooLarge.rawValue,
                                   message: "the payload is \(byteCount) bytes; Web Push carries at most \(maximumPayloadBytes) (RFC 8291 section 4) and pushq never truncates it")
    }

    /// The header lines (name, value) in the order they are sent.
    public var fields: [(name: String, value: String)] {
        var out = [(name: "TTL", value: String(ttl))]
        if let urgency { out.append((name: "Urgency", value: urgency.rawValue)) }
        if let topic { out.append((name: "Topic", value: topic)) }
        return out
    }
}

/// RFC 8030 §5.3's `Urgency`, from a row's `priority`.
public enum WebPushUrgency: String, Sendable, Hashable {
    case high, normal, low

    /// 10 → high, 5 → normal, 1 → low; nil for any other priority.
    public init?(priority: Int) {
        switch priority {
        case 10: self = .high
        case 5: self = .normal
        case 1: self = .low
        default: return nil
        }
    }
}

/// A subscription's keys (`PushSubscription.toJSON().keys`): the user agent's P-256 public key
/// and its authentication secret, decoded and checked for length and form.
public struct WebPushKeys: Sendable, Hashable {
    /// `p256dh`: an uncompressed P-256 point, 65 bytes starting with 0x04.
    public let p256dh: [UInt8]
    /// `auth`: 16 bytes.
    public let auth: [UInt8]

    /// Decodes the base64url (padding allowed) `p256dh` and `auth`.
    ///
    /// - Throws: a refusal with reason `InvalidSubscriptionKeys` naming the key that is wrong
    ///   (never its value). Whether the point is on the curve is checked when it is used.
    public init(p256dh: String, auth: String) throws(PushRequest.Refusal) {
        guard let point = Base64URL.decode(p256dh), point.count == 65, point[0] == 0x04 else {
            throw PushRequest.Refusal(reason: "InvalidSubscriptionKeys", message: "keys.p256dh is not the base64url of a 65-byte uncompressed P-256 point")
        }
        guard let secret = Base64URL.decode(auth), secret.count == 16 else {
            throw PushRequest.Refusal(reason: "InvalidSubscriptionKeys", message: "keys.auth is not the base64url of 16 bytes")
        }
        self.p256dh = point
        self.auth = secret
    }

    /// Keys already decoded (65 and 16 bytes; checked as above).
    public init(p256dh: [UInt8], auth: [UInt8]) throws(PushRequest.Refusal) {
        guard p256dh.count == 65, p256dh[0] == 0x04 else {
            throw PushRequest.Refusal(reason: "InvalidSubscriptionKeys", message: "keys.p256dh is not a 65-byte uncompressed P-256 point")
        }
        guard auth.count == 16 else {
            throw PushRequest.Refusal(reason: "InvalidSubscriptionKeys", message: "keys.auth is not 16 bytes")
        }
        self.p256dh = p256dh
        self.auth = auth
    }
}
