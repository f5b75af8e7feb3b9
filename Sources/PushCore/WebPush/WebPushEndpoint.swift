/// A Web Push subscription's endpoint (`PushSubscription.endpoint`), checked for form:
/// `https://host[:port]/path`, without userinfo, fragment or any other scheme.
///
/// The endpoint is untrusted input (issue 47). ``parse(_:)`` accepts only what a push service
/// gives out and refuses every form that parsers read differently (a backslash, a percent-encoded
/// or numeric-shorthand host such as `127.1` or `0x7f.1`, a zone id), so that the host checked
/// here is the host libcurl connects to. The text is kept exactly (``text``: the bytes stored in
/// `device_token` and sent); only the ``origin`` is normalised (lower-case host, port 443 left out).
/// A query is allowed (UnifiedPush distributors use `?up=1`).
public struct WebPushEndpoint: Sendable, Hashable {
    /// The endpoint exactly as given.
    public let text: String
    /// Its origin: `https://` host and port.
    public let origin: WebPushOrigin
    /// The path and query, from the first `/` after the authority.
    public let path: Substring

    /// The longest endpoint accepted, in bytes. Push services' endpoints are 100–500 bytes
    /// (FCM's, Mozilla's, Apple's); 2 048 leaves room for self-hosted distributors.
    public static let maximumLength = 2048

    /// Parses and checks `text`; the refusal says what is wrong without repeating the endpoint.
    public static func parse(_ text: String) -> Result<WebPushEndpoint, WebPushEndpointRefusal> {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return .failure(.init(.malformed, "the endpoint is empty")) }
        guard bytes.count <= maximumLength else {
            return .failure(.init(.malformed, "the endpoint is \(bytes.count) bytes long; at most \(maximumLength) are accepted"))
        }
        guard bytes.allSatisfy({ $0 >= 0x21 && $0 <= 0x7e }) else {
            return .failure(.init(.malformed, "the endpoint holds a space, a control character or a non-ASCII byte"))
        }
        let scheme = Array("https://".utf8)
        guard bytes.count > scheme.count, bytes.prefix(scheme.count).map({ $0 | 0x20 }) == scheme.map({ $0 | 0x20 }) else {
            let colon = bytes.firstIndex(of: UInt8(ascii: ":"))
            let named = colon.map { String(decoding: bytes[..<$0].prefix(16), as: UTF8.self) }
            return .failure(.init(.scheme, "the endpoint's scheme is \(named.map { "'\($0)'" } ?? "missing"); only https is accepted"))
        }
        if bytes.contains(UInt8(ascii: "\\")) {
            return .failure(.init(.malformed, "the endpoint holds a backslash, which URL parsers read differently"))
        }
        if bytes.contains(UInt8(ascii: "#")) {
            return .failure(.init(.malformed, "the endpoint holds a fragment ('#'), which is never part of a push service's endpoint"))
        }
        let rest = bytes[scheme.count...]
        let authorityEnd = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard authorityEnd < rest.endIndex, rest[authorityEnd] == UInt8(ascii: "/") else {
            return .failure(.init(.malformed, "the endpoint has no path after its host (https://host[:port]/path)"))
        }
        switch WebPushOrigin.parse(authority: authority) {
        case .failure(let refusal):
            return .failure(refusal)
        case .success(let origin):
            let pathStart = text.utf8.index(text.utf8.startIndex, offsetBy: authorityEnd)
            return .success(WebPushEndpoint(text: text, origin: origin, path: text[pathStart...]))
        }
    }
}

/// Why an endpoint is refused: ``reason`` (`EndpointNotAllowed`) goes into `last_reason`, the
/// message into the log. Neither holds the endpoint (its path is the subscription's secret); the
/// message may name the origin.
public struct WebPushEndpointRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// Not `https://host[:port]/path` in the accepted bytes.
        case malformed
        /// A scheme other than https.
        case scheme
        /// `user[:password]@` before the host.
        case userinfo
        /// A host that is not a DNS name, a dotted-quad IPv4 address or a bracketed IPv6 address.
        case host
        /// A port that is not 1–65535.
        case port
        /// The host resolved to an address that is not public unicast (``WebPushAddressPolicy``).
        case address
        /// The host resolved to no address at all.
        case noAddress
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The `last_reason` of a row whose endpoint is refused.
    public static let reason = "EndpointNotAllowed"
    public var reason: String { Self.reason }

    public var description: String { message }
}

