/// One numbered schema change, embedded in the binary from `migrations/NNN_name.sql`.
public struct Migration: Sendable, Equatable {
    /// Applied in increasing order; recorded in `pushq.schema_migrations`.
    public var version: Int
    public var name: String
    public var sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }
}

extension Migration {
    /// Every migration of this release, in order. A new file in `migrations/` gets a line here
    /// (a test checks that the folder and this list agree).
    public static let all: [Migration] = [
        Migration(version: 1, name: "schema", sql: String(decoding: PackageResources._01_schema_sql, as: UTF8.self)),
    ]
}
