import ChildProcess
import Foundation
import MockPush
import Testing

/// The `pushq-mock` executable, as `make run` and benchmarks start it.
@Suite("pushq-mock executable")
struct ExecutableTests {
    /// `swift test` builds every product next to the test bundle.
    static var binary: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pushq-mock").path
    }

    @Test("prints the ready line, serves rules from flags, stops on SIGTERM")
    func readyLineFlagsAndSignal() async throws {
        let dir = Fixtures.directory
        #expect(FileManager.default.isExecutableFile(atPath: Self.binary), "pushq-mock not built at \(Self.binary)")
        let gone = Fixtures.token(0x9001)
        let process = try ChildProcess(Self.binary, ["--fixtures", dir, "--unregistered", gone, "--record", "--log-level", "warning"],
                                       stdout: .pipe, stderr: .null)
        defer { if !process.hasExited { process.kill(SIGKILL); process.waitBlocking() } }

        // Read the one ready line (blocking read on the pipe, no polling).
        let line = process.readLine() ?? ""
        let text = line
        let prefix = "pushq-mock listening on 127.0.0.1:"
        #expect(text.hasPrefix(prefix), "ready line: \(text)")
        let port = try #require(Int(text.dropFirst(prefix.count)))

        let jwt = try Fixtures.jwt()
        let response = try Curl.one(port: port, .valid(jwt: jwt, token: gone))
        #expect(response.status == 410)
        #expect(response.reason == "Unregistered")
        #expect(response.json?["timestamp"] != nil)
        #expect(try Curl.one(port: port, .valid(jwt: jwt)).status == 200)

        let stats = try Curl.one(port: port, ControlAPITests.control("GET", "/_mock/stats"))
        let decoded = try JSONDecoder().decode(MockPushStats.self, from: Data(stats.body.utf8))
        #expect(decoded.byStatus == [200: 1, 410: 1])

        // Channel management listens on a port of its own, which the control API reports.
        let management = try Curl.one(port: port, ControlAPITests.control("GET", "/_mock/management"))
        let managementPort = try #require(management.json?["port"] as? Int)
        #expect(managementPort != port && managementPort > 0)
        let create = ChannelManagementTests.request("POST", ChannelManagementTests.channels, jwt: jwt, body: ChannelManagementTests.create)
        #expect(try Curl.one(port: managementPort, create).status == 201)

        process.kill(SIGTERM)
        #expect(await process.wait() == .exit(0))
        let rest = process.stdoutPipe?.readDataToEndOfFile() ?? Data()
        #expect(rest.isEmpty, "only one line on stdout: \(String(decoding: rest, as: UTF8.self))")
    }

    @Test("--refuse-for-ms, --token-max-age (negative) and --answer-all-status")
    func outageFlags() async throws {
        let dir = Fixtures.directory
        let launched = ContinuousClock.now
        let process = try ChildProcess(Self.binary, [
            "--fixtures", dir, "--refuse-for-ms", "3000", "--token-max-age", "-1",
            "--answer-all-status", "503", "--answer-all-reason", "ServiceUnavailable", "--log-level", "warning",
        ], stdout: .pipe, stderr: .null)
        defer { if !process.hasExited { process.kill(SIGKILL); process.waitBlocking() } }
        let line = process.readLine() ?? ""
        let prefix = "pushq-mock listening on 127.0.0.1:"
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

    @Test("--bundle-id adds an app beside the fixtures' bundle id: both topics are accepted, a third is not")
    func bundleIDAdds() async throws {
        // A user's second app next to the fixtures' default one, which the docs' recipes use.
        let process = try ChildProcess(Self.binary, ["--fixtures", Fixtures.directory, "--bundle-id", "com.example.second",
                                                     "--log-level", "warning"], stdout: .pipe, stderr: .null)
        defer { if !process.hasExited { process.kill(SIGKILL); process.waitBlocking() } }
        let line = process.readLine() ?? ""
        let prefix = "pushq-mock listening on 127.0.0.1:"
        let port = try #require(Int(line.dropFirst(prefix.count)), "ready line: \(line)")
        let jwt = try Fixtures.jwt()
        var second = TestRequest.valid(jwt: jwt)
        second.set("apns-topic", "com.example.second")
        var third = TestRequest.valid(jwt: jwt)
        third.set("apns-topic", "com.example.third")
        let answers = try Curl.run(port: port, [.valid(jwt: jwt), second, third]).responses
        #expect(answers.map(\.status) == [200, 200, 400], "\(answers.map { ($0.status, $0.reason ?? "") })")
        #expect(answers.last?.reason == "TopicDisallowed")
        process.kill(SIGTERM)
        #expect(await process.wait() == .exit(0))
    }

    @Test("--help has no run of three or more spaces inside its prose")
    func helpHasNoRunsOfSpaces() async throws {
        let result = try await ChildProcess.run(Self.binary, ["--help"])
        #expect(result.termination == .exit(0))
        #expect(result.stdout.contains("--bundle-id"))
        // ArgumentParser aligns the options' help in a column: an option line's first gap (name to help)
        // and every line's indentation are layout; any other run of 3+ spaces comes from the source text.
        var runs: [String] = []
        for line in result.stdout.split(separator: "\n", omittingEmptySubsequences: false) {
            var text = line.drop { $0 == " " }
            if line.hasPrefix("  -"), let gap = text.range(of: "  ") {
                text = text[gap.upperBound...].drop { $0 == " " }
            }
            if text.trimmingCharacters(in: .whitespaces).contains("   ") { runs.append(String(line)) }
        }
        #expect(runs.isEmpty, "runs of spaces in --help: \(runs)")
    }

    @Test("--print-token prints a JWT the mock accepts")
    func printToken() async throws {
        let dir = Fixtures.directory
        let result = try await ChildProcess.run(Self.binary, ["--fixtures", dir, "--print-token"])
        #expect(result.termination == .exit(0))
        let jwt = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(jwt.split(separator: ".").count == 3)
        try await withMock { server, port async throws in
            #expect(try Curl.one(port: port, .valid(jwt: jwt)).status == 200)
            #expect(server.requests().first?.jwtKeyID == Fixtures.keyID)
        }
    }

    @Test("--print-fixtures prints the fixtures' paths and names as shell assignments")
    func printFixtures() async throws {
        let result = try await ChildProcess.run(Self.binary, ["--fixtures", Fixtures.directory, "--print-fixtures"])
        #expect(result.termination == .exit(0))
        var values: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, parts[1].hasPrefix("'"), parts[1].hasSuffix("'") else {
                Issue.record("not NAME='value': \(line)")
                continue
            }
            values[parts[0]] = String(parts[1].dropFirst().dropLast())
        }
        #expect(values["MOCK_CA_FILE"] == Fixtures.caFile)
        #expect(values["MOCK_APNS_KEY_FILE"] == Fixtures.tokenKey)
        #expect(values["MOCK_APNS_KEY_ID"] == Fixtures.keyID)
        #expect(values["MOCK_APNS_TEAM_ID"] == Fixtures.teamID)
        #expect(values["MOCK_APNS_TOPIC"] == Fixtures.bundleID)
        #expect(values["MOCK_FCM_KEY_FILE"] == Fixtures.fcmKey)
        #expect(values["MOCK_FCM_PROJECT_ID"] == Fixtures.fcmProjectID)
        #expect(values["MOCK_FCM_CLIENT_EMAIL"] == Fixtures.fcmClientEmail)
        #expect(values["MOCK_FCM_KEY_ID"] == Fixtures.main.identity.fcmKeyID)
        #expect(values["MOCK_CLIENT_CERT"] == Fixtures.main.clientCertificatePath)
        #expect(values["MOCK_CLIENT_KEY"] == Fixtures.main.clientKeyPath)
    }
}
