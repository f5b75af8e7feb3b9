import Foundation
import Logging
import MockPush
import Testing

/// An outage: the port refuses connections, open connections close, then the same port serves again.
@Suite("Refusing connections")
struct RefuseTests {
    @Test("refuse: connects are refused and open connections close; accept: the same port serves again")
    func refuseThenAccept() async throws {
        try await withMock { server, port async throws in
            let held = RawTCP(port: port)
            #expect(held.result == .connected)
            try await server.waitUntil(timeout: .seconds(10), "the held connection") { $0.connectionsOpen == 1 }

            try await server.refuseConnections()
            // The port stays the mock's while it refuses: no other server (the suite binds
            // hundreds to port 0) can be given it, so the connect below is refused by this host.
            #expect(!RawTCP.bindable(port: port), "the refusing mock must keep its port")
            #expect(RawTCP(port: port).result == .refused)
            #expect(held.waitForClose(), "the open connection should be closed")
            try await server.waitUntil(timeout: .seconds(10), "no open connection") { $0.connectionsOpen == 0 }
            let refused = try Curl.run(port: port, [.valid(jwt: try Fixtures.jwt())], maxTime: 5)
            #expect(refused.exitCode == 7, "curl should fail to connect: \(refused.stderr)")
            var stats = server.stats()
            #expect(!stats.listening)
            #expect(stats.refusals == 1)
            #expect(stats.connectionsClosedByMock == 1)
            #expect(stats.requests == 0)

            try await server.acceptConnections()
            #expect(server.port == port)
            #expect(try Curl.one(port: port, .valid(jwt: try Fixtures.jwt())).status == 200)
            stats = server.stats()
            #expect(stats.listening)
            #expect(stats.connectionsOpened == 2)
        }
    }

    @Test("an HTTP/2 client's connection closes mid-conversation; its next request cannot connect")
    func clientSeesClose() async throws {
        try await withMock { server, port async throws in
            let jwt = try Fixtures.jwt()
            // One curl, one connection: request, refusal for 60 s (ordered over the same
            // connection, which it closes), request.
            let result = try Curl.run(port: port, [
                .valid(jwt: jwt),
                ControlAPITests.control("POST", "/_mock/refuse", body: #"{"milliseconds":60000}"#),
                .valid(jwt: jwt),
            ], maxTime: 5)
            #expect(result.responses.map(\.status) == [200, 200, 0], "\(result.stderr)")
            #expect(result.exitCode != 0)
            let stats = server.stats()
            #expect(stats.requests == 1)
            #expect(stats.connectionsOpened == 1)
            #expect(stats.refusals == 1)
            #expect(RawTCP(port: port).result == .refused)
            try await server.acceptConnections()
            #expect(try Curl.one(port: port, .valid(jwt: jwt)).status == 200)
        }
    }

    @Test("POST /_mock/refuse reopens the port by itself after the given time")
    func timedControlRefusal() async throws {
        try await withMock { server, port async throws in
            let refuse = try Curl.one(port: port, ControlAPITests.control("POST", "/_mock/refuse", body: #"{"milliseconds":300}"#))
            #expect(refuse.status == 200)
            #expect(refuse.json?["ok"] as? Bool == true)
            try await server.waitUntil(timeout: .seconds(10), "the refusal") { $0.refusals == 1 }
            try await server.waitUntil(timeout: .seconds(10), "the reopen") { $0.listening }
            #expect(try Curl.one(port: port, .valid(jwt: try Fixtures.jwt())).status == 200)
        }
    }

    @Test("refuseConnections(reopenAfter:) refuses, then listens again by itself")
    func timedRefusal() async throws {
        try await withMock { server, port async throws in
            let delay = Duration.seconds(2)
            let before = ContinuousClock.now
            try await server.refuseConnections(reopenAfter: delay)
            let probe = RawTCP(port: port).result
            let served = server.stats().requests
            let request = try Curl.run(port: port, [.valid(jwt: try Fixtures.jwt())])
            // The reopen cannot come before `before + delay`. A loaded machine may resume
            // this task later than that (blocking curl calls hold the pool's threads); then
            // the probes prove nothing.
            if ContinuousClock.now - before < delay {
                #expect(probe == .refused)
                #expect(request.exitCode == 7, "curl should fail to connect: \(request.stderr)")
                #expect(server.stats().requests == served, "this mock served a request while refusing")
            }
            try await server.waitUntil(timeout: .seconds(10), "the reopen") { $0.listening }
            #expect(RawTCP(port: port).result == .connected)
            #expect(try Curl.one(port: port, .valid(jwt: try Fixtures.jwt())).status == 200)
        }
    }

    @Test("refusing again cancels a timed reopen; accepting twice is harmless")
    func refuseAgain() async throws {
        try await withMock { server, port async throws in
            try await server.refuseConnections(reopenAfter: .milliseconds(200))
            try await server.refuseConnections()
            // The 200 ms reopen belonged to the first refusal: proving it never comes takes
            // waiting past it.
            await #expect(throws: MockPushError.self) {
                try await server.waitUntil(timeout: .seconds(1), "no reopen") { $0.listening }
            }
            #expect(RawTCP(port: port).result == .refused)
            #expect(server.stats().refusals == 2)
            try await server.acceptConnections()
            try await server.acceptConnections()
            #expect(try Curl.one(port: port, .valid(jwt: try Fixtures.jwt())).status == 200)
        }
    }

    @Test("stop() works while refusing; refuse and accept need a running server")
    func stopWhileRefusing() async throws {
        var logger = Logger(label: "mock-test")
        logger.logLevel = .warning
        let server = try MockPushServer(configuration: Fixtures.main.configuration(), logger: logger)
        await #expect(throws: MockPushError.self) { try await server.refuseConnections() }
        let port = try await server.start()
        try await server.refuseConnections(reopenAfter: .milliseconds(200))
        try await server.stop()
        #expect(server.port == nil)
        #expect(!server.stats().listening)
        #expect(RawTCP.bindable(port: port), "a stopped mock gives its port back")
        let error = await #expect(throws: MockPushError.self) { try await server.acceptConnections() }
        #expect(error?.code == .notStarted)
        try await server.stop()
        // A stopped server starts again.
        #expect(try await server.start() > 0)
        try await server.stop()
    }

    @Test("POST /_mock/refuse needs milliseconds ≥ 1")
    func badRefuseRequest() async throws {
        try await withMock { server, port async throws in
            let zero = try Curl.one(port: port, ControlAPITests.control("POST", "/_mock/refuse", body: #"{"milliseconds":0}"#))
            #expect(zero.status == 400)
            #expect(zero.reason == "BadControlRequest")
            #expect(try Curl.one(port: port, ControlAPITests.control("POST", "/_mock/refuse", body: "{}")).status == 400)
            #expect(try Curl.one(port: port, ControlAPITests.control("GET", "/_mock/refuse")).status == 405)
            #expect(server.stats().listening)
            #expect(server.stats().refusals == 0)
        }
    }
}
