import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A temporary directory of this test process's own, `<temporary>/<prefix><pid>`, for fixtures.
///
/// A test process cannot remove its fixtures at exit (Swift Testing has no hook for it), so each
/// call removes those of earlier processes that are gone; directories of a live process, another
/// `swift test` running beside this one, are left alone. Used by every test target's fixtures,
/// the mock's own tests included (which is why it lives here, beside ``ChildProcess``, and not in
/// PushTestSupport).
public enum ProcessTemporaryDirectory {
    /// The path of this process's directory for `prefix` (not created), after sweeping the stale ones.
    public static func path(prefix: String) -> String {
        sweep(prefix: prefix)
        return NSTemporaryDirectory() + prefix + String(getpid())
    }

    /// Removes `<prefix><pid>` entries of the temporary directory whose process no longer exists.
    private static func sweep(prefix: String) {
        let temporary = NSTemporaryDirectory()
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? [] where entry.hasPrefix(prefix) {
            guard let pid = Int32(entry.dropFirst(prefix.count)), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: temporary + entry)
        }
    }
}
