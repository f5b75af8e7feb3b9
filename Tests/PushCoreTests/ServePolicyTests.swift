import PushCore
import Testing

/// The pure decisions of `pushq serve`: scopes, where it may listen, the failed-login throttle,
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

    @Test("throttle: the limit-th failure within the window blocks the client until the oldest leaves it; other clients are not blocked")
    func throttle() {
        var t = LoginThrottle(limit: 3, windowSeconds: 60)
        for s in [0.0, 10, 20] {
            #expect(t.retryAfter(client: "a", now: s) == nil)
            t.recordFailure(client: "a", now: s)
        }
        #expect(t.retryAfter(client: "a", now: 30) == 30, "until the failure at 0 leaves the window at 60")
        #expect(t.retryAfter(client: "b", now: 30) == nil)
        #expect(t.retryAfter(client: "a", now: 60.5) == nil)
        t.recordFailure(client: "a", now: 61)
        #expect(t.retryAfter(client: "a", now: 62) == 8, "failures at 10, 20, 61: blocked until the one at 10 leaves the window, at 70")
    }

    @Test("throttle: at most maxClients clients are remembered; the stalest is forgotten first")
    func throttleBound() {
        var t = LoginThrottle(limit: 1, windowSeconds: 60, maxClients: 2)
        t.recordFailure(client: "a", now: 1)
        t.recordFailure(client: "b", now: 2)
        t.recordFailure(client: "c", now: 3)
        #expect(t.retryAfter(client: "a", now: 4) == nil, "a was forgotten")
        #expect(t.retryAfter(client: "b", now: 4) != nil && t.retryAfter(client: "c", now: 4) != nil)
    }

    @Test("split: an object's members with the exact byte ranges of their values, an array's items; nil for anything that is not one JSON value")
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
