import ChildProcess
import Foundation

/// A headless Chromium driven over the DevTools protocol by `scripts/browser-steps` (Debian
/// package `chromium`, installed by scripts/install-deps): the dashboard's browser test.
public enum Browser {
    /// One thing to do in the page.
    public enum Step: Sendable {
        /// Load a URL and wait for its document.
        case navigate(String)
        /// Evaluate a JavaScript expression; its value is the step's result.
        case eval(String)
        /// Evaluate an expression until it is truthy (a condition awaited, never a fixed sleep).
        case waitFor(String, timeoutSeconds: Double = 15)
        /// A PNG of the page at this size.
        case screenshot(path: String, width: Int, height: Int)
        /// One DevTools protocol command to the page (`Browser.grantPermissions`,
        /// `Page.addScriptToEvaluateOnNewDocument`…); its result is the step's, as JSON.
        case cdp(String, [String: any Sendable] = [:])
        /// Text delivered to the service worker registered for `scope` (a URL), as its push
        /// service would after decryption; the step's result is its registration id.
        case push(String, scope: String)

        var json: [String: Any] {
            switch self {
            case .navigate(let url): return ["navigate": url]
            case .eval(let js): return ["eval": js]
            case .waitFor(let js, let timeout): return ["waitFor": js, "timeout": timeout]
            case .screenshot(let path, let width, let height): return ["screenshot": path, "width": width, "height": height]
            case .cdp(let method, let params): return ["cdp": method, "params": params]
            case .push(let data, let scope): return ["push": data, "scope": scope]
            }
        }
    }

    /// `chromium` on the PATH, if any.
    public static var chromiumPath: String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(dir)/chromium"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs `steps` in one fresh browser profile, in order.
    ///
    /// - Returns: each step's result as text (a string as is, a number or boolean spelled out, nil for null).
    /// - Throws: when chromium is missing, or a step failed (the error names it and what came before).
    public static func run(_ steps: [Step]) async throws -> [String?] {
        guard chromiumPath != nil else {
            throw TestSetupError("chromium not found: run scripts/install-deps (Debian package chromium)")
        }
        let file = NSTemporaryDirectory() + "browser-steps-\(UUID().uuidString).json"
        try JSONSerialization.data(withJSONObject: steps.map(\.json)).write(to: URL(fileURLWithPath: file))
        defer { unlink(file) }
        let result = try await ChildProcess.run(repositoryRoot.appendingPathComponent("scripts/browser-steps").path, [file])
        guard let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
              let values = object["results"] as? [Any] else {
            throw TestSetupError("scripts/browser-steps printed no results (\(result.termination)): \(result.stdout) \(result.stderr)")
        }
        let texts = values.map(Self.text)
        if let error = object["error"] as? String {
            throw TestSetupError("browser step \(object["step"] ?? "?") failed: \(error); results before it: \(texts)")
        }
        return texts
    }

    private static func text(_ value: Any) -> String? {
        switch value {
        case is NSNull: return nil
        case let s as String: return s
        case let object as [String: Any]:
            return (try? JSONSerialization.data(withJSONObject: object)).map { String(decoding: $0, as: UTF8.self) }
        default: return "\(value)"
        }
    }
}