/// The host of an endpoint or an allowed origin.
public enum WebPushHost: Sendable, Hashable {
    /// A DNS name, lower-cased.
    case name(String)
    /// An IPv4 literal (4 bytes).
    case ipv4([UInt8])
    /// An IPv6 literal (16 bytes), written in brackets in the URL.
    case ipv6([UInt8])

    /// The address of an IP literal, nil for a name (which the worker resolves).
    public var literalAddress: [UInt8]? {
        switch self {
        case .name: return nil
        case .ipv4(let a), .ipv6(let a): return a
        }
    }
}

/// `https://host[:port]`: the `aud` of a VAPID token, the unit of the allowlist and of the
/// per-origin connection bound. Equal when host (by value: names lower-cased, literals by their
/// bytes) and port are equal; port 443 is the default and never written.
public struct WebPushOrigin: Sendable, Hashable, CustomStringConvertible {
    public let host: WebPushHost
    public let port: Int
    /// The host as written in the URL, lower-cased (an IPv6 literal with its brackets).
    public let hostText: String

    public static func == (a: WebPushOrigin, b: WebPushOrigin) -> Bool { a.host == b.host && a.port == b.port }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(host)
        hasher.combine(port)
    }

    /// `https://host`, or `https://host:port` for a port other than 443 (RFC 6454's serialisation).
    public var description: String { port == 443 ? "https://" + hostText : "https://\(hostText):\(port)" }

    /// Parses an origin as written in `PUSHQ_WEBPUSH_ALLOWED_ORIGINS`: exactly `https://host[:port]`,
    /// nothing after it (not even `/`).
    public static func parse(_ text: String) -> Result<WebPushOrigin, WebPushEndpointRefusal> {
        let bytes = Array(text.utf8)
        let scheme = Array("https://".utf8)
        guard bytes.count > scheme.count, bytes.prefix(scheme.count).map({ $0 | 0x20 }) == scheme.map({ $0 | 0x20 }) else {
            return .failure(.init(.scheme, "'\(text)' is not of the form https://host[:port]"))
        }
        guard bytes.allSatisfy({ $0 >= 0x21 && $0 <= 0x7e }),
              !bytes[scheme.count...].contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") || $0 == UInt8(ascii: "\\") }) else {
            return .failure(.init(.malformed, "'\(text)' is not of the form https://host[:port] (no path, query or spaces)"))
        }
        return parse(authority: bytes[scheme.count...])
    }

    /// Parses the authority of a URL: `host[:port]` or `[v6][:port]`, no userinfo.
    static func parse(authority: ArraySlice<UInt8>) -> Result<WebPushOrigin, WebPushEndpointRefusal> {
        if authority.contains(UInt8(ascii: "@")) {
            return .failure(.init(.userinfo, "the URL carries a user name or password before its host ('@'); none is accepted"))
        }
        if authority.contains(UInt8(ascii: "%")) {
            return .failure(.init(.host, "the host is percent-encoded or carries a zone id ('%'); write it plainly"))
        }
        let hostPart: ArraySlice<UInt8>
        let portPart: ArraySlice<UInt8>?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else {
                return .failure(.init(.host, "the IPv6 host has no closing ']'"))
            }
            hostPart = authority[authority.startIndex...close]
            let after = authority[(close + 1)...]
            if after.isEmpty {
                portPart = nil
            } else if after.first == UInt8(ascii: ":") {
                portPart = after.dropFirst()
            } else {
                return .failure(.init(.host, "unexpected text after the IPv6 host's ']'"))
            }
        } else if let colon = authority.firstIndex(of: UInt8(ascii: ":")) {
            hostPart = authority[..<colon]
            portPart = authority[(colon + 1)...]
        } else {
            hostPart = authority
            portPart = nil
        }
        var port = 443
        if let portPart {
            guard !portPart.isEmpty, portPart.count <= 5, portPart.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let n = Int(String(decoding: portPart, as: UTF8.self)), (1...65535).contains(n) else {
                return .failure(.init(.port, "the port '\(String(decoding: portPart.prefix(8), as: UTF8.self))' is not a number from 1 to 65535"))
            }
            port = n
        }
        return WebPushHostParser.parse(hostPart).map { host, text in WebPushOrigin(host: host, port: port, hostText: text) }
    }
}

