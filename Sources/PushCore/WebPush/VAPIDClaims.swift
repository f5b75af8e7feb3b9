/// The unsigned part of a VAPID token (RFC 8292 §2): an ES256 JWT whose `aud` is the push
/// service's origin, `exp` at most 24 hours ahead, `sub` the sender's contact.
///
/// Header `{"typ":"JWT","alg":"ES256"}`, claims `{"aud":"…","exp":…,"sub":"…"}`, each base64url
/// without padding, joined by a dot; `PushTransport`'s VAPID key signs ``signingInput``, as its
/// provider-token signer does for ``ProviderTokenClaims``.
public struct VAPIDClaims: Sendable, Hashable {
    /// The push service's origin (the endpoint's), e.g. `https://fcm.googleapis.com`.
    public var audience: WebPushOrigin
    /// When the token expires, in UNIX seconds.
    public var expiresAt: Int64
    /// The checked subject (``VAPIDSubject``).
    public var subject: VAPIDSubject

    /// How long a token is valid: 12 hours (push services refuse more than 24, Apple among them).
    public static let lifetime: Int64 = 12 * 3600
    /// The longest `exp` ahead push services accept: 24 hours.
    public static let maximumLifetime: Int64 = 24 * 3600
    /// How long before its `exp` a token is replaced: 1 hour, so that a push service whose clock
    /// runs up to an hour ahead of this host's still accepts it.
    public static let renewalMargin: Int64 = 3600

    /// Claims for a token issued at `issuedAt` (UNIX seconds): `exp` = `issuedAt` + `lifetime`,
    /// which is clamped to 1 second…24 hours.
    public init(audience: WebPushOrigin, subject: VAPIDSubject, issuedAt: Int64, lifetime: Int64 = VAPIDClaims.lifetime) {
        self.audience = audience
        self.subject = subject
        self.expiresAt = issuedAt + min(max(lifetime, 1), Self.maximumLifetime)
    }

    /// `{"typ":"JWT","alg":"ES256"}`.
    public static let headerJSON = #"{"typ":"JWT","alg":"ES256"}"#

    /// The claims JSON. The origin and the subject hold no character JSON must escape (both are
    /// checked printable ASCII without `"` or `\`).
    public var claimsJSON: String {
        #"{"aud":""# + audience.description + #"","exp":"# + String(expiresAt) + #","sub":""# + subject.text + #""}"#
    }

    /// `base64url(header) + "." + base64url(claims)`: the bytes ES256 signs.
    public var signingInput: String {
        Base64URL.encode(Array(Self.headerJSON.utf8)) + "." + Base64URL.encode(Array(claimsJSON.utf8))
    }

    /// The complete token: signing input, a dot, and the base64url of the raw 64-byte r‖s signature.
    public func token(rawSignature: [UInt8]) -> String {
        signingInput + "." + Base64URL.encode(rawSignature)
    }

    /// Whether a token for an origin, issued at `issuedAt` with `exp` `expiresAt`, must be replaced
    /// at `now` (UNIX seconds): from ``renewalMargin`` before its `exp` on, or when the clock went
    /// back past its issue (its `iat` would lie in the future). One token per origin is reused
    /// until then.
    public static func needsReplacing(issuedAt: Int64, expiresAt: Int64, now: Int64, margin: Int64 = renewalMargin) -> Bool {
        now < issuedAt || now >= expiresAt - margin
    }
}

/// A VAPID subject (`PUSHQ_WEBPUSH_VAPID_SUBJECT`): a `mailto:` or `https:` URI naming a public
/// domain, by which a push service's operator can reach the sender.
///
/// Apple's push service answers 403 `BadJwtToken` to subjects it cannot take: `localhost`,
/// `.local`, `.localhost`, `.invalid` and `.test` domains (RFC 6761's special-use names), a name
/// without a dot, or an IP address. pushq refuses them at start instead of holding every Safari
/// subscription's rows later.
public struct VAPIDSubject: Sendable, Hashable, CustomStringConvertible {
    /// The subject as configured.
    public let text: String

    public var description: String { text }

    /// Checks `text`.
    ///
    /// - Throws: ``VAPIDSubjectError`` saying what is wrong and the expected form.
    public init(_ text: String) throws(VAPIDSubjectError) {
        let u = Array(text.utf8)
        guard !u.isEmpty else { throw VAPIDSubjectError("PUSHQ_WEBPUSH_VAPID_SUBJECT is empty; set a mailto: or https: URI, e.g. mailto:push@example.com") }
        guard u.count <= 256, u.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) else {
            throw VAPIDSubjectError("PUSHQ_WEBPUSH_VAPID_SUBJECT holds a space, a quote, a backslash, a control or non-ASCII character, or is longer than 256 bytes")
        }
        let host: Substring
        let lower = text.lowercased()
        if lower.hasPrefix("mailto:") {
            let address = lower.dropFirst("mailto:".count)
            guard let at = address.lastIndex(of: "@"), at != address.startIndex else {
                throw VAPIDSubjectError("PUSHQ_WEBPUSH_VAPID_SUBJECT '\(text)' is not mailto:user@domain")
            }
            host = address[address.index(after: at)...].prefix { $0 != "?" }
        } else if lower.hasPrefix("https://") {
            let rest = lower.dropFirst("https://".count)
            let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            guard !authority.contains("@") else {
                throw VAPIDSubjectError("PUSHQ_WEBPUSH_VAPID_SUBJECT '\(text)' carries a user name; use https://domain[/path]")
            }
            host = authority.prefix { $0 != ":" }
        } else {
            throw VAPIDSubjectError("PUSHQ_WEBPUSH_VAPID_SUBJECT '\(text)' is neither a mailto: nor an https: URI (RFC 8292 section 2.1)")
        }
        if let problem = Self.hostProblem(host) {
            throw VAPIDSubjectError("PUSHQ_WEBPUSH_VAPID_SUBJECT '\(text)': \(problem); Apple's push service answers 403 BadJwtToken to such a subject, so use a contact on a public domain, e.g. mailto:push@example.com")
        }
        self.text = text
    }

    static func hostProblem(_ host: Substring) -> String? {
        let name = host.hasSuffix(".") ? host.dropLast() : host
        if name.isEmpty { return "it names no domain" }
        if name.hasPrefix("[") || WebPushHostParser.parseIPv4(name.utf8) != nil { return "it names an IP address, not a domain" }
        if name == "localhost" { return "localhost is not a public domain" }
        for suffix in [".localhost", ".local", ".invalid", ".test"] where name.hasSuffix(suffix) {
            return "\(suffix) is a special-use domain (RFC 6761), not a public one"
        }
        if !name.contains(".") { return "'\(name)' is a name without a dot, not a public domain" }
        return nil
    }
}

/// A VAPID subject that cannot be used; the message says why and what to write instead.
public struct VAPIDSubjectError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
