import PushCore
import Testing

/// The pure decisions of `pushq serve`: scopes, where it may listen, the failed-key budget, trusted proxies,
/// and splitting a request body without losing a payload's bytes.
@Suite("Serve policies")
struct ServePolicyTests {
    @Test("scopes: read reads, enqueue reads and enqueues, devices registers devices only, admin does everything")
    func scopes() {
        let table: [APIScope: Set<APIPermission>] = [
            .read: [.readQueue], .enqueue: [.readQueue, .enqueue], .devices: [.registerDevices],
            .admin: Set(APIPermission.allCases),
        ]
        for scope in APIScope.allCases {
            for permission in APIPermission.allCases {
                #expect(scope.allows(permission) == table[scope]!.contains(permission), "\(scope) \(permission)")
            }
        }
    }

    @Test("loopback: 127.0.0.0/8, ::1 in any spelling, localhost; not 0.0.0.0, ::, 128.0.0.1, 127.0.0.256 or a name")
    func loopback() {
        for host in ["127.0.0.1", "127.255.0.9", "::1", "0:0:0:0:0:0:0:1", "0::1", "::0:1", "LOCALHOST"] {
            #expect(ListenerExposure.isLoopback(host), "\(host)")
        }
        for host in ["0.0.0.0", "::", "128.0.0.1", "127.0.0.256", "127.0.0", "127.0.0.1.5", "::2", "1::1", "example.com", "", "127.0.0.01x"] {
            #expect(!ListenerExposure.isLoopback(host), "\(host)")
        }
    }

    @Test("exposure: loopback always; elsewhere TLS or a proxy, else refused naming both settings")
    func exposure() {
        #expect(ListenerExposure.decide(host: "127.0.0.1", tls: false, proxyTerminatesTLS: false) == .loopback)
        #expect(ListenerExposure.decide(host: "0.0.0.0", tls: true, proxyTerminatesTLS: false) == .network)
        #expect(ListenerExposure.decide(host: "0.0.0.0", tls: false, proxyTerminatesTLS: true) == .network)
        guard case .refused(let why) = ListenerExposure.decide(host: "0.0.0.0", tls: false, proxyTerminatesTLS: false) else {
            Issue.record("0.0.0.0 in clear must be refused")
            return
        }
        #expect(why.contains("PUSHQ_HTTP_TLS_CERT") && why.contains("PUSHQ_HTTP_TLS_TERMINATED_BY_PROXY"))
    }

    /// failed-key budget: a burst of 401s, then 429 with the wait for the next token; refills at the rate;
    /// counts what it throttled
    @Test("failed-key budget: a burst of 401s, then 429 with the wait; refills at the rate; counts what it throttled")
    func failedKeyBudget() {
        var b = FailedKeyBudget(burst: 3, perSecond: 0.5)
        for _ in 0..<3 { #expect(b.failure(now: 100) == .refuse(throttledBefore: 0)) }
        #expect(b.failure(now: 100) == .throttle(retryAfter: 2), "one token every 2 s")
        #expect(b.failure(now: 101) == .throttle(retryAfter: 1), "half a token back: 1 s to go")
        #expect(b.failure(now: 102) == .refuse(throttledBefore: 2), "a token again; the 2 throttled since are told")
        #expect(b.failure(now: 102.5) == .throttle(retryAfter: 2))
        #expect(b.failure(now: 1_000) == .refuse(throttledBefore: 1), "refilled, never beyond the burst")
        #expect(b.failure(now: 1_000) == .refuse(throttledBefore: 0))
        #expect(b.failure(now: 1_000) == .refuse(throttledBefore: 0))
        #expect(b.failure(now: 1_000) == .throttle(retryAfter: 2))
        #expect(b.failure(now: 999) == .throttle(retryAfter: 2), "a clock going back refills nothing")
    }

    @Test("trusted proxies: parse IPv4 and IPv6 networks and bare addresses; a bad entry is named")
    func trustedProxiesParsing() throws {
        let proxies = try TrustedProxies(parsing: " 10.0.0.0/8, 192.168.1.7 ,fd00::/8,, ::1, 2001:db8:0:0:1::/80 ")
        #expect(proxies.networks.map(\.description) == ["10.0.0.0/8", "192.168.1.7/32", "fd00:0:0:0:0:0:0:0/8", "0:0:0:0:0:0:0:1/128",
                                                         "2001:db8:0:0:1:0:0:0/80"])
        #expect(try TrustedProxies(parsing: "").networks.isEmpty && TrustedProxies(parsing: " , ").networks.isEmpty)
        let bad: [(String, String)] = [
            ("10.0.0.0/8, 10.0.0.256/24", "10.0.0.256/24"), ("10.0.0.0/33", "10.0.0.0/33"), ("fd00::/129", "fd00::/129"),
            ("10.0.0.0/", "10.0.0.0/"), ("10.0.0.0/-1", "10.0.0.0/-1"), ("10.0.0.0/8/9", "10.0.0.0/8/9"), ("example.com", "example.com"),
            ("1::2::3", "1::2::3"), ("10.1", "10.1"), ("010.0.0.1", "010.0.0.1"), ("fe80::1%eth0", "fe80::1%eth0"), ("::ffff:1.2.3", "::ffff:1.2.3"),
            ("12345::", "12345::"), ("1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8:9"), ("+1::", "+1::"), ("10.0.0.0/ 8", "10.0.0.0/ 8"),
        ]
        for (text, entry) in bad {
            #expect(throws: IPNetwork.ParseError.self, "\(text)") { try TrustedProxies(parsing: text) }
            do { _ = try TrustedProxies(parsing: text) } catch { #expect(error.entry == entry, "\(text)") }
        }
    }

