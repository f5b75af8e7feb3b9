import ChildProcess
import Foundation

/// A throwaway PgBouncer (`scripts/pgbouncer-local`) on 127.0.0.1, in front of the test cluster.
public enum PgBouncer {
    /// Runs `body` with the URL of a PgBouncer in `mode` (`session`, `transaction` or
    /// `statement`) in front of the server and database of `backendURL`
    /// (`postgresql://user@host:port/db`), in a temp dir of its own; stops it afterwards.
    /// `settings`: pgbouncer.ini's `key = value` lines replaced (or added), then re-read (SIGHUP:
    /// PgBouncer logs "got SIGHUP, re-reading config" in the callback that re-reads it, before it
    /// serves any client again) before `body` runs.
    public static func with<T>(mode: String, backendURL: String, settings: [(String, String)] = [],
                               _ body: (_ url: String) async throws -> T) async throws -> T {
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
        if !settings.isEmpty { try await reconfigure(dir: dir, settings) }
        return try await body(url)
    }

    /// Changes the pgbouncer.ini in `dir` and waits until PgBouncer has re-read it.
    private static func reconfigure(dir: String, _ settings: [(String, String)]) async throws {
        let ini = dir + "/pgbouncer.ini", log = dir + "/pgbouncer.log"
        var lines = try String(contentsOfFile: ini, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (key, value) in settings {
            if let i = lines.firstIndex(where: { $0.hasPrefix(key + " =") }) {
                lines[i] = "\(key) = \(value)"
            } else {
                lines.insert("\(key) = \(value)", at: lines.count - 1)
            }
        }
        // Written in place: the file keeps its owner (PgBouncer runs as postgres when the tests run as root).
        try lines.joined(separator: "\n").write(toFile: ini, atomically: false, encoding: .utf8)
        guard let pid = Int32(try String(contentsOfFile: dir + "/pgbouncer.pid", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)),
              kill(pid, SIGHUP) == 0 else {
            throw TestSetupError("could not signal PgBouncer to re-read \(ini)")
        }
        // Its log line, polled: up to 10 s.
        for _ in 0..<400 {
            if (try? String(contentsOfFile: log, encoding: .utf8))?.contains("got SIGHUP, re-reading config") == true { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw TestSetupError("PgBouncer did not re-read its configuration: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "no log")")
    }
}
