/// The Web Push protocol's rules, as the mock's push service checks them.
///
/// Written from the RFCs, not from pushq's code: RFC 8030 (Generic Event Delivery Using HTTP
/// Push: `TTL`, `Urgency`, `Topic`, 201 with `Location`, 404/410, 413), RFC 8188 and RFC 8291
/// (aes128gcm and its use for Web Push), RFC 8292 (VAPID), and where the RFCs leave a choice,
/// what the large push services answer (named at each rule).
public enum MockWebPushRules {
    /// The largest body accepted, octets. RFC 8030 §7.2: a push service MUST accept at least
    /// 4096 octets and answers 413 (Payload Too Large) to what it will not take; Mozilla's,
    /// Google's and Apple's services take 4096. RFC 8291 §4: 4096 leaves 3993 octets of
    /// plaintext after the 86-octet header, the delimiter and the 16-octet tag.
    public static let maxBodyBytes = 4096

    /// The only content coding (RFC 8291 §4: "exactly one value, which is aes128gcm").
    public static let contentEncoding = "aes128gcm"

    /// `Urgency` values (RFC 8030 §5.3).
    public static let urgencies: Set<String> = ["very-low", "low", "normal", "high"]

    /// The longest a VAPID JWT may live ahead of the request, seconds (RFC 8292 §2: `exp` MUST
    /// NOT be more than 24 hours from the time of the request; Apple: "more than one day into
    /// the future" is `BadJwtToken`).
    public static let maxJWTLifetimeSeconds: Int64 = 86_400

    /// The VAPID JWT's algorithm (RFC 8292 §2: ES256).
    public static let jwtAlgorithm = "ES256"

    /// Whether `ttl` is a `TTL` value: delta-seconds, 1*DIGIT (RFC 8030 §5.2; a request without
    /// one is answered 400 there).
    public static func isValidTTL(_ ttl: String) -> Bool {
        !ttl.isEmpty && ttl.utf8.count <= 10 && ttl.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// Whether `topic` is a `Topic` value: 1 to 32 characters of the URL- and filename-safe
    /// base64 alphabet, `A-Z a-z 0-9 - _` (RFC 8030 §5.4).
    public static func isValidTopic(_ topic: String) -> Bool {
        let bytes = topic.utf8
        return !bytes.isEmpty && bytes.count <= 32 && bytes.allSatisfy(isBase64URL)
    }

    static func isBase64URL(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == UInt8(ascii: "-") || c == UInt8(ascii: "_")
    }

    /// What is wrong with a VAPID `sub` claim, nil when it is fine. RFC 8292 §2.1: a `mailto:`
    /// or `https:` URI to contact the sender. Apple's push service is stricter than the RFC and
    /// answers 403 `BadJwtToken` when "the JWT subject claim isn't a URL or mailto:" (Apple,
    /// "Sending web push notifications in web apps and browsers"), also for addresses it cannot
    /// reach (`mailto:admin@localhost`, reported by senders) and for `mailto: <a@b.c>` with a
    /// space or angle brackets (Apple Developer Forums 725473). The mock refuses the same: no
    /// whitespace or `<>`, a `mailto:` with one `@` and a dotted domain, an `https:` URL with a
    /// dotted host, neither `localhost` nor under `.local` / `.localhost`.
    public static func subjectProblem(_ sub: String?) -> String? {
        guard let sub, !sub.isEmpty else { return "the JWT has no sub claim (a mailto: or https: URI)" }
        if sub.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0 == "<" || $0 == ">" }) {
            return "sub \"\(sub)\" contains whitespace or angle brackets"
        }
        let host: Substring
        if sub.hasPrefix("mailto:") {
            let address = sub.dropFirst("mailto:".count)
            let parts = address.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                return "sub \"\(sub)\" is not mailto:local@domain"
            }
            host = parts[1]
        } else if sub.hasPrefix("https://") {
            let rest = sub.dropFirst("https://".count)
            let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            let hostPort = authority.split(separator: "@").last ?? ""
            host = hostPort.hasPrefix("[") ? hostPort : (hostPort.split(separator: ":").first ?? "")
        } else {
            return "sub \"\(sub)\" is neither a mailto: nor an https: URI"
        }
        let lower = host.lowercased()
        if lower == "localhost" || lower.hasSuffix(".localhost") || lower.hasSuffix(".local") || !lower.contains(".") {
            return "sub \"\(sub)\" names a host no one can reach (\(lower))"
        }
        return nil
    }
}
