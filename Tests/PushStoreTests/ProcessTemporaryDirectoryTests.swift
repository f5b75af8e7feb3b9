import ChildProcess
import Foundation
import Testing

/// The test processes' fixture directories: a run removes those of runs that are gone, never one
/// of a process still running.
@Suite struct ProcessTemporaryDirectoryTests {
    @Test func removesTheDirectoriesOfExitedProcessesOnly() async throws {
        let prefix = "pushq-sweep-test-\(UInt32.random(in: 0...UInt32.max))-"
        let exited = try ChildProcess("/bin/true", [])
        _ = await exited.wait()
        let gone = NSTemporaryDirectory() + prefix + String(exited.pid)
        let alive = NSTemporaryDirectory() + prefix + String(getppid())
        let notOurs = NSTemporaryDirectory() + prefix + "notapid"
        for dir in [gone, alive, notOurs] { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
        defer { for dir in [gone, alive, notOurs] { try? FileManager.default.removeItem(atPath: dir) } }

        let mine = ProcessTemporaryDirectory.path(prefix: prefix)

        #expect(mine == NSTemporaryDirectory() + prefix + String(getpid()))
        #expect(!FileManager.default.fileExists(atPath: gone))
        #expect(FileManager.default.fileExists(atPath: alive))
        #expect(FileManager.default.fileExists(atPath: notOurs))
    }
}
