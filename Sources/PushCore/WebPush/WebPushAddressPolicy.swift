/// Which addresses a Web Push endpoint may be connected to: public unicast only.
///
/// Endpoints are untrusted input (a browser, i.e. anyone, supplies them), so the worker checks
/// every address the endpoint's host resolved to before it connects, and connects to the address
/// it checked (issue 47). This is the check, on the address bytes themselves (4 for IPv4, 16 for
/// IPv6; never text to resolve): nil means public unicast, anything else the range that refuses it.
///
/// Refused, IPv4 (the IANA special-purpose registry's ranges that are not globally reachable,
/// RFC 6890 and its updates): 0/8, 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12, 192.0.0/24,
/// 192.0.2/24, 192.88.99/24, 192.168/16, 198.18/15, 198.51.100/24, 203.0.113/24, 224/4
/// (multicast), 255.255.255.255 (broadcast) and the rest of 240/4. No push service lives in the
/// documentation, benchmarking or protocol-assignment ranges, so refusing them costs nothing.
///
/// Refused, IPv6: everything outside global unicast 2000::/3 — `::`, `::1`, fc00::/7, fe80::/10,
/// ff00::/8, 100::/64, the deprecated IPv4-compatible ::/96 and site-local fec0::/10 — except
/// the cases below; and inside it 2001::/23 (IETF protocol assignments, Teredo among them, whose
/// addresses embed an IPv4 address in a form we do not unwrap), 2001:db8::/32 and 3fff::/20
/// (documentation), 5f00::/16 (SRv6) and 6to4 2002::/16 whose embedded IPv4 address is refused.
///
/// Unwrapped, IPv6 forms that reach an IPv4 address: IPv4-mapped ::ffff:0:0/96 (a dual-stack
/// socket connects to the IPv4 address itself) and the NAT64 well-known prefix 64:ff9b::/96
/// (RFC 6052: a NAT64 gateway translates it to the embedded IPv4 address). Both are judged by
/// the address they embed: allowed when it is public, refused when it is refused. NAT64 is
/// allowed at all because on an IPv6-only network with DNS64 every IPv4-only push service
/// resolves to 64:ff9b::/96; refusing the prefix outright would refuse them all, and letting it
/// through unchecked would let 64:ff9b::7f00:1 reach the gateway's loopback. The local-use NAT64
/// prefix 64:ff9b:1::/48 (RFC 8215) embeds at a length this check cannot know: refused (an
/// operator who needs it lists the origin in `PUSHQ_WEBPUSH_ALLOWED_ORIGINS`).
public enum WebPushAddressPolicy {
    /// Why an address is refused: the range it falls in.
    public struct Refusal: Sendable, Hashable, CustomStringConvertible {
        /// The range, e.g. `127.0.0.0/8` or `fe80::/10`.
        public var range: String
        /// What the range is, e.g. `loopback`.
        public var name: String

        public init(range: String, name: String) {
            self.range = range
            self.name = name
        }

        public var description: String { "\(range) (\(name))" }
    }

    /// Nil when `address` (4 or 16 bytes, network order) is public unicast; otherwise the range
    /// that refuses it. Any other length is refused as not an address.
    public static func refusal(_ address: [UInt8]) -> Refusal? {
        switch address.count {
        case 4: return refusalV4(address)
        case 16: return refusalV6(address)
        default: return Refusal(range: "\(address.count) bytes", name: "not an IPv4 or IPv6 address")
        }
    }

    /// One refused range: its prefix bits, their length, and how it is named.
    struct Range: Sendable {
        var prefix: [UInt8]
        var bits: Int
        var text: String
        var name: String

        func contains(_ address: [UInt8]) -> Bool {
            var remaining = bits
            var i = 0
            while remaining > 0 {
                let mask: UInt8 = remaining >= 8 ? 0xff : ~(0xff >> UInt8(remaining))
                if address[i] & mask != prefix[i] & mask { return false }
                remaining -= 8
                i += 1
            }
            return true
        }
    }

