import ChildProcess
import Foundation
import Logging
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushTransport
import PushWorker
import Testing
import PGClient

/// Fixtures from `scripts/gen-test-certs`, generated once per test process.
enum Fixtures {
    static let directory: String = {
        let dir = ProcessTemporaryDirectory.path(prefix: "pushq-worker-tests-")
        try! MockTestFixtures.generate(into: dir, script: repositoryRoot.appendingPathComponent("scripts/gen-test-certs").path)
        return dir
    }()
    static var tokenKey: String { directory + "/token-key.p8" }
    static var caFile: String { directory + "/ca.pem" }
    static let topic = MockTestFixtures.bundleID

    /// Device token number `i` (64 hex digits), with a per-test prefix so tests never share tokens.
    static func token(_ i: Int, prefix: String = "a") -> String {
        let hex = String(i, radix: 16)
        return prefix + String(repeating: "0", count: 63 - hex.count) + hex
    }
}

let quietLogger: Logger = {
    var logger = Logger(label: "worker-test")
    logger.logLevel = ProcessInfo.processInfo.environment["PUSHQ_TEST_LOG"] != nil ? .debug : .critical
    return logger
}()

/// A mock APNs on 127.0.0.1:0 for the duration of `body`.
func withMock<T>(_ configure: (inout MockPushConfiguration) -> Void = { _ in },
                 _ body: (MockPushServer, String) async throws -> T) async throws -> T {
    var configuration = MockPushConfiguration.testFixtures(directory: Fixtures.directory)
    configuration.environment = .development
    configure(&configuration)
    let server = try MockPushServer(configuration: configuration, logger: quietLogger)
    let port = try await server.start()
    do {
        let value = try await body(server, "https://127.0.0.1:\(port)")
        try await server.stop()
        return value
    } catch {
        try? await server.stop()
        throw error
    }
}

/// A worker configuration against the mock at `apnsURL`, tuned for tests: short retries and polls.
func workerConfiguration(databaseURL: String, apnsURL: String, workerID: String = "test-worker",
                         keyID: String = MockTestFixtures.keyID, key: String = Fixtures.tokenKey) throws -> WorkerConfiguration {
    let sender = PushSenderConfiguration(extraCAFile: Fixtures.caFile, connections: 1, requestTimeout: 5,
                                         connectTimeout: 5, connectionStagger: 0)
    var c = WorkerConfiguration(
        databaseURL: databaseURL, workerID: workerID,
        credentials: [CredentialKey(.apns, WorkerConfiguration.defaultCredentialName):
                          .apns(try .token(teamID: MockTestFixtures.teamID, keyID: keyID, keyFile: key))],
        defaultTopic: Fixtures.topic, sender: sender,
        apns: APNsConfiguration(environment: .development, baseURL: apnsURL, streamsPerConnection: 200))
    c.retryPolicy = RetryPolicy(baseSeconds: 0.02, capSeconds: 0.1, throttleDelaySeconds: 300)
    c.pollSeconds = 0.05
    c.leaseSeconds = 15
    c.prefetch = 100
    c.claimBatchSize = 200
    return c
}

extension WorkerConfiguration {
    /// Holds that outlast the test: their first probe an hour away, so no probe resends a held
    /// row while the test runs. For tests that count the mock's requests: under load a test can
    /// run past the default first probe (30 s), and the probe's request would be counted.
    mutating func withoutProbes() {
        pauseBaseSeconds = 3600
        pauseCapSeconds = 3600
    }
}

/// Runs a worker in this process for the duration of `body`, then stops it and waits for it.
@discardableResult
func withWorker<T>(_ configuration: WorkerConfiguration, _ body: (PushWorker) async throws -> T) async throws -> T {
    let worker = PushWorker(configuration: configuration, logger: quietLogger)
    let task = Task { try await worker.run() }
    do {
        let value = try await body(worker)
        worker.requestStop()
        try await task.value
        return value
    } catch {
        worker.requestStop()
        _ = try? await task.value
        throw error
    }
}

/// Polls `condition` against the database every 50 ms until it holds; false after `timeout`.
func eventually(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return false
}

/// The database's clock now, as text that casts back to the same `timestamptz` exactly.
func databaseNow(_ db: PGConnection) async throws -> String {
    try await db.query("SELECT clock_timestamp()::text").string(0, 0) ?? ""
}

/// Waits until another session of `db`'s database has finished a statement whose text starts
/// with `prefix` and that started after `after` (the database's clock, from ``databaseNow(_:)``
/// or a previous answer of this function): an event to wait for instead of sleeping "long
/// enough" for a worker to have done something. Returns that statement's start, nil after `timeout`.
func finishedStatement(_ db: PGConnection, startingWith prefix: String, or other: String? = nil, after: String,
                       timeout: Duration = .seconds(30)) async throws -> String? {
    var started: String?
    _ = try await eventually(timeout: timeout) {
        started = try await db.query("""
            SELECT max(query_start)::text FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'idle'
               AND (starts_with(query, $1) OR starts_with(query, $3)) AND query_start > $2::timestamptz
            """, [prefix, after, other ?? prefix]).string(0, 0)
        return started != nil
    }
    return started
}

