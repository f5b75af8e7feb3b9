/// One subscription's keys and where it lives; immutable once made.
///
/// Sendable: every stored property is immutable and Sendable (`MockWebPushKey` is).
final class MockWebPushSubscriptionKeys: Sendable {
    let id: String
    let origin: MockWebPushOrigin
    let privateKey: MockWebPushKey
    let authSecret: [UInt8]
    /// The restricting VAPID key's point (RFC 8292 §4.2), when the subscription has one.
    let applicationServerKey: [UInt8]?
    let subscription: MockWebPushSubscription

    init(id: String, origin: MockWebPushOrigin, privateKey: MockWebPushKey, authSecret: [UInt8], applicationServerKey: [UInt8]?) {
        self.id = id
        self.origin = origin
        self.privateKey = privateKey
        self.authSecret = authSecret
        self.applicationServerKey = applicationServerKey
        self.subscription = MockWebPushSubscription(
            endpoint: origin.serialized + "/wp/" + id, expirationTime: nil,
            keys: .init(p256dh: MockBase64URL.encode(privateKey.publicPoint), auth: MockBase64URL.encode(authSecret)))
    }
}

/// An endpoint's origin, `https://host[:port]` (RFC 6454 serialization: lowercase host, no
/// default port).
struct MockWebPushOrigin: Sendable, Hashable {
    var host: String
    var port: Int

    var serialized: String { "https://" + host + (port == 443 ? "" : ":\(port)") }

    /// `https://host[:port]` without path, userinfo, query or fragment; nil otherwise.
    init?(_ text: String) {
        guard text.lowercased().hasPrefix("https://") else { return nil }
        let authority = text.dropFirst("https://".count)
        guard !authority.isEmpty, !authority.contains(where: { "/?#@ ".contains($0) }) else { return nil }
        self.init(authority: authority)
    }

    /// From an HTTP/2 `:authority`, `host[:port]` (port 443 when absent); nil when malformed.
    init?(authority: Substring) {
        var host = authority
        var port = 443
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":", let p = Int(rest.dropFirst()) else { return nil }
                port = p
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            guard let p = Int(authority[authority.index(after: colon)...]) else { return nil }
            port = p
        }
        guard !host.isEmpty, (1...65535).contains(port) else { return nil }
        self.host = host.lowercased()
        self.port = port
    }
}

/// The Web Push side of the mock's shared state: subscriptions, rules, records, counters.
/// Lives inside `MockSharedState`, under the server's lock.
struct MockWebPushState {
    struct Entry {
        var keys: MockWebPushSubscriptionKeys
        var active = true
    }

    /// The mock's own origin once started (`https://127.0.0.1:PORT`): new subscriptions' default.
    var ownOrigin: MockWebPushOrigin?
    /// Listeners of further origins (``MockPushServer/listenForWebPushOrigins(_:)``): same
    /// certificate, same service, one port each; stopped with the server, kept by `reset()`.
    var extraListeners: [MockListener] = []
    var subscriptions: [String: Entry] = [:]
    var order: [String] = []
    var rules: [String: MockRuleProgress<MockWebPushAnswer>] = [:]
    var originRules: [String: MockRuleProgress<MockWebPushAnswer>] = [:]
    var records: [MockWebPushRecordedRequest] = []
    /// Decrypt one message in this many (1: every one; `POST /_mock/webpush/decrypt-sample`), so
    /// that a benchmark's figure is not the mock's own ECDH; messages counted in `sampled`.
    var decryptOneIn = 1
    var sampled = 0

    /// Whether the next message with a body is decrypted.
    mutating func drawDecrypt() -> Bool {
        defer { sampled += 1 }
        return decryptOneIn <= 1 || sampled % decryptOneIn == 0
    }

    /// Back to the start, except the subscriptions (the browsers' side) and the own origin:
    /// rules and records cleared.
    mutating func reset() {
        rules = [:]
        originRules = [:]
        records = []
        decryptOneIn = 1
        sampled = 0
    }

    /// The answer for a message that passed the checks: the subscription's rule, else its
    /// origin's, else normal.
    mutating func answer(subscriptionID: String, origin: String) -> MockWebPushAnswer {
        if !rules.isEmpty, let answer = rules[subscriptionID]?.next() { return answer }
        if !originRules.isEmpty, let answer = originRules[origin]?.next() { return answer }
        return .normal
    }
}

extension MockSharedState {
    /// Counts one Web Push request, its decided status and its decryption (nil: not attempted),
    /// keeps its record (under the same switches and cap as APNs records), and returns the
    /// waiters whose condition now holds.
    mutating func countWebPush(status: Int?, decrypted: Bool?, record: MockWebPushRecordedRequest?) -> [Waiter] {
        stats.webPushRequests += 1
        if let status { stats.webPushByStatus[status, default: 0] += 1 }
        switch decrypted {
        case true?: stats.webPushDecrypted += 1
        case false?: stats.webPushDecryptionFailures += 1
        case nil: break
        }
        if recordRequests, var record {
            if webPush.records.count < maxRecordedRequests {
                record.sequenceNumber = stats.webPushRequests
                if !recordBodies {
                    record.body = nil
                    record.plaintext = nil
                }
                webPush.records.append(record)
            } else {
                stats.recordsDropped += 1
            }
        }
        return satisfiedWaiters()
    }
}
