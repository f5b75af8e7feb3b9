import Foundation
import MockPush
import Testing

@Suite("Recording")
struct RecordingTests {
    @Test("body bytes are recorded exactly, with headers, connection and times")
    func bodyBytesExact() async throws {
        try await withMock { server, port async throws in
            let body = Array(" {\"aps\":{\"alert\":\"h\u{e9}llo \u{1F600}\"},\n\t\"k\":[1,2,3]} ".utf8)
            var request = TestRequest.valid(jwt: try Fixtures.jwt(), apnsID: "5b1d2c3e-4f50-4a6b-8c7d-9e0f1a2b3c4d")
            request.body = body
            request.set("apns-collapse-id", "group-1")
            let before = MockClock.wallNanoseconds()
            #expect(try Curl.one(port: port, request).status == 200)
            let record = try #require(server.requests().first)
            #expect(record.body == body)
            #expect(record.bodyLength == body.count)
            #expect(record.header("apns-collapse-id") == "group-1")
            #expect(record.apnsID == "5b1d2c3e-4f50-4a6b-8c7d-9e0f1a2b3c4d")
            #expect(record.connectionID == 1)
            #expect(record.streamID == 1)
            #expect(record.status == 200)
            #expect(record.receivedWallNanoseconds >= before)
            #expect(record.receivedMonotonicNanoseconds > 0)
        }
    }

    @Test("bodies can be left out; counters stay")
    func noBodies() async throws {
        try await withMock({ $0.recordBodies = false }) { server, port async throws in
            #expect(try Curl.one(port: port, .valid(jwt: try Fixtures.jwt())).status == 200)
            let record = try #require(server.requests().first)
            #expect(record.body == nil)
            #expect(record.bodyLength == #"{"aps":{"alert":"hello"}}"#.utf8.count)
        }
    }

    @Test("recording off keeps counting")
    func recordingOff() async throws {
        try await withMock({ $0.recordRequests = false }) { server, port async throws in
            #expect(try Curl.one(port: port, .valid(jwt: try Fixtures.jwt())).status == 200)
            #expect(server.requests().isEmpty)
            #expect(server.stats().requests == 1)
        }
    }

    @Test("waitForRequests returns when the count is reached, throws on timeout")
    func waitForRequests() async throws {
        try await withMock { server, port async throws in
            let jwt = try Fixtures.jwt()
            async let sent = Task.detached { try Curl.run(port: port, [.valid(jwt: jwt), .valid(jwt: jwt)]) }.value
            try await server.waitForRequests(count: 2, timeout: .seconds(20))
            #expect(server.stats().requests >= 2)
            _ = try await sent
            await #expect(throws: MockPushError.self) {
                try await server.waitForRequests(count: 3, timeout: .milliseconds(100))
            }
        }
    }

    @Test("waitUntil wakes on connection events, not only requests")
    func waitUntilConnectionsClosed() async throws {
        try await withMock { server, port async throws in
            let jwt = try Fixtures.jwt()
            _ = try Curl.run(port: port, [.valid(jwt: jwt)])
            _ = try Curl.run(port: port, [.valid(jwt: jwt)])
            // Both curl processes have exited; their connections close on the mock's side
            // a moment later, which wakes the waiter.
            try await server.waitUntil(timeout: .seconds(20), "2 closed connections") {
                $0.connectionsOpened == 2 && $0.connectionsOpen == 0
            }
            #expect(server.stats().connectionsOpen == 0)
            await #expect(throws: MockPushError.self) {
                try await server.waitUntil(timeout: .milliseconds(100)) { $0.connectionsOpened >= 3 }
            }
        }
    }
}
