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

    @Test("--refuse-for-ms, --token-max-age (negative) and --answer-all-status")
    func outageFlags() async throws {
        let dir = try Fixtures.prepare()
        let launched = ContinuousClock.now
        let process = try ChildProcess(Self.binary, [
            "--certs-dir", dir, "--refuse-for-ms", "3000", "--token-max-age", "-1",
            "--answer-all-status", "503", "--answer-all-reason", "ServiceUnavailable", "--log-level", "warning",
        ], stdout: .pipe, stderr: .null)
        defer { if !process.hasExited { process.kill(SIGKILL); process.waitBlocking() } }
        let line = process.readLine() ?? ""
        let prefix = "apns-mock listening on 127.0.0.1:"
        #expect(line.hasPrefix(prefix), "ready line: \(line)")
        let port = try #require(Int(line.dropFirst(prefix.count)))
        let probe = RawTCP(port: port).result
        // The reopen comes 3 s after the refusal began, which is after the launch; a probe
        // done later than that (a loaded machine) proves nothing.
        if ContinuousClock.now - launched < .seconds(3) {
            #expect(probe == .refused, "refused right after the ready line")
        }

        // Another process: nothing to await but the port itself, so curl retries until it opens.
        let jwt = try Fixtures.jwt()
        let retrying = try Curl.run(port: port, [.valid(jwt: jwt)], maxTime: 20,
                                    extra: ["--retry", "30", "--retry-connrefused", "--retry-delay", "1"])
        #expect(retrying.responses.first?.status == 403, "\(retrying.stderr)")
        #expect(retrying.responses.first?.reason == "ExpiredProviderToken")

        #expect(try Curl.one(port: port, ControlAPITests.control("POST", "/_mock/faults", body: "{}")).status == 200)
        let outage = try Curl.one(port: port, .valid(jwt: jwt))
        #expect(outage.status == 503)
        #expect(outage.reason == "ServiceUnavailable")

        process.kill(SIGTERM)
        #expect(await process.wait() == .exit(0))
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