    static let v4Ranges: [Range] = [
        Range(prefix: [255, 255, 255, 255], bits: 32, text: "255.255.255.255/32", name: "limited broadcast"),
        Range(prefix: [0, 0, 0, 0], bits: 8, text: "0.0.0.0/8", name: "this network"),
        Range(prefix: [10, 0, 0, 0], bits: 8, text: "10.0.0.0/8", name: "private"),
        Range(prefix: [100, 64, 0, 0], bits: 10, text: "100.64.0.0/10", name: "shared address space (carrier-grade NAT)"),
        Range(prefix: [127, 0, 0, 0], bits: 8, text: "127.0.0.0/8", name: "loopback"),
        Range(prefix: [169, 254, 0, 0], bits: 16, text: "169.254.0.0/16", name: "link-local"),
        Range(prefix: [172, 16, 0, 0], bits: 12, text: "172.16.0.0/12", name: "private"),
        Range(prefix: [192, 0, 0, 0], bits: 24, text: "192.0.0.0/24", name: "IETF protocol assignments"),
        Range(prefix: [192, 0, 2, 0], bits: 24, text: "192.0.2.0/24", name: "documentation"),
        Range(prefix: [192, 88, 99, 0], bits: 24, text: "192.88.99.0/24", name: "6to4 relay anycast"),
        Range(prefix: [192, 168, 0, 0], bits: 16, text: "192.168.0.0/16", name: "private"),
        Range(prefix: [198, 18, 0, 0], bits: 15, text: "198.18.0.0/15", name: "benchmarking"),
        Range(prefix: [198, 51, 100, 0], bits: 24, text: "198.51.100.0/24", name: "documentation"),
        Range(prefix: [203, 0, 113, 0], bits: 24, text: "203.0.113.0/24", name: "documentation"),
        Range(prefix: [224, 0, 0, 0], bits: 4, text: "224.0.0.0/4", name: "multicast"),
        Range(prefix: [240, 0, 0, 0], bits: 4, text: "240.0.0.0/4", name: "reserved"),
    ]

    static func refusalV4(_ a: [UInt8]) -> Refusal? {
        v4Ranges.first { $0.contains(a) }.map { Refusal(range: $0.text, name: $0.name) }
    }

    private static func v6(_ head: [UInt8]) -> [UInt8] { head + [UInt8](repeating: 0, count: 16 - head.count) }

    static let v6Ranges: [Range] = [
        Range(prefix: v6([]), bits: 128, text: "::/128", name: "unspecified"),
        Range(prefix: v6([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]), bits: 128, text: "::1/128", name: "loopback"),
        Range(prefix: v6([]), bits: 96, text: "::/96", name: "IPv4-compatible (deprecated)"),
        Range(prefix: v6([0, 0x64, 0xff, 0x9b, 0, 1]), bits: 48, text: "64:ff9b:1::/48", name: "local-use NAT64"),
        Range(prefix: v6([1, 0]), bits: 64, text: "100::/64", name: "discard-only"),
        Range(prefix: v6([0x20, 0x01, 0x0d, 0xb8]), bits: 32, text: "2001:db8::/32", name: "documentation"),
        Range(prefix: v6([0x20, 0x01]), bits: 23, text: "2001::/23", name: "IETF protocol assignments (Teredo among them)"),
        Range(prefix: v6([0x3f, 0xff]), bits: 20, text: "3fff::/20", name: "documentation"),
        Range(prefix: v6([0x5f, 0x00]), bits: 16, text: "5f00::/16", name: "segment routing (SRv6)"),
        Range(prefix: v6([0xfc]), bits: 7, text: "fc00::/7", name: "unique local"),
        Range(prefix: v6([0xfe, 0x80]), bits: 10, text: "fe80::/10", name: "link-local"),
        Range(prefix: v6([0xfe, 0xc0]), bits: 10, text: "fec0::/10", name: "site-local (deprecated)"),
        Range(prefix: v6([0xff]), bits: 8, text: "ff00::/8", name: "multicast"),
    ]

    static let mapped = Range(prefix: v6([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]), bits: 96, text: "::ffff:0:0/96", name: "IPv4-mapped")
    static let nat64 = Range(prefix: v6([0, 0x64, 0xff, 0x9b]), bits: 96, text: "64:ff9b::/96", name: "NAT64")
    static let sixToFour = Range(prefix: v6([0x20, 0x02]), bits: 16, text: "2002::/16", name: "6to4")

    static func refusalV6(_ a: [UInt8]) -> Refusal? {
        // Forms that reach an IPv4 address are judged by that address.
        for wrapper in [mapped, nat64] where wrapper.contains(a) {
            return refusalV4(Array(a[12..<16])).map { Refusal(range: "\(wrapper.text) of \($0.range)", name: "\(wrapper.name) \($0.name)") }
        }
        if let range = v6Ranges.first(where: { $0.contains(a) }) { return Refusal(range: range.text, name: range.name) }
        if sixToFour.contains(a) {
            return refusalV4(Array(a[2..<6])).map { Refusal(range: "\(sixToFour.text) of \($0.range)", name: "\(sixToFour.name) \($0.name)") }
        }
        // Global unicast is 2000::/3; the rest of the space is unassigned or special.
        if a[0] & 0xe0 != 0x20 { return Refusal(range: "outside 2000::/3", name: "not global unicast") }
        return nil
    }
}
