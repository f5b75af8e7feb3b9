import ArgumentParser
import Dispatch
import Foundation
import Logging
import MockPush

/// `pushq-mock`: the mock APNs + FCM server as its own process, for `make run`, benchmarks and
/// test suites that drive it from outside.
///
/// Prints exactly one line to stdout when ready, `pushq-mock listening on 127.0.0.1:PORT`,
/// and runs until SIGINT or SIGTERM. Logs go to stderr.
@main
struct PushMockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushq-mock",
        abstract: "A mock of Apple's APNs provider API and of FCM HTTP v1 (TLS + HTTP/2) with faults on demand.",
        discussion: """
        Control endpoints on the same port: GET /_mock/stats, GET /_mock/requests, POST /_mock/reset, \
        POST /_mock/rules, POST /_mock/failure-rate, POST /_mock/answer-all (a MockAnswer, or null), \
        POST /_mock/faults (tokenMaxAgeSeconds included), POST /_mock/refuse {"milliseconds":N} \
        (close the listener and every connection, listen again N ms later), GET /_mock/wait?count=N&timeoutMs=T.

        APNs broadcasts on the same port (POST /4/broadcasts/apps/{bundle}); APNs channel management \
        (/1/apps/{bundle}/channels, /all-channels) on --management-port, which GET /_mock/management \
        reports ({"port":N,"url":"https://127.0.0.1:N"}); channels: GET /_mock/channels, \
        POST /_mock/channels/create, /delete, /fail-next, GET /_mock/channels/requests.

        FCM HTTP v1 on the same port: POST /token (OAuth 2.0 JWT bearer exchange for the service \
        accounts it knows: with --fixtures, the fixtures' account) and POST /v1/projects/{id}/messages:send.

        Fixtures: --fixtures DIR generates (or reuses) a CA, the server certificate, a client \
        certificate, an APNs key and an FCM service account key in DIR; --print-fixtures prints \
        their paths and names as shell assignments (MOCK_CA_FILE=… MOCK_APNS_KEY_ID=…).
        """
    )

    @Option(help: "Address to bind (loopback only).") var host = "127.0.0.1"
    @Option(help: "Port; 0 picks a free one (printed on the ready line).") var port = 0
    @Option(help: "Port of the APNs channel-management API (Apple's 2196 / 2195); 0 picks a free one (GET /_mock/management says which).")
    var managementPort = 0
    @Option(help: "Fixtures directory, generated when missing (CA, server and client certificates, APNs key, FCM account): sets --cert, --key, the APNs key, a bundle id (--bundle-id adds others) and the FCM account unless given.")
    var fixtures: String?
    @Option(help: "Server certificate (PEM).") var cert: String?
    @Option(help: "Server private key (PEM).") var key: String?
    @Option(help: "CA (PEM) for client certificates; enables certificate auth.") var clientCA: String?
    @Option(help: "Accepted token key as KEYID:TEAMID:PUBLIC_KEY_PEM_PATH (repeatable).") var tokenKey: [String] = []
    @Option(help: "A bundle id accepted beside the fixtures' one, e.g. a second app (repeatable).") var bundleId: [String] = []
    @Option(help: "production, or development (adds apns-unique-id).") var environment = "production"
    @Option(help: "SETTINGS_MAX_CONCURRENT_STREAMS once a connection has a valid token.") var maxStreams = 1000
    @Flag(help: "Advertise the full stream limit from the start (no 1-stream phase).") var noLimitStreams = false
    @Option(help: "Event-loop threads.") var threads = 1
    @Flag(help: "Record each request (headers, times); off by default for speed.") var record = false
    @Flag(help: "With --record, keep bodies too.") var recordBodies = false
    @Option(help: "At most this many records.") var maxRecords = 100_000
    @Option(help: "GOAWAY after this many streams per connection.") var goawayAfter: Int?
    @Option(help: "Reason in the GOAWAY debug data.") var goawayReason: String?
    @Option(help: "Close each connection after this many requests.") var closeAfter: Int?
    @Option(help: "Close connections idle this long (ms).") var idleTimeoutMs: Int?
    @Flag(help: "With --idle-timeout-ms, blackhole idle connections (stop reading and writing) instead of closing them.")
    var idleBlackhole = false
    @Option(help: "Fraction (0...1) of valid requests that fail at random.") var failureRate: Double?
    @Option(help: "Status of random failures.") var failureStatus = 503
    @Option(help: "Reason of random failures.") var failureReason = "ServiceUnavailable"
    @Option(help: "Seed of random failures.") var seed: UInt64 = 1
    @Option(help: "Answer every valid request with this status, over rules and --failure-rate (an outage: 500, 503).")
    var answerAllStatus: Int?
    @Option(help: "With --answer-all-status, the reason in the body (none by default).") var answerAllReason: String?
    @Option(parsing: .unconditional, help: "Oldest provider token accepted, seconds (default 3600); negative: every token is expired.")
    var tokenMaxAge: Int?
    @Option(help: "Refuse connections for this long (ms) after binding, then listen: APNs unreachable at start-up. The ready line is printed once connections are refused.")
    var refuseForMs: Int?
    @Option(help: "Token answered 410 Unregistered, timestamp now (repeatable).") var unregistered: [String] = []
    @Option(help: "JSON file {\"<token>\": MockTokenRule, ...} of per-token rules.") var rulesFile: String?
    @Option(help: "JSON file {\"<registration token>\": MockFCMTokenRule, ...} of per-token FCM rules, e.g. {\"tok\": {\"then\": {\"kind\": \"error\", \"code\": \"UNREGISTERED\"}}}.")
    var fcmRulesFile: String?
    @Option(help: "Print the service account JSON of --fixtures' FCM account whose token_uri is this URL, e.g. https://127.0.0.1:PORT/token, and exit.")
    var printFcmServiceAccount: String?
    @Flag(help: "Print --fixtures' paths and names as shell assignments (MOCK_CA_FILE, MOCK_APNS_KEY_FILE, MOCK_APNS_KEY_ID, MOCK_APNS_TEAM_ID, MOCK_APNS_TOPIC, MOCK_FCM_KEY_FILE, MOCK_FCM_PROJECT_ID, MOCK_FCM_CLIENT_EMAIL, MOCK_FCM_KEY_ID, MOCK_CLIENT_CERT, MOCK_CLIENT_KEY), and exit.")
    var printFixtures = false
    @Option(help: "Log level (trace, debug, info, notice, warning, error, critical).") var logLevel = "info"
    @Flag(help: "Print a provider token (JWT) signed with --fixtures' APNs key, issued now, and exit: for h2load and scripts.")
    var printToken = false

    func run() async throws {
        let generated = try fixtures.map { try MockPushFixtures.generate(into: $0) }
        if let text = try printed(generated) {
            FileHandle.standardOutput.write(Data(text.utf8))
            return
        }
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "pushq-mock")
        let server = try MockPushServer(configuration: try makeConfiguration(generated), logger: logger)
        try applyRules(server)
        if let refuseForMs, refuseForMs < 1 { throw ValidationError("--refuse-for-ms expects at least 1, got \(refuseForMs)") }
        let boundPort = try await server.start()
        if let refuseForMs {
            try await server.refuseConnections(reopenAfter: .milliseconds(refuseForMs))
        }
        // Unbuffered, so a script reading the pipe sees the line at once.
        FileHandle.standardOutput.write(Data("pushq-mock listening on \(host):\(boundPort)\n".utf8))
        await Self.waitForTermination()
        logger.info("pushq-mock stopping")
        try await server.stop()
    }

    /// What `--print-fixtures`, `--print-token` or `--print-fcm-service-account` print; nil to serve.
    private func printed(_ fixtures: MockPushFixtures?) throws -> String? {
        guard printFixtures || printToken || printFcmServiceAccount != nil else { return nil }
        guard let fixtures else { throw ValidationError("--print-fixtures, --print-token and --print-fcm-service-account need --fixtures") }
        if let tokenURI = printFcmServiceAccount { return try fixtures.fcmServiceAccountJSON(tokenURI: tokenURI) }
        if printToken { return try fixtures.providerToken(issuedAt: MockClock.wallSeconds()) + "\n" }
        let id = fixtures.identity
        let lines = [
            ("MOCK_CA_FILE", fixtures.caCertificatePath), ("MOCK_CLIENT_CERT", fixtures.clientCertificatePath),
            ("MOCK_CLIENT_KEY", fixtures.clientKeyPath), ("MOCK_APNS_KEY_FILE", fixtures.apnsKeyPath),
            ("MOCK_APNS_KEY_ID", id.apnsKeyID), ("MOCK_APNS_TEAM_ID", id.apnsTeamID), ("MOCK_APNS_TOPIC", id.bundleID),
            ("MOCK_FCM_KEY_FILE", fixtures.fcmKeyPath), ("MOCK_FCM_PROJECT_ID", id.fcmProjectID),
            ("MOCK_FCM_CLIENT_EMAIL", id.fcmClientEmail), ("MOCK_FCM_KEY_ID", id.fcmKeyID),
        ]
        // Single-quoted for the shell; a quote inside is written '\''.
        return lines.map { "\($0.0)='\($0.1.replacingOccurrences(of: "'", with: "'\\''"))'\n" }.joined()
    }

    private func makeConfiguration(_ generated: MockPushFixtures?) throws -> MockPushConfiguration {
        var configuration = generated?.configuration() ?? MockPushConfiguration(certificatePath: "", privateKeyPath: "")
        if let cert { configuration.certificatePath = cert }
        if let key { configuration.privateKeyPath = key }
        guard !configuration.certificatePath.isEmpty, !configuration.privateKeyPath.isEmpty else {
            throw ValidationError("give --fixtures, or --cert and --key")
        }
        if !tokenKey.isEmpty {
            configuration.tokenKeys = try tokenKey.map { spec in
                let parts = spec.split(separator: ":", maxSplits: 2).map(String.init)
                guard parts.count == 3 else { throw ValidationError("--token-key expects KEYID:TEAMID:PATH, got \(spec)") }
                return MockTokenKey(keyID: parts[0], teamID: parts[1], publicKeyPEMPath: parts[2])
            }
        }
        // Added to the fixtures' bundle id, which the docs' recipes and MOCK_APNS_TOPIC use.
        for id in bundleId where !configuration.bundleIDs.contains(id) { configuration.bundleIDs.append(id) }
        guard let env = MockAPNsEnvironment(rawValue: environment) else {
            throw ValidationError("--environment expects production or development, got \(environment)")
        }
        configuration.host = host
        configuration.port = port
        configuration.managementPort = managementPort
        configuration.clientCAPath = clientCA ?? configuration.clientCAPath
        configuration.environment = env
        configuration.maxConcurrentStreams = maxStreams
        configuration.limitStreamsUntilFirstValidToken = !noLimitStreams
        configuration.eventLoopThreads = threads
        configuration.recordRequests = record
        configuration.recordBodies = recordBodies
        configuration.maxRecordedRequests = maxRecords
        configuration.faults = MockConnectionFaults(
            goawayAfterStreams: goawayAfter, goawayReason: goawayReason,
            closeAfterRequests: closeAfter, idleTimeoutMilliseconds: idleTimeoutMs,
            idleBlackhole: idleBlackhole ? true : nil, tokenMaxAgeSeconds: tokenMaxAge
        )
        return configuration
    }

    private func applyRules(_ server: MockPushServer) throws {
        if let answerAllStatus {
            server.answerEverything(with: .status(answerAllStatus, reason: answerAllReason))
        } else if answerAllReason != nil {
            throw ValidationError("--answer-all-reason needs --answer-all-status")
        }
        if let failureRate {
            server.setFailureRate(MockFailureRate(
                rate: failureRate, answer: .status(failureStatus, reason: failureReason), seed: seed
            ))
        }
        let nowMilliseconds = Int64(Date().timeIntervalSince1970 * 1000)
        for token in unregistered {
            server.setRule(forToken: token, .always(.unregistered(at: nowMilliseconds)))
        }
        if let rulesFile {
            guard let data = FileManager.default.contents(atPath: rulesFile) else {
                throw ValidationError("cannot read --rules-file \(rulesFile)")
            }
            let rules = try JSONDecoder().decode([String: MockTokenRule].self, from: data)
            for (token, rule) in rules { server.setRule(forToken: token, rule) }
        }
        if let fcmRulesFile {
            guard let data = FileManager.default.contents(atPath: fcmRulesFile) else {
                throw ValidationError("cannot read --fcm-rules-file \(fcmRulesFile)")
            }
            let rules = try JSONDecoder().decode([String: MockFCMTokenRule].self, from: data)
            for (token, rule) in rules { server.setFCMRule(forToken: token, rule) }
        }
    }

    /// Suspends until SIGINT or SIGTERM.
    private static func waitForTermination() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = ResumeOnce(continuation)
            for sig in [SIGINT, SIGTERM] {
                signal(sig, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
                source.setEventHandler { once.resume() }
                source.resume()
                ResumeOnce.keep(source)
            }
        }
    }
}

/// Resumes a continuation at most once, from whichever signal comes first.
///
/// `@unchecked Sendable`: `lock` guards `continuation`; `sources` is only appended
/// to during start-up, from the one task that installs the handlers, to keep the
/// dispatch sources alive for the life of the process.
private final class ResumeOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Void, Never>?
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []

    init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }

    static func keep(_ source: any DispatchSourceSignal) { sources.append(source) }

    func resume() {
        lock.lock()
        let c = continuation
        continuation = nil
        lock.unlock()
        c?.resume()
    }
}
