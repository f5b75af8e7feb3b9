import ChildProcess
import Foundation
import Logging
import MockPush
import PushCore
import PushTestSupport
@testable import PushTransport
import Synchronization
import Testing

/// Log lines, kept to check that no secret reaches them.
final class CollectedLogs: Sendable {
    let lines = Mutex<[String]>([])
    var logger: Logger {
        var logger = Logger(label: "fcm-test") { _ in CollectingHandler(logs: self) }
        logger.logLevel = .trace
        return logger
    }
    var all: String { lines.withLock { $0.joined(separator: "\n") } }
}

struct CollectingHandler: LogHandler {
    let logs: CollectedLogs
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        logs.lines.withLock { $0.append("\(event.level) \(event.message) \(all) \(event.error.map { "\($0)" } ?? "")") }
    }
}

/// The FCM OAuth flow against the mock's token endpoint, over real TLS with libcurl.
@Suite struct FCMAccessTokenTests {
    static let registrationToken = "fcm:APA91b_" + String(repeating: "z", count: 100)

    /// Writes a service-account file for `key` whose token_uri is the mock's.
    static func serviceAccountFile(port: Int, key: String = "fcm-key.pem") throws -> String {
        let path = Fixtures.directory + "/sa-\(port)-\(key).json"
        let json = try MockTestFixtures.fcmServiceAccountJSON(privateKeyPath: Fixtures.directory + "/" + key,
                                                             tokenURI: "https://127.0.0.1:\(port)/token")
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func provider(_ harness: MockHarness, key: String = "fcm-key.pem", logger: Logger = Logger(label: "fcm"),
                         clock: @escaping @Sendable () -> Int64 = ProviderTokenManager.systemClock) throws -> FCMAccessTokenProvider {
        let account = try FCMServiceAccount(file: serviceAccountFile(port: harness.port, key: key))
        return try FCMAccessTokenProvider(account: account, configuration: FCMTokenExchangeConfiguration(extraCAFile: Fixtures.caFile),
                                          logger: logger, clock: clock)
    }

    /// Sends one message with `/usr/bin/curl` (the FCM sender comes later) and returns (status, body).
    static func send(_ harness: MockHarness, token: FCMAccessToken, project: String = MockTestFixtures.fcmProjectID) async throws -> (Int, [UInt8]) {
        let body = try FCMMessageBody.build(payload: Array(#"{"data":{"k":"v"}}"#.utf8), token: registrationToken).get()
        let result = try await ChildProcess.run("/usr/bin/curl", [
            "-sS", "--http2", "--cacert", Fixtures.caFile, "--max-time", "10",
            "-H", "authorization: Bearer \(token.value)", "-H", "content-type: application/json",
            "--data-binary", String(decoding: body, as: UTF8.self), "-w", "\n%{http_code}",
            "\(harness.url)/v1/projects/\(project)/messages:send",
        ])
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, Array(lines.dropLast().joined(separator: "\n").utf8))
    }

    @Test func exchangesOnceAndReusesTheToken() async throws {
        let harness = try await MockHarness.start()
        let logs = CollectedLogs()
        let provider = try Self.provider(harness, logger: logs.logger)
        async let a = provider.accessToken()
        async let b = provider.accessToken()
        let (first, second) = try await (a, b)
        #expect(first == second)
        #expect(first.serial == 1)
        #expect(try await provider.accessToken() == first)
        #expect(provider.exchangeCount == 1)
        #expect(harness.server.fcmRequests().filter { $0.endpoint == "token" }.count == 1)
        let (status, body) = try await Self.send(harness, token: first)
        #expect(status == 200, "\(String(decoding: body, as: UTF8.self))")
        #expect(FCMSendSuccess.messageName(body) != nil)
        #expect(!logs.all.contains(first.value))
        #expect(!logs.all.contains("PRIVATE KEY"))
        #expect(!"\(provider.account)".contains("PRIVATE"))
        try await harness.stop()
    }

    @Test func refreshesAheadOfExpiry() async throws {
        let clock = FakeClock(MockClock.wallSeconds())
        let harness = try await MockHarness.start { $0.clock = { clock.now() }; $0.fcm.accessTokenLifetimeSeconds = 600 }
        let provider = try Self.provider(harness, clock: { clock.now() })
        let first = try await provider.accessToken()
        #expect(first.expiresAt == clock.now() + 600)
        clock.advance(299)
        #expect(try await provider.accessToken() == first)
        #expect(provider.exchangeCount == 1)
        clock.advance(2)  // within 300 s of expiry: refresh in the background, keep using the old token
        #expect(try await provider.accessToken() == first)
        #expect(try await provider.accessToken() == first)
        clock.advance(250)  // within 60 s of expiry: wait for the refresh
        let second = try await provider.accessToken()
        #expect(second.serial == 2)
        #expect(second.value != first.value)
        #expect(provider.exchangeCount == 2)
        #expect(try await Self.send(harness, token: second).0 == 200)
        try await harness.stop()
    }

    @Test func refreshesOnceAfter401() async throws {
        let harness = try await MockHarness.start()
        let provider = try Self.provider(harness)
        let first = try await provider.accessToken()
        #expect(try await Self.send(harness, token: first).0 == 200)
        harness.server.expireFCMAccessTokens()
        let (status, body) = try await Self.send(harness, token: first)
        #expect(status == 401)
        #expect(FCMVerdict.classify(status: status, error: FCMErrorBody.parse(body), retryAfter: nil) == .refreshAccessToken)
        // Many streams fail with the same token at once: one drop, one exchange.
        let results = await withTaskGroup(of: FCMAccessTokenCache.Invalidation.self) { group in
            for _ in 0..<8 { group.addTask { provider.invalidate(first) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.filter { $0 == .dropped }.count == 1)
        #expect(results.filter { $0 == .alreadyReplaced }.count == 7)
        let tokens = try await withThrowingTaskGroup(of: FCMAccessToken.self) { group in
            for _ in 0..<8 { group.addTask { try await provider.accessToken() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(tokens).count == 1)
        #expect(tokens[0].serial == 2)
        #expect(tokens[0].replacedRejected)
        #expect(provider.exchangeCount == 2)
        #expect(try await Self.send(harness, token: tokens[0]).0 == 200)
        #expect(harness.server.fcmRequests().filter { $0.endpoint == "token" }.count == 2)
        try await harness.stop()
    }

    @Test func refusedExchangeSaysWhatToFixAndHidesSecrets() async throws {
        let harness = try await MockHarness.start()
        let logs = CollectedLogs()
        // A key the mock does not know for this account: as if it were deleted in the console.
        let provider = try Self.provider(harness, key: "fcm-other-key.pem", logger: logs.logger)
        let error = await #expect(throws: FCMTransportError.self) { try await provider.accessToken() }
        let refusal = try #require(error?.refusal)
        #expect(error?.code == .tokenRefused)
        #expect(refusal.kind == .keyRejected)
        #expect(error?.isTransient == false)
        let message = "\(error!)"
        #expect(message.contains("the service account key was rejected"))
        #expect(message.contains("deleted or disabled"))
        let pem = try String(contentsOfFile: Fixtures.directory + "/fcm-other-key.pem", encoding: .utf8)
        let keyLine = String(pem.split(separator: "\n")[1])
        for text in [message, logs.all] {
            #expect(!text.contains("eyJ"))  // base64url of `{"`: no assertion
            #expect(!text.contains(keyLine))
            #expect(!text.contains("PRIVATE KEY"))
        }
        if case .pauseCredential(_, let pause) = FCMVerdict.tokenRefused(refusal) {
            #expect(pause.contains("deleted or disabled"))
        } else {
            Issue.record("a refused exchange does not pause the credential")
        }
        // A failed exchange is not repeated at once; callers get its error.
        await #expect(throws: FCMTransportError.self) { try await provider.accessToken() }
        #expect(provider.exchangeCount == 1)
        try await harness.stop()
    }

    @Test func tlsIsVerified() async throws {
        let harness = try await MockHarness.start()
        let account = try FCMServiceAccount(file: Self.serviceAccountFile(port: harness.port))
        // Without the test CA the mock's certificate is not trusted.
        let provider = try FCMAccessTokenProvider(account: account, logger: Logger(label: "fcm"))
        let error = await #expect(throws: FCMTransportError.self) { try await provider.accessToken() }
        #expect(error?.code == .tokenEndpointUntrusted)
        #expect(error?.isTransient == false)
        #expect("\(error!)".contains("https://127.0.0.1:\(harness.port)/token is not trusted"))
        #expect(harness.server.fcmRequests().isEmpty)
        try await harness.stop()
    }
}

@Suite struct FCMServiceAccountTests {
    static func load(_ json: String) -> FCMTransportError? {
        do throws(FCMTransportError) {
            _ = try FCMServiceAccount(json: Array(json.utf8), file: "/etc/pushq/sa.json")
            return nil
        } catch {
            return error
        }
    }

    static func accountJSON(replacing field: String? = nil, with value: String? = nil) throws -> String {
        let text = try MockTestFixtures.fcmServiceAccountJSON(privateKeyPath: Fixtures.directory + "/fcm-key.pem",
                                                             tokenURI: "https://oauth2.googleapis.com/token")
        guard let field else { return text }
        var lines = text.split(separator: "\n").map(String.init)
        let i = lines.firstIndex { $0.hasPrefix("  \"\(field)\":") }!
        let comma = lines[i].hasSuffix(",") ? "," : ""
        if let value { lines[i] = "  \"\(field)\": \(value)\(comma)" } else { lines.remove(at: i); if comma.isEmpty { lines[i - 1].removeLast() } }
        return lines.joined(separator: "\n")
    }

    @Test func loadsAValidFile() throws {
        let account = try FCMServiceAccount(json: Array(try Self.accountJSON().utf8), file: "sa.json")
        #expect(account.projectID == MockTestFixtures.fcmProjectID)
        #expect(account.clientEmail == MockTestFixtures.fcmClientEmail)
        #expect(account.privateKeyID == MockTestFixtures.fcmKeyID)
        #expect(account.key.bits == 2048)
        let assertion = try account.assertion(now: 1_700_000_000)
        let parts = assertion.split(separator: ".")
        #expect(parts.count == 3)
        let claimsBytes = try #require(Base64URL.decode(parts[1]))
        let claims = try #require(JSONValue.parse(claimsBytes))
        #expect(claims["aud"]?.stringValue == "https://oauth2.googleapis.com/token")
        #expect(claims["exp"]?.int64Value == 1_700_003_600)
        #expect(Base64URL.decode(parts[2])?.count == 256)
    }

    /// (field, replacement or nil to remove, words of the error).
    static let problems: [(String, String?, String)] = [
        ("type", #""authorized_user""#, #""type": "authorized_user""#),
        ("project_id", nil, #"no "project_id" field"#),
        ("project_id", #""Bad Project""#, #"malformed "project_id""#),
        ("private_key_id", #""""#, #"empty or non-string "private_key_id""#),
        ("client_email", "42", #"non-string "client_email""#),
        ("token_uri", #""http://oauth2.googleapis.com/token""#, "not an https:// URL"),
        ("private_key", #""-----BEGIN PRIVATE KEY-----\nMIIBrokenKeyMaterial\n-----END PRIVATE KEY-----\n""#, #""private_key" that is not a PEM private key"#),
        ("private_key", nil, #"no "private_key" field"#),
    ]

    @Test(arguments: problems.indices)
    func namesTheFileAndField(_ i: Int) throws {
        let (field, value, words) = Self.problems[i]
        let error = try #require(Self.load(try Self.accountJSON(replacing: field, with: value)))
        #expect(error.code == .invalidServiceAccount)
        #expect(error.description.contains("/etc/pushq/sa.json"))
        #expect(error.description.contains(words), "\(error)")
        #expect(!error.description.contains("MIIBroken"))
        #expect(!error.description.contains("BEGIN PRIVATE KEY"))
    }

    @Test func otherFileProblems() throws {
        let notJSON = try #require(Self.load("{\"type\": \"service_account\", "))
        #expect(notJSON.description.contains("is not valid JSON"))
        let ecKey = try String(contentsOfFile: Fixtures.tokenKey, encoding: .utf8)
        let ec = try #require(Self.load(try Self.accountJSON(replacing: "private_key", with: JSONValue.quoted(ecKey))))
        #expect(ec.description.contains("not an RSA key"))
        #expect(!ec.description.contains(String(ecKey.split(separator: "\n")[1])))
        do throws(FCMTransportError) {
            _ = try FCMServiceAccount(file: "/nonexistent/sa.json")
            Issue.record("loaded a missing file")
        } catch {
            #expect(error.description.contains("/nonexistent/sa.json"))
            #expect(error.description.contains("No such file"))
        }
    }
}

extension FCMAccessTokenTests {
    @Test func unreachableEndpointIsTransient() async throws {
        // A port nobody listens on: bind one, note it, close it.
        let harness = try await MockHarness.start()
        let port = harness.port
        let account = try FCMServiceAccount(file: Self.serviceAccountFile(port: port))
        try await harness.stop()
        let provider = try FCMAccessTokenProvider(account: account, configuration: FCMTokenExchangeConfiguration(extraCAFile: Fixtures.caFile),
                                                  logger: Logger(label: "fcm"))
        let error = await #expect(throws: FCMTransportError.self) { try await provider.accessToken() }
        #expect(error?.code == .tokenEndpointUnreachable)
        #expect(error?.isTransient == true)
        #expect("\(error!)".contains("cannot reach the FCM token endpoint https://127.0.0.1:\(port)/token"))
    }
}
