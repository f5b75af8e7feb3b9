import ChildProcess
import Foundation
import MockPush
import Testing

/// Many concurrent streams on a few connections, driven by h2load.
@Suite("Concurrent streams")
struct ConcurrencyTests {
    @Test("1000 requests over 2 connections, 50 streams each: every one answered and counted")
    func manyStreams() async throws {
        try await withMock({ $0.recordRequests = false }) { server, port async throws in
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("h2load-\(UUID().uuidString).json")
            try Data(#"{"aps":{"alert":"load"}}"#.utf8).write(to: work)
            defer { try? FileManager.default.removeItem(at: work) }
            let result = try await ChildProcess.run("/usr/bin/h2load", [
                "-n", "1000", "-c", "2", "-m", "50",
                "--header=authorization: bearer " + (try Fixtures.jwt()),
                "--header=apns-topic: " + Fixtures.bundleID,
                "--header=apns-push-type: alert",
                "-d", work.path,
                "https://127.0.0.1:\(port)/3/device/" + Fixtures.token,
            ])
            let text = result.stdout + result.stderr
            #expect(text.contains("1000 succeeded, 0 failed, 0 errored, 0 timeout"), "\(text)")
            #expect(text.contains("status codes: 1000 2xx"), "\(text)")
            let stats = server.stats()
            #expect(stats.requests == 1000)
            #expect(stats.count(status: 200) == 1000)
            #expect(stats.connectionsOpened == 2)
            #expect(stats.requestsByConnection.values.sorted() == [500, 500])
        }
    }
}