/// Host syntax: DNS names (letters, digits, hyphens; labels of 1–63, 253 in all, no trailing dot),
/// dotted-quad IPv4 and bracketed IPv6 literals; every numeric shorthand refused.
enum WebPushHostParser {
    static func parse(_ bytes: ArraySlice<UInt8>) -> Result<(WebPushHost, String), WebPushEndpointRefusal> {
        let text = String(decoding: bytes, as: UTF8.self).lowercased()
        if bytes.first == UInt8(ascii: "[") {
            guard bytes.count > 2, let address = parseIPv6(bytes.dropFirst().dropLast()) else {
                return .failure(.init(.host, "the host \(text.prefix(64)) is not an IPv6 address"))
            }
            return .success((.ipv6(address), text))
        }
        guard !bytes.isEmpty else { return .failure(.init(.host, "the URL has no host")) }
        guard bytes.count <= 253 else { return .failure(.init(.host, "the host is longer than 253 characters")) }
        let labels = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        let last = labels.last!
        // A last label that is a number makes the whole host an IPv4 address to URL parsers and
        // to inet_aton ("127.1", "0x7f.0.0.1", "2130706433"): only the dotted quad is accepted.
        let isHex = last.count >= 2 && last.first == UInt8(ascii: "0") && (last.dropFirst().first.map { $0 | 0x20 } == UInt8(ascii: "x"))
        if isHex || (!last.isEmpty && last.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })) {
            guard let address = parseIPv4(bytes) else {
                return .failure(.init(.host, "the host \(text.prefix(64)) is a numeric address in a form other than a dotted quad (a.b.c.d)"))
            }
            return .success((.ipv4(address), text))
        }
        for label in labels {
            guard !label.isEmpty else {
                return .failure(.init(.host, "the host \(text.prefix(64)) has an empty label (two dots, or a dot at either end)"))
            }
            guard label.count <= 63, label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-"),
                  label.allSatisfy({ isLetterOrDigit($0) || $0 == UInt8(ascii: "-") }) else {
                return .failure(.init(.host, "the host \(text.prefix(64)) is not a DNS name (letters, digits and inner hyphens, labels of 1-63)"))
            }
        }
        return .success((.name(text), text))
    }

    static func isLetterOrDigit(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x7a)
    }

    /// `a.b.c.d`, each 0–255 in decimal without leading zeros; nil otherwise.
    static func parseIPv4(_ bytes: some Collection<UInt8>) -> [UInt8]? {
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  part.count == 1 || part.first != UInt8(ascii: "0") else { return nil }
            let n = part.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            guard n <= 255 else { return nil }
            out.append(UInt8(n))
        }
        return out
    }

    /// RFC 4291 §2.2 text (`::` at most once, a dotted quad as the last 32 bits allowed), no zone
    /// id; nil otherwise.
    static func parseIPv6(_ bytes: some Collection<UInt8>) -> [UInt8]? {
        let text = Array(bytes)
        guard !text.isEmpty, text.count <= 45 else { return nil }
        let colon = UInt8(ascii: ":")
        var gap: Int?
        var k = 0
        while k + 1 < text.count {
            if text[k] == colon && text[k + 1] == colon {
                guard gap == nil else { return nil }
                gap = k
                k += 2
            } else {
                k += 1
            }
        }
        guard let gap else {
            guard let all = groups(text[...], dottedQuadAtEnd: true), all.count == 16 else { return nil }
            return all
        }
        guard let head = groups(text[..<gap], dottedQuadAtEnd: false),
              let tail = groups(text[(gap + 2)...], dottedQuadAtEnd: true),
              head.count + tail.count <= 14 else { return nil }
        return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
    }

    /// The bytes of `side`'s colon-separated groups (none when it is empty), nil if one is malformed.
    private static func groups(_ side: ArraySlice<UInt8>, dottedQuadAtEnd: Bool) -> [UInt8]? {
        if side.isEmpty { return [] }
        let parts = side.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        var out: [UInt8] = []
        for (i, g) in parts.enumerated() {
            if dottedQuadAtEnd, i == parts.count - 1, g.contains(UInt8(ascii: ".")) {
                guard let v4 = parseIPv4(g) else { return nil }
                out += v4
            } else {
                guard (1...4).contains(g.count), g.allSatisfy({ isHexDigit($0) }) else { return nil }
                let n = g.reduce(0) { $0 * 16 + hexValue($1) }
                out += [UInt8(n >> 8), UInt8(n & 0xff)]
            }
        }
        return out
    }

    static func isHexDigit(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x66)
    }

    static func hexValue(_ c: UInt8) -> Int {
        c <= 0x39 ? Int(c - 0x30) : Int((c | 0x20) - 0x61 + 10)
    }
}
