#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A child process started with `posix_spawn` and reaped with a blocking `waitpid` on a
/// thread of its own, never on Swift's cooperative pool.
///
/// Foundation's `Process` on Linux learns of a child's exit through a SIGCHLD handler and a
/// run-loop thread; with many processes started from parallel tests that thread sometimes
/// never sees the exit, and `waitUntilExit()` hangs on a zombie. A `waitpid` for the one pid
/// cannot miss it. Used by tests, benchmarks and fixture generation.
///
/// `@unchecked Sendable`: `pid` and `stdoutPipe` are set once in `init`; the exit status is
/// guarded by `lock`.
public final class ChildProcess: @unchecked Sendable {
    /// Where a child's standard output or error goes.
    public enum Output: Sendable {
        /// `/dev/null`.
        case null
        /// Appended to this file (created if missing).
        case file(String)
        /// A pipe the parent reads from ``stdoutPipe`` (standard output only).
        case pipe
        /// The parent's own stream.
        case inherit
    }

    /// How a child ended.
    public enum Termination: Sendable, Hashable, CustomStringConvertible {
        case exit(Int32)
        case signal(Int32)
        public var description: String {
            switch self {
            case .exit(let code): return "exit \(code)"
            case .signal(let s): return "signal \(s)"
            }
        }
    }

    public let pid: pid_t
    /// The read end of the child's standard output, with ``Output/pipe``.
    public let stdoutPipe: FileHandle?
    private let lock = NSLock()
    private var termination: Termination?

    /// Starts `executable` with `arguments`; standard input is `/dev/null`.
    ///
    /// - Parameters:
    ///   - environment: the child's whole environment; nil inherits this process's.
    /// - Throws: ``ChildProcessError`` with `errno`'s text when the spawn fails.
    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                stdout: Output = .inherit, stderr: Output = .inherit) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var pipeFDs: [Int32] = [-1, -1]
        func redirect(_ output: Output, _ fd: Int32) throws {
            switch output {
            case .inherit: break
            case .null: posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_WRONLY, 0)
            case .file(let path): posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            case .pipe:
                guard pipe(&pipeFDs) == 0 else { throw ChildProcessError("pipe", errno) }
                // Close-on-exec: only the dup2'd copy reaches the child (other children never inherit it).
                _ = fcntl(pipeFDs[0], F_SETFD, FD_CLOEXEC)
                _ = fcntl(pipeFDs[1], F_SETFD, FD_CLOEXEC)
                posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], fd)
            }
        }
        try redirect(stdout, 1)
        try redirect(stderr == .pipe ? .inherit : stderr, 2)

        // The child starts with no signal blocked and the usual ones at their default action: a
        // spawn inherits the calling thread's mask, and the threads of a Swift process block most
        // signals (a PgBouncer started so ignored SIGHUP and SIGTERM: its reload never came, its
        // stop waited for SIGKILL).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGHUP, SIGINT, SIGTERM, SIGPIPE, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let env = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let argv = [executable] + arguments
        var spawned: pid_t = 0
        let rc = withCStringArray(argv) { cArgs in
            withCStringArray(env) { cEnv in
                posix_spawn(&spawned, executable, &actions, &attributes, cArgs, cEnv)
            }
        }
        if pipeFDs[1] >= 0 { close(pipeFDs[1]) }
        guard rc == 0 else {
            if pipeFDs[0] >= 0 { close(pipeFDs[0]) }
            throw ChildProcessError("posix_spawn \(executable)", rc)
        }
        pid = spawned
        stdoutPipe = pipeFDs[0] >= 0 ? FileHandle(fileDescriptor: pipeFDs[0], closeOnDealloc: true) : nil
    }

    /// Sends `signal` (SIGTERM by default) unless the child was already reaped.
    public func kill(_ signal: Int32 = SIGTERM) {
        lock.lock()
        defer { lock.unlock() }
        if termination == nil { _ = Glibc.kill(pid, signal) }
    }

    /// Blocks the calling thread until the child ends.
    @discardableResult
    public func waitBlocking() -> Termination {
        lock.lock()
        if let termination { lock.unlock(); return termination }
        lock.unlock()
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let result: Termination = (status & 0x7f) == 0 ? .exit((status >> 8) & 0xff) : .signal(status & 0x7f)
        lock.lock()
        termination = result
        lock.unlock()
        return result
    }

    /// Waits for the child to end, on a thread of its own.
    @discardableResult
    public func wait() async -> Termination {
        await withCheckedContinuation { (continuation: CheckedContinuation<Termination, Never>) in
            let thread = Thread { continuation.resume(returning: self.waitBlocking()) }
            thread.start()
        }
    }

    /// Whether the child has been reaped.
    public var hasExited: Bool {
        lock.lock()
        defer { lock.unlock() }
        return termination != nil
    }

    /// Runs `executable` to completion and returns its status, standard output and standard error.
    ///
    /// Output goes through temporary files, so a child that writes a lot cannot block on a full pipe.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) async throws
        -> (termination: Termination, stdout: String, stderr: String)
    {
        let base = NSTemporaryDirectory() + "childprocess-\(UUID().uuidString)"
        defer { unlink(base + ".out"); unlink(base + ".err") }
        let child = try ChildProcess(executable, arguments, environment: environment,
                                     stdout: .file(base + ".out"), stderr: .file(base + ".err"))
        let termination = await child.wait()
        let out = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        return (termination, out, err)
    }

    /// ``run(_:_:environment:)`` blocking the calling thread (for synchronous callers).
    public static func runBlocking(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws
        -> (termination: Termination, stdout: String, stderr: String)
    {
        let base = NSTemporaryDirectory() + "childprocess-\(UUID().uuidString)"
        defer { unlink(base + ".out"); unlink(base + ".err") }
        let child = try ChildProcess(executable, arguments, environment: environment,
                                     stdout: .file(base + ".out"), stderr: .file(base + ".err"))
        let termination = child.waitBlocking()
        let out = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        return (termination, out, err)
    }

    /// Reads one line (without the newline) from ``stdoutPipe``, blocking; nil at end of file.
    public func readLine() -> String? {
        guard let handle = stdoutPipe else { return nil }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = read(handle.fileDescriptor, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }
}

extension ChildProcess.Output: Equatable {
    public static func == (a: Self, b: Self) -> Bool {
        switch (a, b) {
        case (.null, .null), (.pipe, .pipe), (.inherit, .inherit): return true
        case (.file(let x), .file(let y)): return x == y
        default: return false
        }
    }
}

/// A spawn that failed, with the C library's message.
public struct ChildProcessError: Error, CustomStringConvertible {
    public var description: String
    init(_ what: String, _ code: Int32) { description = "\(what) failed: \(String(cString: strerror(code)))" }
}

/// Calls `body` with a NULL-terminated `char *[]` of `strings`, kept alive for the call.
private func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    let pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
    defer { for p in pointers { free(p) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
