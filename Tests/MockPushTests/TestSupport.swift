import ChildProcess
import Foundation
import Logging
import MockPush
import Synchronization
import Testing

/// The mock's own fixtures (``MockPushFixtures``), generated once per test process into a
/// temporary directory, as a user's test suite would; and a second set whose APNs key is a
/// second key of the same team (`otherKeyID`) and whose FCM key is one the mock does not know.
enum Fixtures {
    static let main: MockPushFixtures = generate("main", MockPushFixtures.Identity())
    static let other: MockPushFixtures = generate("other", MockPushFixtures.Identity(apnsKeyID: otherKeyID))

    private static func generate(_ name: String, _ identity: MockPushFixtures.Identity) -> MockPushFixtures {
        let directory = ProcessTemporaryDirectory.path(prefix: "mockpush-tests-") + "/" + name
        do {
            return try MockPushFixtures.generate(into: directory, identity: identity)
        } catch {
            fatalError("cannot generate the test fixtures: \(error)")
        }
    }

    static var directory: String { main.directory }
    static var keyID: String { main.identity.apnsKeyID }
    static let otherKeyID = "OTHERKEY99"
    static var teamID: String { main.identity.apnsTeamID }
    static var bundleID: String { main.identity.bundleID }
    static var fcmProjectID: String { main.identity.fcmProjectID }
    static var fcmClientEmail: String { main.identity.fcmClientEmail }
    static var caFile: String { main.caCertificatePath }
    static var tokenKey: String { main.apnsKeyPath }
    static var otherKey: String { other.apnsKeyPath }
    static var fcmKey: String { main.fcmKeyPath }
    static var fcmOtherKey: String { other.fcmKeyPath }

    /// The configuration the tests start from: the main fixtures, plus `otherKeyID` of the same team.
    static func configuration(certificateAuth: Bool) -> MockPushConfiguration {
        var configuration = main.configuration(certificateAuth: certificateAuth)
        configuration.tokenKeys.append(MockTokenKey(keyID: otherKeyID, teamID: teamID, publicKeyPEMPath: otherKey))
        return configuration
    }

    static let token = String(repeating: "ab", count: 32)

    static func token(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return String(repeating: "0", count: 64 - hex.count) + hex
    }

    static func jwt(key: String = tokenKey, keyID: String = keyID, teamID: String = teamID,
                    issuedAt: Int64 = MockClock.wallSeconds()) throws -> String {
        try MockPushFixtures.providerToken(privateKeyPath: key, keyID: keyID, teamID: teamID, issuedAt: issuedAt)
    }
}

/// base64url without padding, as JWTs use it.
func base64url(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
}

/// Starts a mock on 127.0.0.1:0, runs `body`, stops it.
func withMock<T>(
    _ configure: (inout MockPushConfiguration) -> Void = { _ in },
    certificateAuth: Bool = false,
    _ body: (MockPushServer, Int) async throws -> T
) async throws -> T {
    var configuration = Fixtures.configuration(certificateAuth: certificateAuth)
    configure(&configuration)
    var logger = Logger(label: "mock-test")
    logger.logLevel = .warning
    let server = try MockPushServer(configuration: configuration, logger: logger)
    let port = try await server.start()
    do {
        let result = try await body(server, port)
        try await server.stop()
        return result
    } catch {
        try? await server.stop()
        throw error
    }
}