/// What a claim connection last ran once a claim committed (`PGConnection.claimCommitSQL`): the
/// claim runs in a transaction, so a commit that starts after a time belongs to a claim that may
/// have started before it, and the next one to a claim that started after it.
let claimStatementPrefix = PGConnection.claimCommitSQL

/// Waits for two statements starting with `prefix` that both start after `after`: the second
/// begins after the worker has acted on whatever was true before `after`. False on timeout.
func twoStatements(_ db: PGConnection, startingWith prefix: String, after: String) async throws -> Bool {
    guard let first = try await finishedStatement(db, startingWith: prefix, after: after) else { return false }
    return try await finishedStatement(db, startingWith: prefix, after: first) != nil
}

/// What a drained claim loop runs after its claims, before it waits (`PGConnection.nextDueMarker`):
/// its connection shows that, not the claim's commit, while the worker is idle.
let drainedStatementPrefix = PGConnection.nextDueMarker

/// Two claim statements after `after`: the second begins after the worker has read back
/// whatever it wrote before `after` (its holds, its pauses). A turn ends with the claim's commit,
/// or, drained, with the read of the next due entry after it: three such statements one after
/// the other, each after `after`, and the third belongs to a turn that began after the first
/// (the first two may be one turn's commit and read).
func twoClaims(_ db: PGConnection, after: String) async throws -> Bool {
    var last = after
    for _ in 0..<3 {
        guard let started = try await finishedStatement(db, startingWith: claimStatementPrefix, or: drainedStatementPrefix, after: last) else {
            return false
        }
        last = started
    }
    return true
}

/// The single integer a query returns (a count, a max), 0 for NULL.
func scalar(_ c: PGConnection, _ sql: String) async throws -> Int {
    try await c.query(sql).decode(Int.self, 0, 0) ?? 0
}

/// Waits until no row is queued, sending or retrying (or `timeout` passes: then records an issue).
@discardableResult
func waitUntilAllFinal(_ c: PGConnection, timeout: Duration = .seconds(120), sourceLocation: SourceLocation = #_sourceLocation) async throws -> Bool {
    let done = try await eventually(timeout: timeout) {
        try await scalar(c, "SELECT count(*) FROM pushq.notifications WHERE status IN ('queued', 'sending', 'retrying')") == 0
    }
    if !done {
        let counts = try await statusCounts(c)
        Issue.record("rows still open after \(timeout): \(counts)", sourceLocation: sourceLocation)
    }
    return done
}

/// `status → count` over all rows.
func statusCounts(_ c: PGConnection) async throws -> [String: Int] {
    let r = try await c.query("SELECT status, count(*)::bigint FROM pushq.notifications GROUP BY 1")
    var out: [String: Int] = [:]
    for i in 0..<r.count { out[r.string(i, 0) ?? ""] = try r.decode(Int.self, i, 1) }
    return out
}

/// Inserts `count` alert rows with tokens `Fixtures.token(0..<count, prefix:)` in one statement.
func insertAlerts(_ c: PGConnection, count: Int, prefix: String = "b") async throws {
    try await c.query("""
        INSERT INTO pushq.notifications (device_token, payload)
        SELECT $2 || lpad(to_hex(g), 63, '0'), '{"aps":{"alert":"bulk"}}' FROM generate_series(0, $1 - 1) g
        """, [count, prefix])
}

/// The `pushq` executable `swift test` built next to the test bundle.
var pushqBinary: String {
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pushq").path
}

/// The environment for a `pushq worker` process against the mock at `apnsURL`.
func workerEnvironment(databaseURL: String, apnsURL: String, workerID: String, extra: [String: String] = [:]) -> [String: String] {
    var env = ProcessInfo.processInfo.environment
    env["PUSHQ_DATABASE_URL"] = databaseURL
    env["PUSHQ_APNS_URL"] = apnsURL
    env["PUSHQ_APNS_CA_FILE"] = Fixtures.caFile
    env["PUSHQ_APNS_TEAM_ID"] = MockTestFixtures.teamID
    env["PUSHQ_APNS_KEY_ID"] = MockTestFixtures.keyID
    env["PUSHQ_APNS_KEY_FILE"] = Fixtures.tokenKey
    env["PUSHQ_APNS_TOPIC"] = Fixtures.topic
    env["PUSHQ_APNS_ENVIRONMENT"] = "development"
    env["PUSHQ_WORKER_ID"] = workerID
    env["PUSHQ_APNS_CONNECTIONS"] = "1"
    env["PUSHQ_APNS_STREAMS"] = "200"
    env["PUSHQ_PREFETCH"] = "100"
    env["PUSHQ_CLAIM_BATCH"] = "200"
    env["PUSHQ_POLL_SECONDS"] = "0.1"
    env["PUSHQ_RETRY_BASE_SECONDS"] = "0.05"
    env["PUSHQ_RETRY_CAP_SECONDS"] = "0.2"
    env["PUSHQ_APNS_REQUEST_TIMEOUT"] = "3"
    env["PUSHQ_LEASE_SECONDS"] = "10"
    for (k, v) in extra { env[k] = v }
    return env
}

/// The most rows one test worker process holds at once (streams + prefetch, as in `workerEnvironment`).
let processHoldLimit = 200 + 100
