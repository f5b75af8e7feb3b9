/// The proxies whose `X-Forwarded-For` `pushq serve` believes (`PUSHQ_HTTP_TRUSTED_PROXIES`), and
/// the client address they give.
///
/// Each proxy appends the address it received the request from to `X-Forwarded-For`; anything
/// to the left of what a trusted proxy appended was written by someone not trusted, the client
/// included. So the client is found from the right: the hops are the header's entries then the
/// TCP peer, and the client is the first hop, from the right, that is not a trusted proxy (the
/// leftmost hop when all are trusted). With no proxy trusted the TCP peer is the client, whatever
/// the header says. Pure; table-tested in `ServePolicyTests`.
public struct TrustedProxies: Sendable, Equatable {
    /// The networks trusted, as given.
    public var networks: [IPNetwork]

    /// No proxy trusted: the peer is the client.
    public static let none = TrustedProxies(networks: [])

    public init(networks: [IPNetwork]) { self.networks = networks }

    /// A comma-separated list of networks, IPv4 or IPv6, each `address/prefix` or a bare address
    /// (one host), e.g. `10.0.0.0/8, 192.168.1.7, fd00::/8`. Spaces around entries and empty
    /// entries are ignored.
    ///
    /// - Throws: ``IPNetwork/ParseError`` naming the first entry that is not a network.
    public init(parsing text: String) throws(IPNetwork.ParseError) {
        var networks: [IPNetwork] = []
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = IPAddress.trimmed(entry)
            if trimmed.isEmpty { continue }
            networks.append(try IPNetwork(parsing: trimmed))
        }
        self.networks = networks
    }

    /// Whether `address` (text) is in a trusted network; false for text that is not an address.
    public func trusts(_ address: Substring) -> Bool {
        guard !networks.isEmpty, let ip = IPAddress(hop: address) else { return false }
        return networks.contains { $0.contains(ip) }
    }

    /// The client's address for a request from `peer` carrying these `X-Forwarded-For` values
    /// (every field line, in order; each a comma-separated list).
    ///
    /// An entry's port (`203.0.113.9:4711`, `[2001:db8::1]:443`) is dropped; an entry that is not
    /// an address (`unknown`) is never trusted, so it is the client only when a trusted proxy
    /// put it there, and it is then returned cut to 64 characters.
    public func client(forwardedFor values: [String], peer: String) -> String {
        guard trusts(Substring(peer)) else { return peer }
        var hops: [Substring] = []
        for value in values {
            for entry in value.split(separator: ",", omittingEmptySubsequences: false) {
                let trimmed = IPAddress.trimmed(entry)
                if !trimmed.isEmpty { hops.append(trimmed) }
            }
        }
        guard var index = hops.indices.last else { return peer }
        while index > hops.startIndex, trusts(hops[index]) { index -= 1 }
        let hop = IPAddress.withoutPort(hops[index])
        return String(hop.prefix(64))
    }
}

/// A network: an address and the number of leading bits that name it.
public struct IPNetwork: Sendable, Equatable, CustomStringConvertible {
    public var address: IPAddress
    /// 0–32 for IPv4, 0–128 for IPv6.
    public var prefix: Int

    /// An entry of ``TrustedProxies`` it cannot read, with the entry and why.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public var entry: String
        public var problem: String
        public var description: String { "\"\(entry)\": \(problem)" }
    }

    /// `address/prefix` or a bare address (every bit: one host). Bits past the prefix are ignored.
    public init(parsing text: Substring) throws(ParseError) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else {
            throw ParseError(entry: String(text), problem: "not an IPv4 or IPv6 address (a network is written 10.0.0.0/8 or fd00::/8)")
        }
        let bits = address.isIPv4 ? 32 : 128
        var prefix = bits
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].count <= 3, parts[1].allSatisfy({ $0.isASCII && $0.isNumber }),
                  let n = Int(parts[1]), (0...bits).contains(n) else {
                throw ParseError(entry: String(text), problem: "the prefix length must be a whole number from 0 to \(bits)")
            }
            prefix = n
        }
        self.address = address
        self.prefix = prefix
    }

    /// Whether `ip` is in this network (an IPv4 address is never in an IPv6 network, nor the reverse;
    /// IPv4-mapped IPv6 addresses count as IPv4).
    public func contains(_ ip: IPAddress) -> Bool {
        guard ip.isIPv4 == address.isIPv4 else { return false }
        let offset = address.isIPv4 ? 96 : 0
        var remaining = prefix
        var i = offset / 8
        while remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xff : ~(0xff >> UInt8(remaining))
            if ip.bytes[i] & mask != address.bytes[i] & mask { return false }
            remaining -= 8
            i += 1
        }
        return true
    }

    public var description: String { "\(address)/\(prefix)" }
}

