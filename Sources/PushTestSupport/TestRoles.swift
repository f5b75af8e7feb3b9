import Foundation
import PushStore
import PGClient

/// PostgreSQL roles of the test cluster for tests that run pushq as a role other than the owner.
///
/// Roles belong to the cluster, not to a database: each gets a random suffix, so tests running
/// side by side never share one. Call ``with(_:_:)`` outside ``TestDatabase/with(migrated:_:)``:
/// the database (and with it every privilege granted on its objects) is dropped first, then the
/// roles.
public enum TestRoles {
    /// Creates one LOGIN role per prefix (`prefix_<8 hex digits>`: no superuser, cannot create
    /// databases or roles, owns nothing) for the duration of `body`, then drops them.
    public static func with<T>(_ prefixes: [String], _ body: (_ roles: [String]) async throws -> T) async throws -> T {
        let suffix = UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(8).lowercased()
        let roles = prefixes.map { "\($0)_\(suffix)" }
        let admin = try await PGConnection.connect(try TestDatabase.serverURL, logger: TestDatabase.logger)
        for role in roles {
            try await admin.execute("CREATE ROLE \(role) LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT")
        }
        func drop() async {
            for role in roles { try? await admin.execute("DROP ROLE IF EXISTS \(role)") }
            await admin.close()
        }
        do {
            let value = try await body(roles)
            await drop()
            return value
        } catch {
            await drop()
            throw error
        }
    }

    /// `url` with `role` as its user and no password (the test cluster trusts 127.0.0.1).
    public static func url(_ url: String, user role: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        components.user = role
        components.password = nil
        return components.string ?? url
    }
}
