import PushCore

/// How each provider's tokens are keyed in `pushq.devices` (invalid tokens) and
/// `pushq.token_throttles` (throttled tokens): one entry per provider, read by the write-back
/// (``TokenInvalidation``, ``TokenThrottle``) and by the claim's checks of row `n`
/// (``ClaimStatement``), so that both compute the same key.
struct TokenKey: Sendable {
    /// An environment column's value for a token.
    enum Environment: Sendable {
        /// The row's APNs environment (`$4`, the worker's default, when NULL).
        case row
        /// Always this one.
        case fixed(String)

        /// As SQL over row `n`.
        var sql: String {
            switch self {
            case .row: return "COALESCE(n.environment, $4)"
            case .fixed(let name): return "'\(name)'"
            }
        }

        /// For a token of `environment`.
        func value(_ environment: APNsEnvironment) -> String {
            switch self {
            case .row: return environment.rawValue
            case .fixed(let name): return name
            }
        }
    }

    /// The token as the tables keep it: APNs tokens are hex in any case, kept lower-case; FCM
    /// tokens and Web Push endpoints are case-sensitive (an endpoint URL's path), kept as given.
    let lowercased: Bool
    /// Its tokens' environment in `pushq.devices`: APNs rows' own; FCM's and Web Push's always
    /// `production` (`devices_fcm_environment_default`, `devices_webpush_environment_default`).
    let registry: Environment
    /// The `environment` column of its throttles: APNs rows' environment; another provider's
    /// name (an endpoint cannot collide with an APNs token of the same text). Nil: its service
    /// never throttles a token (FCM's 429, ``Disposition/throttlesToken``), and the claim does not
    /// check its rows for one.
    let throttle: Environment?

    static let byProvider: [Provider: TokenKey] = [
        .apns: TokenKey(lowercased: true, registry: .row, throttle: .row),
        .fcm: TokenKey(lowercased: false, registry: .fixed("production"), throttle: nil),
        .webpush: TokenKey(lowercased: false, registry: .fixed("production"), throttle: .fixed("webpush")),
    ]

    static func of(_ provider: Provider) -> TokenKey {
        guard let key = byProvider[provider] else { preconditionFailure("no TokenKey for provider \(provider.rawValue)") }
        return key
    }

    /// `part` of row `n`'s provider's entry, as one SQL expression over `n` (NULL for a provider
    /// without one).
    static func sql(_ part: (TokenKey) -> String?) -> String {
        let branches = Provider.allCases.compactMap { p in part(of(p)).map { "WHEN '\(p.rawValue)' THEN \($0)" } }
        return "CASE n.provider " + branches.joined(separator: " ") + " END"
    }

    /// Row `n`'s token as its provider keys it.
    static let tokenSQL = sql { $0.lowercased ? "lower(n.device_token)" : "n.device_token" }

    /// The providers whose rows the claim checks for a throttle, as an SQL list.
    static let throttlingProvidersSQL = Provider.allCases.filter { of($0).throttle != nil }
        .map { "'\($0.rawValue)'" }.joined(separator: ", ")
}
