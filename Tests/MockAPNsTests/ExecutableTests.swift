import ChildProcess
import Foundation
import MockAPNs
import Testing

/// The `apns-mock` executable, as `make run` and benchmarks start it.
@Suite("apns-mock executable")
struct ExecutableTests {
    /// `swift test` builds every product next to the test bundle.
    static var binary: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("apns-mock").path
    }

    @Test("prints the ready line, serves rules from flags, stops on SIGTERM")
    func readyLineFlagsAndSignal() async throws {
        let dir = try Fixtures.prepare()
        #expect(FileManager.default.isExecutableFile(atPath: Self.binary), "apns-mock not built at \(Self.binary)")
        let gone = Fixtures.token(0x9001)
        let process = try ChildProcess(Self.binary, ["--certs-dir", dir, "--unregistered", gone, "--record", "--log-level", "warning"],
                                       stdout: .pipe, stderr: .null)
        defer { if !process.hasExited { process.kill(SIGKILL); process.waitBlocking() } }

        // Read the one ready line (blocking read on the pipe, no polling).
        let line = process.readLine() ?? ""
        let text = line
        let prefix = "apns-mock listening on 127.0.0.1:"
        #expect(text.hasPrefix(prefix), "ready line: \(text)")
        let port = try #require(Int(text.dropFirst(prefix.count)))

        let jwt = try Fixtures.jwt()
        let response = try Curl.one(port: port, .valid(jwt: jwt, token: gone))
        #expect(response.status == 410)
        #expect(response.reason == "Unregistered")
        #expect(response.json?["timestamp"] != nil)
        #expect(try Curl.one(port: port, .valid(jwt: jwt)).status == 200)

        let stats = try Curl.one(port: port, ControlAPITests.control("GET", "/_mock/stats"))
        let decoded = try JSONDecoder().decode(MockAPNsStats.self, from: Data(stats.body.utf8))
        #expect(decoded.byStatus == [200: 1, 410: 1])

        process.kill(SIGTERM)
        #expect(await process.wait() == .exit(0))
        let rest = process.stdoutPipe?.readDataToEndOfFile() ?? Data()
        #expect(rest.isEmpty, "only one line on stdout: \(String(decoding: rest, as: UTF8.self))")
    }

    @Test("--print-token prints a JWT the mock accepts")
    func printToken() async throws {
        let dir = try Fixtures.prepare()
        let result = try await ChildProcess.run(Self.binary, ["--certs-dir", dir, "--print-token"])
        #expect(result.termination == .exit(0))
        let jwt = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(jwt.split(separator: ".").count == 3)
        try await withMock { server, port async throws in
            #expect(try Curl.one(port: port, .valid(jwt: jwt)).status == 200)
            #expect(server.requests().first?.jwtKeyID == MockTestFixtures.keyID)
        }
    }
}
