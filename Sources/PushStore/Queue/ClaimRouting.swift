import PushCore
import PGClient

/// Which rows a worker may claim by credential: each provider's rows of its credentials of that
/// provider (`"default"` names the rows whose `credential` is NULL, per provider). A probe
/// (`only`) claims its one endpoint's credential of its provider.
///
/// Two parameters per provider, in ``Provider/allCases`` order: its names, and whether its
/// `default` is one of them. Bound by value, a provider with no names folds to false at plan
/// time and the claim walks notifications_due as before.
struct ClaimRouting {
    /// The names of each provider's credentials; a provider without an entry has none.
    var names: [Provider: [String]]

    init(_ names: [Provider: [String]], only: Endpoint?) {
        if let only {
            self.names = [only.provider: [only.credential]]
        } else {
            self.names = names
        }
    }

    /// How many parameters ``sql(from:)`` takes.
    static let parameterCount = 2 * Provider.allCases.count

    /// A worker with the `default` credential claims the rows whose `credential` is NULL and
    /// those that name `'default'` literally (`pushq send --credential default` writes that):
    /// both are the default credential everywhere else too (status, holds, metrics).
    var parameters: [(any PGParameter)?] {
        Provider.allCases.flatMap { provider -> [(any PGParameter)?] in
            let names = names[provider] ?? []
            return [names, names.contains("default")]
        }
    }

    /// The condition over `n`, its parameters numbered from `first`.
    static func sql(from first: Int) -> String {
        sql { first + 2 * $0 }
    }

    /// The condition over `n`, provider `i`'s two parameters (in ``Provider/allCases`` order)
    /// numbered from `number(i)`.
    static func sql(number: (Int) -> Int) -> String {
        let branches = Provider.allCases.enumerated().map { i, provider in
            let p = number(i)
            return "(n.provider = '\(provider.rawValue)' AND (n.credential = ANY($\(p)::text[]) OR (n.credential IS NULL AND $\(p + 1))))"
        }
        return "AND (" + branches.joined(separator: "\n            OR ") + ")"
    }
}
