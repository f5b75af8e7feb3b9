import ChildProcess
import Foundation
import Logging
import MockPush
import PushCore
import PushTestSupport
@testable import PushTransport
import Synchronization
import Testing

/// Fixtures from `scripts/gen-test-certs`, generated once per test process into a temp dir.
enum Fixtures {
    static let directory: String = {
        let dir = ProcessTemporaryDirectory.path(prefix: "pushq-transport-tests-")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/gen-test-certs").path
        try! MockTestFixtures.generate(into: dir, script: script)
        return dir
    }()
    static var tokenKey: String { directory + "/token-key.p8" }
    static var otherKey: String { directory + "/other-key.p8" }
    static var caFile: String { directory + "/ca.pem" }
    static var p12: String { directory + "/client.p12" }
    static var p12Password: String { try! String(contentsOfFile: directory + "/client.p12.password", encoding: .utf8) }
    static let topic = MockTestFixtures.bundleID
}

/// Collects the sender's result batches and lets a test await a number of them.
final class ResultCollector: Sendable {
    private struct Waiter {
        var id: Int
        var count: Int
        var continuation: CheckedContinuation<Bool, Never>
    }
    private struct State {
        var responses: [PushResponse] = []
        var batches = 0
        var nextID = 0
        var waiters: [Waiter] = []
    }
    private let state = Mutex(State())

    var onResults: @Sendable ([PushResponse]) -> Void {
        { [self] batch in
            let ready = state.withLock { s -> [Waiter] in
                s.responses += batch
                s.batches += 1
                let n = s.responses.count
                let ready = s.waiters.filter { $0.count <= n }
                s.waiters.removeAll { $0.count <= n }
                return ready
            }
            for w in ready { w.continuation.resume(returning: true) }
        }
    }

    var responses: [PushResponse] { state.withLock { $0.responses } }
    var batches: Int { state.withLock { $0.batches } }

    /// Waits until `count` responses arrived in total; records an issue after `timeout`.
    func wait(for count: Int, timeout: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation) async {
        let reached = await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let id = state.withLock { s -> Int? in
                if s.responses.count >= count { return nil }
                s.nextID += 1
                s.waiters.append(Waiter(id: s.nextID, count: count, continuation: c))
                return s.nextID
            }
            guard let id else { c.resume(returning: true); return }
            Task { [self] in
                try? await Task.sleep(for: timeout)
                let expired = self.state.withLock { s -> Waiter? in
                    guard let i = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return s.waiters.remove(at: i)
                }
                expired?.continuation.resume(returning: false)
            }
        }
        if !reached {
            Issue.record("timed out waiting for \(count) responses; got \(responses.count)", sourceLocation: sourceLocation)
        }
    }
}

/// A running mock plus helpers to build senders against it.
struct MockHarness {
    let server: MockPushServer
    let port: Int
    var url: String { "https://127.0.0.1:\(port)" }

    static func start(_ configure: (inout MockPushConfiguration) -> Void = { _ in }) async throws -> MockHarness {
        var configuration = MockPushConfiguration.testFixtures(directory: Fixtures.directory, certificateAuth: true)
        configure(&configuration)
        let server = try MockPushServer(configuration: configuration, logger: ProcessInfo.processInfo.environment["PUSHQ_TEST_MOCK_DEBUG"] != nil ? { var l = Logger(label: "mock"); l.logLevel = .trace; return l }() : Logger(label: "mock"))
        let port = try await server.start()
        return MockHarness(server: server, port: port)
    }

    func senderConfiguration(connections: Int = 1) -> PushSenderConfiguration {
        PushSenderConfiguration(extraCAFile: Fixtures.caFile, connections: connections, requestTimeout: 10, connectTimeout: 5,
                                connectionStagger: 0)
            .with { $0.curlVerbose = ProcessInfo.processInfo.environment["PUSHQ_TEST_CURL_VERBOSE"] != nil }
    }

    /// APNs' settings of a sender to this mock: its URL, `streams` per connection.
    func apns(streams: Int = 1000) -> APNsConfiguration { APNsConfiguration(baseURL: url, streamsPerConnection: streams) }

    /// FCM's settings of a sender to this mock: its URL, `streams` per connection.
    func fcm(streams: Int = 1000) -> FCMConfiguration { FCMConfiguration(baseURL: url, streamsPerConnection: streams) }

    func stop() async throws { try await server.stop() }
}

func tokenManager(clock: @escaping @Sendable () -> Int64 = ProviderTokenManager.systemClock) throws -> ProviderTokenManager {
    try ProviderTokenManager(teamID: MockTestFixtures.teamID, keyID: MockTestFixtures.keyID,
                             keyFile: Fixtures.tokenKey, clock: clock)
}

func deviceToken(_ i: Int) -> String {
    let hex = String(i, radix: 16)
    return String(repeating: "a", count: 64 - hex.count) + hex
}

func lowercaseUUID() -> String { UUID().uuidString.lowercased() }

func request(_ i: Int, token: String? = nil, pushType: PushType = .alert, priority: Int = 10,
             expiration: Int64? = nil, collapseID: String? = nil, payload: String? = nil) -> PushRequest {
    PushRequest(tag: Int64(i), deviceToken: token ?? deviceToken(i),
                payload: Array((payload ?? #"{"aps":{"alert":"n\#(i)"}}"#).utf8), expiration: expiration,
                fields: .apns(APNsHeaders(pushType: pushType, topic: Fixtures.topic + pushType.topicSuffix, priority: priority,
                                          collapseID: collapseID, apnsID: lowercaseUUID())))
}

extension PushRequest {
    /// The `apns-*` headers of a request to APNs, to read and change in tests.
    var apns: APNsHeaders {
        get {
            guard case .apns(let headers) = fields else { preconditionFailure("not a request to APNs") }
            return headers
        }
        set { fields = .apns(newValue) }
    }

    /// Why the APNs provider refuses this request before sending it, or nil.
    var headerProblem: String? { apns.problem(deviceToken: deviceToken) }
}

let testLogger: Logger = {
    var logger = Logger(label: "apns-test")
    logger.logLevel = ProcessInfo.processInfo.environment["PUSHQ_TEST_CURL_VERBOSE"] != nil ? .trace : .warning
    return logger
}()

extension PushSenderConfiguration {
    func with(_ change: (inout PushSenderConfiguration) -> Void) -> PushSenderConfiguration {
        var copy = self
        change(&copy)
        return copy
    }
}
