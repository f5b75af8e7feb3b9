import PushCore
import Testing

/// Issue 47's SSRF rules, pure: the endpoint's form, every refused address range of both
/// families (and the IPv6 forms that embed an IPv4 address), and the allowlist.
@Suite struct WebPushEndpointPolicyTests {
    static func v4(_ text: String) -> [UInt8] { text.split(separator: ".").map { UInt8($0)! } }

    /// `text` through the endpoint parser's own IPv6 literal syntax.
    static func v6(_ text: String) -> [UInt8] {
        guard case .success(let e) = WebPushEndpoint.parse("https://[\(text)]/x"), case .ipv6(let a) = e.origin.host else {
            fatalError("not an IPv6 literal: \(text)")
        }
        return a
    }

    /// Every refused IPv4 range, at its first, an inner and its last address; the range named.
    static let refusedV4: [(String, String)] = [
        ("0.0.0.0", "0.0.0.0/8"), ("0.255.255.255", "0.0.0.0/8"),
        ("10.0.0.0", "10.0.0.0/8"), ("10.1.2.3", "10.0.0.0/8"), ("10.255.255.255", "10.0.0.0/8"),
        ("100.64.0.0", "100.64.0.0/10"), ("100.127.255.255", "100.64.0.0/10"),
        ("127.0.0.1", "127.0.0.0/8"), ("127.255.255.254", "127.0.0.0/8"),
        ("169.254.0.1", "169.254.0.0/16"), ("169.254.169.254", "169.254.0.0/16"),
        ("172.16.0.0", "172.16.0.0/12"), ("172.31.255.255", "172.16.0.0/12"),
        ("192.0.0.8", "192.0.0.0/24"), ("192.0.2.1", "192.0.2.0/24"), ("192.88.99.1", "192.88.99.0/24"),
        ("192.168.0.1", "192.168.0.0/16"), ("192.168.255.255", "192.168.0.0/16"),
        ("198.18.0.1", "198.18.0.0/15"), ("198.19.255.255", "198.18.0.0/15"),
        ("198.51.100.7", "198.51.100.0/24"), ("203.0.113.9", "203.0.113.0/24"),
        ("224.0.0.1", "224.0.0.0/4"), ("239.255.255.250", "224.0.0.0/4"),
        ("240.0.0.1", "240.0.0.0/4"), ("255.255.255.255", "255.255.255.255/32"),
    ]

    /// Public addresses, including the neighbours of the refused ranges.
    static let publicV4 = ["8.8.8.8", "1.1.1.1", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0",
                           "126.255.255.255", "128.0.0.0", "169.253.255.255", "169.255.0.0", "172.15.255.255",
                           "172.32.0.0", "192.0.1.0", "192.167.255.255", "192.169.0.0", "198.17.255.255",
                           "198.20.0.0", "223.255.255.255", "142.250.74.106"]

    @Test("every refused IPv4 range is refused and named; its neighbours are public", arguments: refusedV4)
    func refusedIPv4(address: String, range: String) throws {
        let refusal = try #require(WebPushAddressPolicy.refusal(Self.v4(address)))
        #expect(refusal.range == range)
    }

    @Test("public IPv4 addresses pass", arguments: publicV4)
    func publicIPv4(address: String) {
        #expect(WebPushAddressPolicy.refusal(Self.v4(address)) == nil)
    }

