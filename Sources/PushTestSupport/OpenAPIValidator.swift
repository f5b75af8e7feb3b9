import ChildProcess
import Foundation

/// `openapi-spec-validator` (PyPI package openapi-spec-validator, installed by scripts/install-deps).
public enum OpenAPIValidator {
    /// The validator on the PATH.
    ///
    /// - Throws: when it is not installed (run scripts/install-deps).
    public static func path() throws -> String {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(dir)/openapi-spec-validator"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw TestSetupError("openapi-spec-validator not found: run scripts/install-deps (PyPI package openapi-spec-validator)")
    }
}