/// An IPv4 or IPv6 address as 16 bytes (IPv4 as IPv4-mapped IPv6, `::ffff:a.b.c.d`).
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    public var bytes: [UInt8]
    /// Written as IPv4, or IPv4-mapped IPv6.
    public var isIPv4: Bool { bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff }

    /// Dotted IPv4 (four decimal numbers 0–255, no leading zero) or IPv6 (RFC 4291's text forms,
    /// `::` and a trailing dotted IPv4 included; no zone).
    public init?(_ text: Substring) {
        if let v4 = Self.ipv4(text) {
            bytes = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff] + v4
        } else if let v6 = Self.ipv6(text) {
            bytes = v6
        } else {
            return nil
        }
    }

    /// An address as a hop of `X-Forwarded-For` or the peer gives it: with a port or brackets
    /// possibly.
    init?(hop: Substring) { self.init(Self.withoutPort(hop)) }

    public var description: String {
        if isIPv4 { return bytes[12...].map(String.init).joined(separator: ".") }
        return stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }.joined(separator: ":")
    }

    /// `text` without spaces or tabs around it.
    static func trimmed(_ text: Substring) -> Substring {
        var t = text
        while let c = t.first, c == " " || c == "\t" { t.removeFirst() }
        while let c = t.last, c == " " || c == "\t" { t.removeLast() }
        return t
    }

    /// `[v6]:port` → `v6`, `[v6]` → `v6`, `v4:port` → `v4`; anything else as it is.
    static func withoutPort(_ text: Substring) -> Substring {
        if text.first == "[", let close = text.firstIndex(of: "]") {
            return text[text.index(after: text.startIndex)..<close]
        }
        if let colon = text.firstIndex(of: ":"), text[text.index(after: colon)...].firstIndex(of: ":") == nil {
            return text[..<colon]
        }
        return text
    }

    static func ipv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }),
                  part.count == 1 || part.first != "0", let n = UInt8(part) else { return nil }
            out.append(n)
        }
        return out
    }

    static func ipv6(_ text: Substring) -> [UInt8]? {
        guard text.contains(":"), text.count <= 45 else { return nil }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: Substring, last: Bool) -> [UInt8]? {
            if part.isEmpty { return [] }
            var out: [UInt8] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (i, piece) in pieces.enumerated() {
                if last, i == pieces.count - 1, piece.contains(".") {
                    guard let v4 = ipv4(piece) else { return nil }
                    out += v4
                } else {
                    guard (1...4).contains(piece.count), piece.allSatisfy(\.isHexDigit), let n = UInt16(piece, radix: 16) else { return nil }
                    out += [UInt8(n >> 8), UInt8(n & 0xff)]
                }
            }
            return out
        }
        if halves.count == 1 {
            guard let all = groups(text, last: true), all.count == 16 else { return nil }
            return all
        }
        guard let head = groups(halves[0], last: false), let tail = groups(halves[1], last: true),
              head.count + tail.count <= 14 else { return nil }
        return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
    }
}

extension Substring {
    /// The pieces between occurrences of `separator` (no Foundation in this module).
    fileprivate func components(separatedBy separator: String) -> [Substring] {
        var pieces: [Substring] = []
        var rest = self[...]
        while let range = rest.firstRange(of: separator) {
            pieces.append(rest[..<range.lowerBound])
            rest = rest[range.upperBound...]
        }
        pieces.append(rest)
        return pieces
    }
}