    /// Refused IPv6 addresses and the range each falls in (an embedding form names the IPv4 range).
    static let refusedV6: [(String, String)] = [
        ("::", "::/128"), ("::1", "::1/128"),
        ("fc00::1", "fc00::/7"), ("fd12:3456::1", "fc00::/7"), ("fe80::1", "fe80::/10"), ("febf::1", "fe80::/10"),
        ("fec0::1", "fec0::/10"), ("ff02::1", "ff00::/8"), ("ff05::2", "ff00::/8"),
        ("::ffff:127.0.0.1", "::ffff:0:0/96 of 127.0.0.0/8"), ("::ffff:10.0.0.1", "::ffff:0:0/96 of 10.0.0.0/8"),
        ("::ffff:169.254.169.254", "::ffff:0:0/96 of 169.254.0.0/16"), ("::ffff:7f00:1", "::ffff:0:0/96 of 127.0.0.0/8"),
        ("::ffff:192.168.1.1", "::ffff:0:0/96 of 192.168.0.0/16"),
        ("::127.0.0.1", "::/96"), ("::10.0.0.1", "::/96"), ("::8.8.8.8", "::/96"),
        ("64:ff9b::127.0.0.1", "64:ff9b::/96 of 127.0.0.0/8"), ("64:ff9b::a9fe:a9fe", "64:ff9b::/96 of 169.254.0.0/16"),
        ("64:ff9b:1::1", "64:ff9b:1::/48"), ("100::1", "100::/64"),
        ("2001:db8::1", "2001:db8::/32"), ("2001::1", "2001::/23"), ("3fff::1", "3fff::/20"), ("5f00::1", "5f00::/16"),
        ("2002:7f00:1::1", "2002::/16 of 127.0.0.0/8"), ("2002:c0a8:101::1", "2002::/16 of 192.168.0.0/16"),
        ("4000::1", "outside 2000::/3"), ("1::1", "outside 2000::/3"),
    ]

    @Test("every refused IPv6 range is refused and named, embedded IPv4 judged by its own range", arguments: refusedV6)
    func refusedIPv6(address: String, range: String) throws {
        let refusal = try #require(WebPushAddressPolicy.refusal(Self.v6(address)))
        #expect(refusal.range == range)
    }

    /// Public IPv6 addresses, and the embedding forms of public IPv4 addresses (mapped, NAT64, 6to4).
    static let publicV6 = ["2a00:1450:4001:82b::200a", "2606:4700::1111", "2001:4860:4860::8888", "2000::1",
                           "3ffe::1", "::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "64:ff9b::142.250.74.106", "2002:808:808::1"]

    @Test("public IPv6 addresses and IPv4-embedding forms of public IPv4 addresses pass", arguments: publicV6)
    func publicIPv6(address: String) {
        #expect(WebPushAddressPolicy.refusal(Self.v6(address)) == nil)
    }

    @Test("an address of neither 4 nor 16 bytes is refused")
    func otherLengths() {
        #expect(WebPushAddressPolicy.refusal([]) != nil)
        #expect(WebPushAddressPolicy.refusal([8, 8, 8]) != nil)
        #expect(WebPushAddressPolicy.refusal([UInt8](repeating: 0x2a, count: 17)) != nil)
    }

    @Test("IPv6 literal text: :: anywhere once, dotted quad at the end; malformed text refused")
    func ipv6Syntax() {
        #expect(Self.v6("1:2:3:4:5:6:7:8") == [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8])
        #expect(Self.v6("1::8") == [0, 1] + [UInt8](repeating: 0, count: 12) + [0, 8])
        #expect(Self.v6("::ffff:1.2.3.4") == [UInt8](repeating: 0, count: 10) + [0xff, 0xff, 1, 2, 3, 4])
        #expect(Self.v6("1:2:3:4:5:6::") == [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 0, 0, 0])
        for bad in ["1:::2", "1::2::3", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "12345::", ":1::", "1::2:", "g::1",
                    "::1.2.3", "::1.2.3.04", "fe80::1%25eth0", "1.2.3.4::", ""] {
            if case .success = WebPushEndpoint.parse("https://[\(bad)]/x") { Issue.record("accepted [\(bad)]") }
        }
    }
}

/// The endpoint's form: `https://host[:port]/path`, exact bytes kept, no userinfo, no other scheme.
@Suite struct WebPushEndpointFormTests {
    @Test("a push service's endpoint parses; its bytes are kept and its origin normalised")
    func accepted() throws {
        let text = "https://FCM.googleapis.com/fcm/send/dXk:APA91bHqW_x-Y?up=1"
        guard case .success(let e) = WebPushEndpoint.parse(text) else { Issue.record("refused"); return }
        #expect(e.text == text)
        #expect(e.origin.description == "https://fcm.googleapis.com")
        #expect(e.origin.host == .name("fcm.googleapis.com"))
        #expect(e.path == "/fcm/send/dXk:APA91bHqW_x-Y?up=1")
        guard case .success(let ported) = WebPushEndpoint.parse("https://push.example.net:8443/a") else { Issue.record("refused"); return }
        #expect(ported.origin.port == 8443 && ported.origin.description == "https://push.example.net:8443")
        guard case .success(let explicit443) = WebPushEndpoint.parse("https://push.example.net:443/a") else { Issue.record("refused"); return }
        #expect(explicit443.origin.description == "https://push.example.net")
        guard case .success(let literal) = WebPushEndpoint.parse("https://[2a00:1450::1]:8443/a") else { Issue.record("refused"); return }
        #expect(literal.origin.host.literalAddress?.count == 16)
        #expect(literal.origin.description == "https://[2a00:1450::1]:8443")
    }

