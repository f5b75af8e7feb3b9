import Foundation

/// Helpers for libpq connection strings.
public enum PGURL {
    /// The same connection string pointing at database `name`.
    ///
    /// Works for URIs (`postgresql://user@host:port/db?opts`) and for `key=value`
    /// conninfo strings (a later `dbname=` overrides an earlier one).
    public static func withDatabase(_ url: String, _ name: String) -> String {
        guard url.hasPrefix("postgresql://") || url.hasPrefix("postgres://") else {
            return url + " dbname=\(name)"
        }
        let schemeEnd = url.range(of: "://")!.upperBound
        let rest = url[schemeEnd...]
        let query = rest.firstIndex(of: "?").map { String(rest[$0...]) } ?? ""
        let beforeQuery = rest.firstIndex(of: "?").map { rest[..<$0] } ?? rest
        let authority = beforeQuery.firstIndex(of: "/").map { beforeQuery[..<$0] } ?? beforeQuery
        return url[..<schemeEnd] + authority + "/" + name + query
    }
}
