import COpenSSL

/// Web Push operations shared by the in-process API and the control endpoints.
extension MockCore {
    /// Makes a subscription: a fresh P-256 key pair and 16-byte auth secret (or the given ones),
    /// an endpoint on `options.origin` or the mock's own origin.
    ///
    /// - Throws: `MockPushError.notStarted` when no origin is given and the server has not
    ///   started; `.badConfiguration` for an origin, key or secret that is malformed.
    func makeWebPushSubscription(_ options: MockWebPushSubscriptionOptions) throws -> MockWebPushSubscription {
        let origin: MockWebPushOrigin
        if let text = options.origin {
            guard let parsed = MockWebPushOrigin(text) else {
                throw MockPushError(.badConfiguration, "origin \"\(text)\" is not https://host[:port]")
            }
            origin = parsed
        } else {
            guard let own = state.withLock({ $0.webPush.ownOrigin }) else {
                throw MockPushError(.notStarted, "start() the server before making a Web Push subscription on its origin")
            }
            origin = own
        }
        var restricted: [UInt8]?
        if let key = options.applicationServerKey {
            guard let point = MockBase64URL.decode(Substring(key)), MockWebPushKey.publicKey(point: point) != nil else {
                throw MockPushError(.badConfiguration, "applicationServerKey is not a base64url uncompressed P-256 public key")
            }
            restricted = point
        }
        let privateKey: MockWebPushKey
        var authSecret: [UInt8]
        switch (options.privateKey, options.auth) {
        case (nil, nil):
            privateKey = try MockWebPushKey.generate()
            authSecret = [UInt8](repeating: 0, count: 16)
            guard RAND_bytes(&authSecret, 16) == 1 else {
                throw MockPushError(.keyLoadFailed, "cannot draw an auth secret: \(openSSLErrorMessage())")
            }
        case (let scalar?, let auth?):
            guard let scalarBytes = MockBase64URL.decode(Substring(scalar)) else {
                throw MockPushError(.badConfiguration, "privateKey is not base64url")
            }
            guard let secret = MockBase64URL.decode(Substring(auth)), secret.count == 16 else {
                throw MockPushError(.badConfiguration, "auth is not 16 octets of base64url")
            }
            privateKey = try MockWebPushKey.privateKey(scalar: scalarBytes)
            authSecret = secret
        default:
            throw MockPushError(.badConfiguration, "give both privateKey and auth, or neither")
        }
        var idBytes = [UInt8](repeating: 0, count: 12)
        guard RAND_bytes(&idBytes, 12) == 1 else {
            throw MockPushError(.keyLoadFailed, "cannot draw a subscription id: \(openSSLErrorMessage())")
        }
        let keys = MockWebPushSubscriptionKeys(id: MockBase64URL.encode(idBytes), origin: origin, privateKey: privateKey,
                                               authSecret: authSecret, applicationServerKey: restricted)
        state.withLock { s in
            s.webPush.subscriptions[keys.id] = MockWebPushState.Entry(keys: keys)
            s.webPush.order.append(keys.id)
        }
        return keys.subscription
    }

    /// Unsubscribes the subscription at `endpoint` (or with that id): its messages get 410 from
    /// now on. False when the mock made none.
    func unsubscribeWebPush(_ endpoint: String) -> Bool {
        let id = Self.webPushID(endpoint)
        return state.withLock { s in
            guard s.webPush.subscriptions[id] != nil else { return false }
            s.webPush.subscriptions[id]!.active = false
            return true
        }
    }

    func webPushSubscriptions() -> [MockWebPushSubscription] {
        state.withLock { s in s.webPush.order.compactMap { s.webPush.subscriptions[$0]?.keys.subscription } }
    }

    func setWebPushRule(forEndpoint endpoint: String, _ rule: MockWebPushRule?) {
        let id = Self.webPushID(endpoint)
        state.withLock { $0.webPush.rules[id] = rule.map { MockRuleProgress(rule: $0) } }
    }

    /// - Throws: `MockPushError.badConfiguration` when `origin` is not `https://host[:port]`.
    func setWebPushRule(forOrigin origin: String, _ rule: MockWebPushRule?) throws {
        guard let parsed = MockWebPushOrigin(origin) else {
            throw MockPushError(.badConfiguration, "origin \"\(origin)\" is not https://host[:port]")
        }
        state.withLock { $0.webPush.originRules[parsed.serialized] = rule.map { MockRuleProgress(rule: $0) } }
    }

    /// Decrypts one message in `oneIn` from now on (1: all, the default).
    func setWebPushDecryptSample(oneIn: Int) {
        state.withLock { s in
            s.webPush.decryptOneIn = max(oneIn, 1)
            s.webPush.sampled = 0
        }
    }

    func webPushRequests() -> [MockWebPushRecordedRequest] {
        state.withLock { $0.webPush.records }
    }

    /// The id in an endpoint (`…/wp/<id>`), or `endpoint` itself when it is an id.
    static func webPushID(_ endpoint: String) -> String {
        guard let range = endpoint.range(of: "/wp/", options: .backwards) else { return endpoint }
        return String(endpoint[range.upperBound...])
    }
}
