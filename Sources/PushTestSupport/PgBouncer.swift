import ChildProcess
import Foundation

/// A throwaway PgBouncer (`scripts/pgbouncer-local`) on 127.0.0.1, in front of the test cluster.
public enum PgBouncer {
    /// Runs `body` with the URL of a PgBouncer in `mode` (`session`, `transaction` or
    /// `statement`) in front of the server and database of `backendURL`
    /// (`postgresql://user@host:port/db`), in a temp dir of its own; stops it afterwards.
    public static func with<T>(mode: String, backendURL: String, _ body: (_ url: String) async throws -> T) async throws -> T {
        let dir = NSTemporaryDirectory() + "pushq-pgbouncer-" + UUID().uuidString.prefix(8)
        var environment = ProcessInfo.processInfo.environment
        environment["PUSHQ_PGBOUNCER_DIR"] = dir
        let script = repositoryRoot.appendingPathComponent("scripts/pgbouncer-local").path
        let started = try ChildProcess.runBlocking(script, ["start", mode, backendURL], environment: environment)
        guard started.termination == .exit(0) else {
            throw TestSetupError("scripts/pgbouncer-local start \(mode) failed (\(started.termination)): \(started.stderr)")
        }
        let url = started.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        defer {
            _ = try? ChildProcess.runBlocking(script, ["stop"], environment: environment)
            try? FileManager.default.removeItem(atPath: dir)
        }
        return try await body(url)
    }
}
