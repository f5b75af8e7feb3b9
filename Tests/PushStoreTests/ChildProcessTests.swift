import ChildProcess
import Foundation
import Testing

/// Children started by ``ChildProcess``: what they inherit of this process's signals.
@Suite("Child processes")
struct ChildProcessTests {
    /// A line of the child's /proc/self/status, its hexadecimal mask as a number.
    static func mask(_ lines: [String], _ name: String) -> UInt64? {
        lines.first { $0.hasPrefix(name + ":") }.flatMap { UInt64($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16) }
    }

    /// a child starts with no signal blocked and SIGHUP/SIGTERM/SIGINT at their default action, whatever the thread
    /// that spawned it blocks (a PgBouncer spawned from a test ignored its reload and stop signals)
    @Test("a child starts with no signal blocked, and SIGHUP, SIGINT and SIGTERM not ignored")
    func signals() async throws {
        // Spawned from a thread that blocks every signal it can, as the threads of a Swift
        // process's pools do (PgBouncer's SigBlk was fffffffe3bfaea27).
        let child = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ChildProcess, any Error>) in
            Thread {
                var all = sigset_t()
                sigfillset(&all)
                pthread_sigmask(SIG_BLOCK, &all, nil)
                continuation.resume(with: Result { try ChildProcess("/bin/grep", ["-E", "^Sig(Blk|Ign):", "/proc/self/status"], stdout: .pipe) })
            }.start()
        }
        var lines: [String] = []
        while let line = child.readLine() { lines.append(line) }
        _ = await child.wait()
        #expect(Self.mask(lines, "SigBlk") == 0, "\(lines)")
        let ignored = try #require(Self.mask(lines, "SigIgn"), "\(lines)")
        for signal in [SIGHUP, SIGINT, SIGTERM] {
            #expect(ignored & (1 << UInt64(signal - 1)) == 0, "signal \(signal) ignored: \(lines)")
        }
    }
}
