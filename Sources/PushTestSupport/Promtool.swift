import ChildProcess
import Foundation

/// Prometheus' `promtool` (Debian package `prometheus`, installed by scripts/install-deps).
public enum Promtool {
    /// `promtool` on the PATH, if any.
    public static var path: String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(dir)/promtool"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs `promtool arguments…`, with `input` on standard input when given.
    ///
    /// - Returns: whether it exited 0, and what it printed (standard output and error).
    /// - Throws: when promtool is not installed (run scripts/install-deps) or cannot start.
    public static func run(_ arguments: [String], input: String? = nil) throws -> (ok: Bool, output: String) {
        guard let promtool = path else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "promtool not found: run scripts/install-deps (Debian package prometheus)"])
        }
        var command = ([promtool] + arguments).map(shellQuoted).joined(separator: " ")
        var inputFile: String?
        if let input {
            let file = NSTemporaryDirectory() + "promtool-input-\(UUID().uuidString)"
            try input.write(toFile: file, atomically: true, encoding: .utf8)
            command += " < " + shellQuoted(file)
            inputFile = file
        }
        defer { if let inputFile { unlink(inputFile) } }
        let result = try ChildProcess.runBlocking("/bin/sh", ["-c", command])
        return (result.termination == .exit(0), result.stdout + result.stderr)
    }

    static func shellQuoted(_ s: String) -> String {
        "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