    @Test("trusted proxies: the client is the first untrusted hop from the right of (X-Forwarded-For…, peer)")
    func trustedProxiesClient() throws {
        let proxies = try TrustedProxies(parsing: "10.0.0.0/8, 2001:db8::/32")
        // (trusted, X-Forwarded-For field lines, peer) → the client.
        let table: [(TrustedProxies, [String], String, String)] = [
            (.none, ["203.0.113.9"], "10.1.2.3", "10.1.2.3"),
            (.none, [], "127.0.0.1", "127.0.0.1"),
            (proxies, ["203.0.113.9"], "198.51.100.1", "198.51.100.1"),
            (proxies, ["203.0.113.9"], "10.1.2.3", "203.0.113.9"),
            (proxies, ["1.1.1.1, 203.0.113.9, 10.9.9.9"], "10.1.2.3", "203.0.113.9"),
            (proxies, ["1.1.1.1", "203.0.113.9", "10.9.9.9"], "10.1.2.3", "203.0.113.9"),
            (proxies, ["10.5.5.5, 10.9.9.9"], "10.1.2.3", "10.5.5.5"),
            (proxies, [], "10.1.2.3", "10.1.2.3"),
            (proxies, [" "], "10.1.2.3", "10.1.2.3"),
            (proxies, ["203.0.113.9:4711"], "10.1.2.3", "203.0.113.9"),
            (proxies, ["[2001:db8::9]:443, [2001:db8::7]"], "10.1.2.3", "2001:db8::9"),
            (proxies, ["2001:db9::1, 2001:db8::7"], "2001:db8::1", "2001:db9::1"),
            (proxies, ["203.0.113.9, unknown"], "10.1.2.3", "unknown"),
            (proxies, ["5.5.5.5, 10.0.0.1"], "::ffff:10.1.2.3", "5.5.5.5"),
            (proxies, ["5.5.5.5"], "::ffff:11.1.2.3", "::ffff:11.1.2.3"),
            (proxies, [String(repeating: "x", count: 100)], "10.1.2.3", String(repeating: "x", count: 64)),
        ]
        for (trusted, forwarded, peer, client) in table {
            #expect(trusted.client(forwardedFor: forwarded, peer: peer) == client, "\(forwarded) via \(peer)")
        }
    }

    /// split: an object's members with the exact byte ranges of their values, an array's items; nil for
    /// anything that is not one JSON value
    @Test("split: an object's members with their values' byte ranges, an array's items; nil for anything not one JSON value")
    func split() {
        let text = #" { "payload" : {"aps": {"alert":"x"}} , "n":1.50, "s":"a\"b" } "#
        let bytes = Array(text.utf8)
        guard case .object(let members)? = JSONValue.split(bytes) else {
            Issue.record("an object")
            return
        }
        #expect(members.map(\.key) == ["payload", "n", "s"])
        #expect(members.map { String(decoding: bytes[$0.value], as: UTF8.self) } == [#"{"aps": {"alert":"x"}}"#, "1.50", #""a\"b""#])
        guard case .array(let items)? = JSONValue.split(Array("[1, {\"a\":[2]} ,\"x\"]".utf8)) else {
            Issue.record("an array")
            return
        }
        #expect(items.count == 3)
        #expect(JSONValue.split(Array("42".utf8)) == .scalar)
        for bad in ["", "{", "{\"a\":1,}", "[1,]", "{} {}", "{\"a\" 1}", "nul", "[\"\u{1}\"]"] {
            #expect(JSONValue.split(Array(bad.utf8)) == nil, "\(bad)")
        }
        #expect(JSONValue.split([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]) == nil, "not UTF-8")
        #expect(JSONValue.parse(bytes, in: members[1].value) == .number("1.50"))
    }
}