    /// Each refused form, with the code it is refused under.
    static let refused: [(String, WebPushEndpointRefusal.Code)] = [
        ("http://push.example.net/a", .scheme), ("wss://push.example.net/a", .scheme), ("ftp://push.example.net/a", .scheme),
        ("push.example.net/a", .scheme), ("file:///etc/passwd", .scheme), ("", .malformed),
        ("https://user@push.example.net/a", .userinfo), ("https://user:pw@push.example.net/a", .userinfo),
        ("https://push.example.net@169.254.169.254/a", .userinfo),
        ("https://push.example.net", .malformed), ("https://push.example.net?x=1", .malformed),
        ("https://push.example.net/a#frag", .malformed), ("https://push.example.net\\@evil.example/a", .malformed),
        ("https://push.example.net/a b", .malformed), ("https://push.example.net/a\r\nX: y", .malformed),
        ("https://push.exämple.net/a", .malformed),
        ("https://127.1/a", .host), ("https://0x7f.0.0.1/a", .host), ("https://a.0x/a", .host), ("https://2130706433/a", .host),
        ("https://127.000.000.001/a", .host), ("https://1.2.3.256/a", .host),
        ("https://push%2eexample.net/a", .host), ("https://[fe80::1%25eth0]/a", .host), ("https://[::1/a", .host),
        ("https://push..example.net/a", .host), ("https://push.example.net./a", .host), ("https://-push.example.net/a", .host),
        ("https://push_1.example.net/a", .host), ("https:///a", .host),
        ("https://push.example.net:0/a", .port), ("https://push.example.net:65536/a", .port),
        ("https://push.example.net:/a", .port), ("https://push.example.net:+443/a", .port), ("https://push.example.net:44x/a", .port),
    ]

    @Test("non-https schemes, userinfo, fragments, ambiguous hosts and bad ports are refused", arguments: refused)
    func refusedForms(text: String, code: WebPushEndpointRefusal.Code) {
        guard case .failure(let refusal) = WebPushEndpoint.parse(text) else {
            Issue.record("accepted \(text)")
            return
        }
        #expect(refusal.code == code, "\(text): \(refusal.message)")
        #expect(refusal.reason == "EndpointNotAllowed")
    }

    @Test("a refusal's message never repeats the endpoint's path (the subscription's secret)")
    func messageHidesPath() {
        for text in ["https://user@push.example.net/SECRETPATH", "https://127.1/SECRETPATH", "http://x.example/SECRETPATH"] {
            guard case .failure(let refusal) = WebPushEndpoint.parse(text) else { Issue.record("accepted"); continue }
            #expect(!refusal.message.contains("SECRETPATH"))
        }
    }

    @Test("an endpoint longer than 2048 bytes is refused")
    func tooLong() {
        let path = String(repeating: "a", count: WebPushEndpoint.maximumLength - "https://p.example/".utf8.count)
        if case .failure = WebPushEndpoint.parse("https://p.example/" + path) { Issue.record("refused at the limit") }
        if case .success = WebPushEndpoint.parse("https://p.example/" + path + "a") { Issue.record("accepted past the limit") }
    }
}

/// Resolution's addresses against the policy, and `PUSHQ_WEBPUSH_ALLOWED_ORIGINS`.
@Suite struct WebPushEndpointDecisionTests {
    func endpoint(_ text: String) -> WebPushEndpoint {
        guard case .success(let e) = WebPushEndpoint.parse(text) else { fatalError(text) }
        return e
    }

