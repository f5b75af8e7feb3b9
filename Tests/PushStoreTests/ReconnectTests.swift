import Foundation
import PushStore
import Testing
import PGClient

@Suite("Reconnect")
struct ReconnectTests {
    @Test("a query after a server restart reconnects, and LISTEN is renewed")
    func reconnectAfterRestart() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushq-restart-\(UUID().uuidString.prefix(8))").path
        let url = try pgLocal("start", dir: dir)
        defer { _ = try? pgLocal("destroy", dir: dir) }

        let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
        try await c.listen("after_restart")
        let pidBefore = await c.backendPID
        #expect(try await c.query("SELECT 1").decode(Int.self, 0, 0) == 1)

        #expect(try pgLocal("restart", dir: dir) == url)

        // The first statement after the restart succeeds on a new session.
        #expect(try await c.query("SELECT 2").decode(Int.self, 0, 0) == 2)
        #expect(await c.backendPID != pidBefore)

        // LISTEN was re-issued on the new session.
        let sender = try await PGConnection.connect(url, logger: TestDatabase.logger)
        try await sender.query("SELECT pg_notify('after_restart', 'x')")
        var received: [PGNotification] = []
        let deadline = ContinuousClock.now + .seconds(10)
        while received.isEmpty && ContinuousClock.now < deadline {
            received = try await c.waitForNotifications(timeout: .seconds(5))
        }
        #expect(received.map(\.payload) == ["x"])

        // While the server is down, a query fails with a connection error; once it is back, it works.
        try pgLocal("stop", dir: dir)
        let down = await #expect(throws: PGError.self) { try await c.query("SELECT 3") }
        #expect(down?.code == .connectionLost)
        _ = try pgLocal("start", dir: dir)
        #expect(try await c.query("SELECT 4").decode(Int.self, 0, 0) == 4)
        await c.close()
        await sender.close()
    }
}
