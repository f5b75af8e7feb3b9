import ChildProcess
import Foundation
import PGClient
import PushTestSupport

/// `pg_dump --schema-only` of a database, by the pg_dump of the server's own major version
/// (`PUSHQ_PG=N scripts/pg-local bindir`: Debian's, or the PyPI build `make test-pg18` runs),
/// with only what differs between two dumps of one schema taken out:
///   * comment lines (`--`): the header names pg_dump's and the server's versions, and each
///     object's comment its owner; the schema's own COMMENT ON statements are not comments and stay;
///   * `\restrict` and `\unrestrict` lines: a random key per dump (PostgreSQL 15.14 and later);
///   * `SET` and `SELECT pg_catalog.set_config` lines: the dump's session settings;
///   * runs of blank lines (left where the comments were).
/// Nothing is reordered: pg_dump writes objects in an order of its own (kind, then name), the
/// same for the same schema however it was built.
enum SchemaDump {
    static func of(_ url: String) async throws -> String {
        let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
        let versionNumber = try await c.query("SHOW server_version_num").decode(Int.self, 0, 0) ?? 0
        await c.close()
        var environment = ProcessInfo.processInfo.environment
        environment["PUSHQ_PG"] = String(versionNumber / 10000)
        let bindir = try await ChildProcess.run(repositoryRoot.appendingPathComponent("scripts/pg-local").path, ["bindir"],
                                                environment: environment)
        guard bindir.termination == .exit(0) else {
            throw TestSetupError("scripts/pg-local bindir (PUSHQ_PG=\(versionNumber / 10000)) failed: \(bindir.stderr)")
        }
        let pgDump = bindir.stdout.trimmingCharacters(in: .whitespacesAndNewlines) + "/pg_dump"
        let dump = try await ChildProcess.run(pgDump, ["--schema-only", "--dbname", url])
        guard dump.termination == .exit(0) else { throw TestSetupError("\(pgDump) --schema-only failed: \(dump.stderr)") }
        return normalised(dump.stdout)
    }

    static func normalised(_ dump: String) -> String {
        var lines: [Substring] = []
        for line in dump.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("--") || line.hasPrefix("\\restrict") || line.hasPrefix("\\unrestrict") || line.hasPrefix("SET ")
                || line.hasPrefix("SELECT pg_catalog.set_config(") { continue }
            if line.isEmpty, lines.last?.isEmpty ?? true { continue }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// The first line where `a` and `b` differ, with its neighbours, for a failed comparison.
    static func firstDifference(_ a: String, _ b: String) -> String {
        let x = a.split(separator: "\n", omittingEmptySubsequences: false), y = b.split(separator: "\n", omittingEmptySubsequences: false)
        guard let i = zip(x, y).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset ?? (x.count == y.count ? nil : min(x.count, y.count))
        else { return "no difference" }
        let near = { (l: [Substring]) in l[max(0, i - 3)..<min(l.count, i + 3)].joined(separator: "\n") }
        return "line \(i + 1):\n\(near(x))\n--- versus ---\n\(near(y))"
    }
}