/// One request for `Curl.run`.
struct TestRequest: Sendable {
    var method = "POST"
    var path = "/3/device/" + Fixtures.token
    var headers: [(String, String)]
    var body: [UInt8]? = Array(#"{"aps":{"alert":"hello"}}"#.utf8)

    /// A valid alert request with `jwt`.
    static func valid(jwt: String, token: String = Fixtures.token, apnsID: String? = nil) -> TestRequest {
        var headers = [
            ("authorization", "bearer " + jwt),
            ("apns-topic", Fixtures.bundleID),
            ("apns-push-type", "alert"),
        ]
        if let apnsID { headers.append(("apns-id", apnsID)) }
        return TestRequest(path: "/3/device/" + token, headers: headers)
    }

    mutating func set(_ name: String, _ value: String?) {
        headers.removeAll { $0.0 == name }
        if let value { headers.append((name, value)) }
    }
}

struct TestResponse: Sendable {
    var status: Int
    var headers: [String: String]
    var body: String
    /// `reason` of a JSON error body.
    var reason: String? {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["reason"] as? String
    }
    var json: [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
    }
}

struct CurlResult: Sendable {
    var exitCode: Int32
    /// One per request that got an answer (status 0 when none was received).
    var responses: [TestResponse]
    var stderr: String
}

/// Drives the mock with `/usr/bin/curl` over real TLS + HTTP/2. The requests of one call
/// go one after another on one connection (`--next`), so connection rules can be tested.
enum Curl {
    static func run(
        port: Int, _ requests: [TestRequest], maxTime: Double = 10, clientCertificate: Bool = false,
        verbose: Bool = false, extra: [String] = []
    ) throws -> CurlResult {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("mockcurl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        var args: [String] = []
        for (i, request) in requests.enumerated() {
            if i > 0 { args.append("--next") }
            args += ["-sS", "--http2", "--cacert", Fixtures.caFile, "--max-time", String(maxTime)]
            if verbose { args.append("-v") }
            if clientCertificate {
                args += ["--cert", Fixtures.main.clientCertificatePath, "--key", Fixtures.main.clientKeyPath]
            }
            args += extra
            args += ["-X", request.method]
            for (name, value) in request.headers { args += ["-H", "\(name): \(value)"] }
            if let body = request.body {
                let file = work.appendingPathComponent("req\(i)")
                try Data(body).write(to: file)
                args += ["--data-binary", "@" + file.path]
            }
            args += ["-D", work.appendingPathComponent("h\(i)").path, "-o", work.appendingPathComponent("b\(i)").path]
            args.append("https://127.0.0.1:\(port)\(request.path)")
        }
        let result = try ChildProcess.runBlocking("/usr/bin/curl", args)
        var responses: [TestResponse] = []
        for i in requests.indices {
            let headerText = (try? String(contentsOf: work.appendingPathComponent("h\(i)"), encoding: .utf8)) ?? ""
            let body = (try? String(contentsOf: work.appendingPathComponent("b\(i)"), encoding: .utf8)) ?? ""
            responses.append(parse(headerText: headerText, body: body))
        }
        let code: Int32
        switch result.termination {
        case .exit(let c): code = c
        case .signal(let sig): code = 128 + sig
        }
        return CurlResult(exitCode: code, responses: responses, stderr: result.stderr)
    }

    /// One request; fails the test unless curl succeeded.
    static func one(port: Int, _ request: TestRequest, clientCertificate: Bool = false) throws -> TestResponse {
        let result = try run(port: port, [request], clientCertificate: clientCertificate)
        #expect(result.exitCode == 0, "curl: \(result.stderr)")
        return result.responses[0]
    }

    private static func parse(headerText: String, body: String) -> TestResponse {
        var status = 0
        var headers: [String: String] = [:]
        for line in headerText.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("HTTP/") {
                status = Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
            } else if let colon = line.firstIndex(of: ":") {
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return TestResponse(status: status, headers: headers, body: body)
    }
}

/// A clock tests move by hand.
final class TestClock: Sendable {
    private let seconds: Mutex<Int64>
    init(_ start: Int64 = MockClock.wallSeconds()) { seconds = Mutex(start) }
    var now: Int64 { seconds.withLock { $0 } }
    func advance(by delta: Int64) { seconds.withLock { $0 += delta } }
    var closure: @Sendable () -> Int64 { { self.now } }
}

/// Drives the mock with `/usr/bin/nghttp -nv`, whose output names every HTTP/2 frame
/// (flags, SETTINGS values, GOAWAY debug data): for frame-level assertions.
/// All `paths` go concurrently on one connection with the same headers and body.
enum Nghttp {
    static func run(port: Int, paths: [String], headers: [(String, String)], body: [UInt8]?, timeout: Double = 10) throws -> String {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("mocknghttp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        var args = ["-nv", "--no-dep", "-t", String(Int(timeout.rounded(.up)))]
        for (name, value) in headers { args += ["-H", "\(name): \(value)"] }
        if let body {
            let file = work.appendingPathComponent("body")
            try Data(body).write(to: file)
            args += ["-d", file.path]
        }
        args += paths.map { "https://127.0.0.1:\(port)\($0)" }
        let result = try ChildProcess.runBlocking("/usr/bin/nghttp", args)
        return result.stdout + result.stderr
    }

    /// Lines of `output` naming received frames of `type` (e.g. "HEADERS", "DATA", "SETTINGS").
    static func received(_ type: String, in output: String) -> [String] {
        output.split(separator: "\n").map(String.init).filter { $0.contains("recv \(type) frame") }
    }

    /// The SETTINGS_MAX_CONCURRENT_STREAMS values the server sent, in order.
    static func receivedMaxConcurrentStreams(in output: String) -> [Int] {
        var receiving = false
        var values: [Int] = []
        for line in output.split(separator: "\n") {
            if line.contains(" frame <") { receiving = line.contains("recv ") }
            if receiving, line.contains("SETTINGS_MAX_CONCURRENT_STREAMS"),
               let colon = line.lastIndex(of: ":"), let end = line.lastIndex(of: "]"),
               let value = Int(line[line.index(after: colon)..<end]) {
                values.append(value)
            }
        }
        return values
    }
}
