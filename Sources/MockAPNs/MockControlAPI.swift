import Foundation

/// The control surface served on the mock's own port, under `/_mock/`, for processes
/// that drive a separate `apns-mock` (benchmarks, scripts). JSON in and out; no auth
/// (loopback only). Control requests are never counted or recorded.
///
/// | request | body | answer |
/// |---|---|---|
/// | `GET /_mock/stats` | | `MockAPNsStats` |
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
///
/// Errors: 404 `{"reason":"BadPath"}` for an unknown path, 405 `{"reason":"MethodNotAllowed"}`,
/// 400 `{"reason":"BadControlRequest","message":"..."}` for a body that does not decode.
enum MockControlAPI {
    enum Result {
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

    static let ok = Result.respond(status: 200, body: #"{"ok":true}"#)

    static func handle(method: String, path: Substring, body: [UInt8], core: MockCore) -> Result {
        let parts = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let route = parts.first ?? ""
        let query = parts.count > 1 ? parts[1] : ""
        do {
            switch (method, route) {
            case ("GET", "/_mock/stats"):
                return .respond(status: 200, body: try encode(core.stats()))
            case ("GET", "/_mock/requests"):
                return .respond(status: 200, body: try encode(core.requests()))
            case ("POST", "/_mock/reset"):
                core.reset()
                return ok
            case ("POST", "/_mock/rules"):
                let request = try JSONDecoder().decode(RuleRequest.self, from: Data(body))
                core.setRule(forToken: request.token, request.rule)
                return ok
            case ("POST", "/_mock/failure-rate"):
                let rate = try JSONDecoder().decode(MockFailureRate?.self, from: Data(body))
                core.setFailureRate(rate)
                return ok
            case ("POST", "/_mock/answer-all"):
                core.setAnswerAll(try JSONDecoder().decode(MockAnswer?.self, from: Data(body)))
                return ok
            case ("POST", "/_mock/faults"):
                core.setFaults(try JSONDecoder().decode(MockConnectionFaults.self, from: Data(body)))
                return ok
            case ("POST", "/_mock/refuse"):
                let request = try JSONDecoder().decode(RefuseRequest.self, from: Data(body))
                guard request.milliseconds >= 1 else {
                    return badRequest("refuse needs milliseconds ≥ 1: the port reopens by itself after them")
                }
                return .refuse(milliseconds: request.milliseconds)
            case ("GET", "/_mock/wait"):
                let params = queryItems(query)
                guard let count = params["count"].flatMap({ Int($0) }) else {
                    return badRequest("wait needs count=N")
                }
                return .wait(count: count, timeoutMilliseconds: params["timeoutMs"].flatMap { Int($0) } ?? 10_000)
            case ("POST", "/_mock/fcm/rules"):
                let request = try JSONDecoder().decode(FCMRuleRequest.self, from: Data(body))
                core.setFCMRule(forToken: request.token, request.rule)
                return ok
            case ("GET", "/_mock/fcm/requests"):
                return .respond(status: 200, body: try encode(core.fcmRequests()))
            case ("POST", "/_mock/fcm/access-token-lifetime"):
                let request = try JSONDecoder().decode(LifetimeRequest.self, from: Data(body))
                guard request.seconds >= 1 else { return badRequest("access-token-lifetime needs seconds ≥ 1") }
                core.setFCMAccessTokenLifetime(seconds: request.seconds)
                return ok
            case ("POST", "/_mock/fcm/expire-access-tokens"):
                core.expireFCMAccessTokens()
                return ok
            case (_, "/_mock/fcm/rules"), (_, "/_mock/fcm/requests"), (_, "/_mock/fcm/access-token-lifetime"),
                 (_, "/_mock/fcm/expire-access-tokens"):
                return .respond(status: 405, body: #"{"reason":"MethodNotAllowed"}"#)
            case (_, "/_mock/stats"), (_, "/_mock/requests"), (_, "/_mock/reset"), (_, "/_mock/rules"),
                 (_, "/_mock/failure-rate"), (_, "/_mock/answer-all"), (_, "/_mock/faults"),
                 (_, "/_mock/refuse"), (_, "/_mock/wait"):
                return .respond(status: 405, body: #"{"reason":"MethodNotAllowed"}"#)
            default:
                return .respond(status: 404, body: #"{"reason":"BadPath"}"#)
            }
        } catch {
            return badRequest("\(error)")
        }
    }

    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    private static func badRequest(_ message: String) -> Result {
        .respond(status: 400, body: #"{"reason":"BadControlRequest","message":""# + Responses.jsonEscaped(message) + #""}"#)
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
