import ChildProcess
import Foundation
import Logging
@testable import MockAPNs
import Synchronization
import Testing

/// Fixtures from `scripts/gen-test-certs`, generated into `.pushq/test-certs` (git-ignored).
enum Fixtures {
    static let repoRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    static let directory = repoRoot + "/.pushq/test-certs"

    /// Runs the (idempotent, flock-protected) script; cheap once the files exist.
    static func prepare() throws -> String {
        try MockTestFixtures.generate(into: directory, script: repoRoot + "/scripts/gen-test-certs")
        return directory
    }

    static let token = String(repeating: "ab", count: 32)

    static func token(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return String(repeating: "0", count: 64 - hex.count) + hex
    }

    static func jwt(key: String = "token-key.p8", keyID: String = MockTestFixtures.keyID,
                    teamID: String = MockTestFixtures.teamID, issuedAt: Int64 = MockClock.wallSeconds()) throws -> String {
        try MockTestFixtures.providerToken(privateKeyPath: directory + "/" + key, keyID: keyID, teamID: teamID, issuedAt: issuedAt)
    }
}

/// Starts a mock on 127.0.0.1:0, runs `body`, stops it.
func withMock<T>(
    _ configure: (inout MockAPNsConfiguration) -> Void = { _ in },
    certificateAuth: Bool = false,
    _ body: (MockAPNsServer, Int) async throws -> T
) async throws -> T {
    let dir = try Fixtures.prepare()
    var configuration = MockAPNsConfiguration.testFixtures(directory: dir, certificateAuth: certificateAuth)
    configure(&configuration)
    var logger = Logger(label: "mock-test")
    logger.logLevel = .warning
    let server = try MockAPNsServer(configuration: configuration, logger: logger)
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
            ("apns-topic", MockTestFixtures.bundleID),
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
            args += ["-sS", "--http2", "--cacert", Fixtures.directory + "/ca.pem", "--max-time", String(maxTime)]
            if verbose { args.append("-v") }
            if clientCertificate {
                args += ["--cert", Fixtures.directory + "/client.pem", "--key", Fixtures.directory + "/client.key"]
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
