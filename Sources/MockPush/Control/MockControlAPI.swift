import Foundation

/// The control surface served on the mock's own port, under `/_mock/`, for processes
/// that drive a separate `pushq-mock` (benchmarks, scripts). JSON in and out; no auth
/// (loopback only). Control requests are never counted or recorded.
///
/// | request | body | answer |
/// |---|---|---|
/// | `GET /_mock/stats` | | `MockPushStats` |
/// | `GET /_mock/requests` | | `[MockRecordedRequest]` |
/// | `POST /_mock/reset` | | `{"ok":true}`: rules, answer-all, failure rate, faults (back to the configured ones), counters, records cleared |
/// | `POST /_mock/rules` | `{"token":"<hex>","rule":MockTokenRule}`; `rule` null or absent removes the token's rule | `{"ok":true}` |
/// | `POST /_mock/failure-rate` | `MockFailureRate`, or `null` to turn off | `{"ok":true}` |
/// | `POST /_mock/answer-all` | `MockAnswer` for every valid request, over rules and the failure rate, or `null` to turn off | `{"ok":true}` |
/// | `POST /_mock/faults` | `MockConnectionFaults` (replaces the current ones; idle settings apply to new connections, the others at once, `tokenMaxAgeSeconds` included) | `{"ok":true}` |
/// | `POST /_mock/refuse` | `{"milliseconds":N}`, N ≥ 1 | `{"ok":true}`, then the listener and every connection (this one too) close; connects are refused until the port is bound again by itself N ms later |
/// | `GET /_mock/wait?count=N&timeoutMs=T` | | 200 `{"requests":n}` once N requests arrived; 408 `{"reason":"Timeout","requests":n}` after T ms (default 10000) |
/// | `POST /_mock/fcm/rules` | `{"token":"<registration token>","rule":MockFCMTokenRule}`; `rule` null or absent removes it | `{"ok":true}` |
/// | `GET /_mock/fcm/requests` | | `[MockFCMRecordedRequest]` |
/// | `POST /_mock/fcm/access-token-lifetime` | `{"seconds":N}`, N ≥ 1: `expires_in` of tokens issued from now on | `{"ok":true}` |
/// | `POST /_mock/fcm/expire-access-tokens` | | `{"ok":true}`; every access token issued so far now gets 401 UNAUTHENTICATED |
/// | `GET /_mock/management` | | `{"port":N,"url":"https://HOST:N"}`: the channel-management listener |
/// | `GET /_mock/channels` | | `[MockChannel]`, every app's, in creation order |
/// | `POST /_mock/channels/create` | `{"bundleID":"…","storagePolicy":0\|1}` | `MockChannel`; 400 `CannotCreateChannelConfig` past 10 000 |
/// | `POST /_mock/channels/delete` | `{"id":"…"}` | `{"ok":true}`; 400 `ChannelNotRegistered` for an unknown id |
/// | `POST /_mock/channels/fail-next` | `MockAnswer` for the next channel-management request, or `null` to cancel | `{"ok":true}` |
/// | `GET /_mock/channels/requests` | | `[MockRecordedRequest]`: the channel-management requests |
///
/// Errors: 404 `{"reason":"BadPath"}` for an unknown path, 405 `{"reason":"MethodNotAllowed"}`,
/// 400 `{"reason":"BadControlRequest","message":"..."}` for a body that does not decode.
enum MockControlAPI {
    enum Result: Sendable {
        case respond(status: Int, body: String)
        case wait(count: Int, timeoutMilliseconds: Int)
        /// Answer `ok`, then refuse connections for `milliseconds`.
        case refuse(milliseconds: Int)
    }

    struct RuleRequest: Codable {
        var token: String
        var rule: MockTokenRule?
    }

    struct RefuseRequest: Codable {
        var milliseconds: Int
    }

    struct FCMRuleRequest: Codable {
        var token: String
        var rule: MockFCMTokenRule?
    }

    struct LifetimeRequest: Codable {
        var seconds: Int64
    }

    struct ChannelCreateRequest: Codable {
        var bundleID: String
        var storagePolicy: Int
    }

    struct ChannelDeleteRequest: Codable {
        var id: String
    }