    @Test("public addresses are connected to, pinned, in the resolver's order")
    func publicConnects() {
        let addresses: [[UInt8]] = [[142, 250, 74, 106], WebPushEndpointPolicyTests.v6("2a00:1450:4001:82b::200a")]
        #expect(WebPushEndpointPolicy().check(endpoint("https://fcm.googleapis.com/fcm/send/x"), resolved: addresses) == .connect(addresses))
    }

    @Test("one refused address among public ones refuses the endpoint, naming the range and the allowlist")
    func oneBadAddressRefuses() {
        let decision = WebPushEndpointPolicy().check(endpoint("https://rebind.example/x"),
                                                     resolved: [[8, 8, 8, 8], WebPushEndpointPolicyTests.v6("::ffff:10.0.0.5")])
        guard case .refuse(let refusal) = decision else { Issue.record("connected"); return }
        #expect(refusal.code == .address)
        #expect(refusal.message.contains("10.0.0.0/8") && refusal.message.contains("PUSHQ_WEBPUSH_ALLOWED_ORIGINS"))
    }

    @Test("no address refuses; an IP-literal host is judged by itself, whatever the resolver said")
    func literalsAndNoAddress() {
        let policy = WebPushEndpointPolicy()
        guard case .refuse(let none) = policy.check(endpoint("https://gone.example/x"), resolved: []) else { Issue.record("connected"); return }
        #expect(none.code == .noAddress)
        guard case .refuse = policy.check(endpoint("https://127.0.0.1/x"), resolved: [[8, 8, 8, 8]]) else { Issue.record("connected"); return }
        guard case .refuse = policy.check(endpoint("https://[::1]:8443/x"), resolved: []) else { Issue.record("connected"); return }
        #expect(policy.check(endpoint("https://8.8.4.4/x"), resolved: [[127, 0, 0, 1]]) == .connect([[8, 8, 4, 4]]))
    }

    @Test("an allowlisted origin connects to any address; another port or host of it does not")
    func allowlist() throws {
        let origins = try WebPushEndpointPolicy.parseAllowedOrigins(" https://127.0.0.1:8443, https://Push.Internal.example ,https://[::1]:9000")
        #expect(origins.count == 3)
        let policy = WebPushEndpointPolicy(allowedOrigins: origins)
        #expect(policy.check(endpoint("https://127.0.0.1:8443/x"), resolved: []) == .connect([[127, 0, 0, 1]]))
        #expect(policy.check(endpoint("https://push.internal.example:443/x"), resolved: [[10, 0, 0, 7]]) == .connect([[10, 0, 0, 7]]))
        #expect(policy.check(endpoint("https://[0:0::1]:9000/x"), resolved: []) == .connect([WebPushEndpointPolicyTests.v6("::1")]))
        guard case .refuse = policy.check(endpoint("https://127.0.0.1:8444/x"), resolved: []) else { Issue.record("other port connected"); return }
        guard case .refuse = policy.check(endpoint("https://other.internal.example/x"), resolved: [[10, 0, 0, 7]]) else {
            Issue.record("other host connected"); return
        }
    }

    @Test("the allowlist: empty is none; anything but https://host[:port] is refused naming the variable",
          arguments: ["http://a.example", "https://a.example/", "https://a.example/path", "https://u@a.example",
                      "a.example", "https://a.example,", "https://a.example:0", "https://127.1"])
    func allowlistForms(entry: String) throws {
        #expect(try WebPushEndpointPolicy.parseAllowedOrigins("").isEmpty)
        #expect(try WebPushEndpointPolicy.parseAllowedOrigins("  ").isEmpty)
        let error = try #require(throws: WebPushEndpointRefusal.self) { try WebPushEndpointPolicy.parseAllowedOrigins(entry) }
        #expect(error.message.hasPrefix("PUSHQ_WEBPUSH_ALLOWED_ORIGINS"))
        #expect(error.message.contains("https://host[:port]"))
    }
}
