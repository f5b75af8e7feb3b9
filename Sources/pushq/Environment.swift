#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import Synchronization

enum Environment {
    /// The value of environment variable `name`, if set.
    static func value(_ name: String) -> String? {
        guard let p = getenv(name) else { return nil }
        return String(cString: p)
    }

    /// The value of `name` when set and not empty (an empty `PUSHQ_*` variable counts as unset).
    static func nonEmpty(_ name: String) -> String? {
        guard let v = value(name), !v.isEmpty else { return nil }
        return v
    }
}

extension LoggingSystem {
    private static let bootstrapped = Mutex(false)

    /// Sends logs to standard error, once per process.
    static func bootstrapOnce() {
        bootstrapped.withLock { done in
            guard !done else { return }
            LoggingSystem.bootstrap(StreamLogHandler.standardError)
            done = true
        }
    }
}