    static let ok = Result.respond(status: 200, body: #"{"ok":true}"#)

    static func handle(method: String, path: Substring, body: [UInt8], core: MockCore) -> Result {
        let parts = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let query = parts.count > 1 ? parts[1] : ""
        guard let route = routes[String(parts.first ?? "")] ?? MockWebPushControl.routes[String(parts.first ?? "")] else {
            return .respond(status: 404, body: #"{"reason":"BadPath"}"#)
        }
        guard route.method == method else {
            return .respond(status: 405, body: #"{"reason":"MethodNotAllowed"}"#)
        }
        do {
            return try route.handle(Request(query: query, body: body), core)
        } catch {
            return badRequest("\(error)")
        }
    }

    /// What a route reads: the query string and the body.
    struct Request {
        var query: Substring
        var body: [UInt8]

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try JSONDecoder().decode(type, from: Data(body))
        }
    }

    struct Route: Sendable {
        var method: String
        var handle: @Sendable (Request, MockCore) throws -> Result
    }

    /// The endpoints of the table above, by path.
    static let routes: [String: Route] = [
        "/_mock/stats": Route(method: "GET") { _, core in .respond(status: 200, body: try encode(core.stats())) },
        "/_mock/requests": Route(method: "GET") { _, core in .respond(status: 200, body: try encode(core.requests())) },
        "/_mock/reset": Route(method: "POST") { _, core in core.reset(); return ok },
        "/_mock/rules": Route(method: "POST") { request, core in
            let rule = try request.decode(RuleRequest.self)
            core.setRule(forToken: rule.token, rule.rule)
            return ok
        },
        "/_mock/failure-rate": Route(method: "POST") { request, core in
            core.setFailureRate(try request.decode(MockFailureRate?.self))
            return ok
        },
        "/_mock/answer-all": Route(method: "POST") { request, core in
            core.setAnswerAll(try request.decode(MockAnswer?.self))
            return ok
        },
        "/_mock/faults": Route(method: "POST") { request, core in
            core.setFaults(try request.decode(MockConnectionFaults.self))
            return ok
        },
        "/_mock/refuse": Route(method: "POST") { request, _ in
            let refuse = try request.decode(RefuseRequest.self)
            guard refuse.milliseconds >= 1 else {
                return badRequest("refuse needs milliseconds ≥ 1: the port reopens by itself after them")
            }
            return .refuse(milliseconds: refuse.milliseconds)
        },
        "/_mock/wait": Route(method: "GET") { request, _ in
            let params = queryItems(request.query)
            guard let count = params["count"].flatMap({ Int($0) }) else { return badRequest("wait needs count=N") }
            return .wait(count: count, timeoutMilliseconds: params["timeoutMs"].flatMap { Int($0) } ?? 10_000)
        },
        "/_mock/fcm/rules": Route(method: "POST") { request, core in
            let rule = try request.decode(FCMRuleRequest.self)
            core.setFCMRule(forToken: rule.token, rule.rule)
            return ok
        },
        "/_mock/fcm/requests": Route(method: "GET") { _, core in .respond(status: 200, body: try encode(core.fcmRequests())) },
        "/_mock/fcm/access-token-lifetime": Route(method: "POST") { request, core in
            let lifetime = try request.decode(LifetimeRequest.self)
            guard lifetime.seconds >= 1 else { return badRequest("access-token-lifetime needs seconds ≥ 1") }
            core.setFCMAccessTokenLifetime(seconds: lifetime.seconds)
            return ok
        },
        "/_mock/fcm/expire-access-tokens": Route(method: "POST") { _, core in core.expireFCMAccessTokens(); return ok },
        "/_mock/management": Route(method: "GET") { _, core in
            let port = core.state.withLock { $0.managementPort } ?? 0
            let host = core.configuration.host.contains(":") ? "[\(core.configuration.host)]" : core.configuration.host
            return .respond(status: 200, body: #"{"port":\#(port),"url":"https://\#(host):\#(port)"}"#)
        },
        "/_mock/channels": Route(method: "GET") { _, core in .respond(status: 200, body: try encode(core.channels(bundleID: nil))) },
        "/_mock/channels/create": Route(method: "POST") { request, core in
            let create = try request.decode(ChannelCreateRequest.self)
            guard create.storagePolicy == 0 || create.storagePolicy == 1 else { return badRequest("storagePolicy is 0 or 1") }
            guard let channel = core.createChannel(bundleID: create.bundleID, storagePolicy: create.storagePolicy) else {
                return .respond(status: 400, body: #"{"reason":"CannotCreateChannelConfig"}"#)
            }
            return .respond(status: 200, body: try encode(channel))
        },
        "/_mock/channels/delete": Route(method: "POST") { request, core in
            let delete = try request.decode(ChannelDeleteRequest.self)
            return core.deleteChannel(id: delete.id) ? ok : .respond(status: 400, body: #"{"reason":"ChannelNotRegistered"}"#)
        },
        "/_mock/channels/fail-next": Route(method: "POST") { request, core in
            core.failNextChannelRequest(with: try request.decode(MockAnswer?.self))
            return ok
        },
        "/_mock/channels/requests": Route(method: "GET") { _, core in .respond(status: 200, body: try encode(core.channelRequests())) },
    ]

    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    private static func badRequest(_ message: String) -> Result {
        .respond(status: 400, body: #"{"reason":"BadControlRequest","message":"# + MockJSON.quoted(message) + "}")
    }

    private static func queryItems(_ query: Substring) -> [String: String] {
        var items: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            items[String(kv[0])] = kv.count > 1 ? String(kv[1]) : ""
        }
        return items
    }
}
