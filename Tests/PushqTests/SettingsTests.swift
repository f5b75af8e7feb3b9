import PushTransport
import Logging
import PushCore
@testable import pushq
import PushWorker
import Testing

/// ``Settings``: variables and flags into the typed configurations the libraries take.
@Suite("Settings")
struct SettingsTests {
    static let database = ["PUSHQ_DATABASE_URL": "postgresql://127.0.0.1:1/pushq"]

    /// The worker's configuration from `environment` (plus a database) and `flags`, without credentials.
    func worker(_ environment: [String: String], flags: [SettingKey: String?] = [:]) throws -> WorkerConfiguration {
        try Settings(environment: Self.database.merging(environment) { $1 }, flags: flags)
            .workerConfiguration(credentials: ResolvedCredentials(), defaultWorkerID: { "host:1" })
    }

    /// The error reading `environment` (plus a database) throws.
    func error(_ environment: [String: String], flags: [SettingKey: String?] = [:]) -> SettingError? {
        #expect(throws: SettingError.self) { try worker(environment, flags: flags) }
        do { _ = try worker(environment, flags: flags) } catch let error as SettingError { return error } catch {}
        return nil
    }

    @Test("the catalog: 54 variables, each named once, flags unique")
    func catalog() {
        let variables = SettingKey.all.map(\.variable)
        #expect(variables.count == 54)
        #expect(Set(variables).count == variables.count)
        #expect(variables.allSatisfy { $0.hasPrefix("PUSHQ_") })
        let flags = SettingKey.all.compactMap(\.flag)
        #expect(Set(flags).count == flags.count)
    }

    @Test("nothing set: the libraries' own defaults, which are the defaults the catalog (so --help and the docs) states")
    func defaults() throws {
        let c = try worker([:])
        let library = WorkerConfiguration(databaseURL: "", workerID: "", credentials: [:], defaultTopic: nil)
        let (sender, apns, fcm) = (PushSenderConfiguration(), APNsConfiguration(), FCMConfiguration())
        let pairs: [(SettingKey, Double, Double)] = [
            (.connections, Double(c.sender.connections), Double(sender.connections)),
            (.apnsStreams, Double(c.apns.streamsPerConnection), Double(apns.streamsPerConnection)),
            (.fcmStreams, Double(c.fcm.streamsPerConnection), Double(fcm.streamsPerConnection)),
            (.requestTimeout, c.sender.requestTimeout, sender.requestTimeout),
            (.connectTimeout, c.sender.connectTimeout, sender.connectTimeout),
            (.claimBatch, Double(c.claimBatchSize), Double(library.claimBatchSize)),
            (.prefetch, Double(c.prefetch), Double(library.prefetch)),
            (.leaseSeconds, c.leaseSeconds, library.leaseSeconds),
            (.pollSeconds, c.pollSeconds, library.pollSeconds),
            (.retryBaseSeconds, c.retryPolicy.baseSeconds, library.retryPolicy.baseSeconds),
            (.retryCapSeconds, c.retryPolicy.capSeconds, library.retryPolicy.capSeconds),
            (.pauseBaseSeconds, c.pauseBaseSeconds, library.pauseBaseSeconds),
            (.pauseCapSeconds, c.pauseCapSeconds, library.pauseCapSeconds),
            (.outageProbeBaseSeconds, c.outageProbeBaseSeconds, library.outageProbeBaseSeconds),
            (.outageProbeCapSeconds, c.outageProbeCapSeconds, library.outageProbeCapSeconds),
            (.shutdownSeconds, c.shutdownSeconds, library.shutdownSeconds),
            (.channelReconcileSeconds, c.channelReconcileSeconds, library.channelReconcileSeconds),
            (.retainSentSeconds, c.retention.sentSeconds, library.retention.sentSeconds),
            (.retainFinalSeconds, c.retention.finalSeconds, library.retention.finalSeconds),
            (.webPushMaxConnections, Double(c.webPush.maxConnections), Double(WebPushConfiguration().maxConnections)),
        ]
        #expect(Set(pairs.map(\.0.variable)) == Set((SettingKey.tuning + SettingKey.retention).map(\.variable)), "every tuning key checked")
        for (key, read, libraryDefault) in pairs {
            #expect(read == libraryDefault, "\(key.variable)")
            #expect(key.defaultValue == SettingKey.format(libraryDefault), "\(key.variable)")
        }
        #expect(c.apns.environment == .production && SettingKey.apnsEnvironment.defaultValue == "production")
        #expect(c.fcm.effectiveBaseURL == "https://fcm.googleapis.com" && c.fcm.baseURL == nil)
        #expect(SettingKey.fcmURL.defaultValue == FCMConfiguration.defaultBaseURL)
        #expect(c.apns.baseURL == nil && c.sender.extraCAFile == nil && c.defaultTopic == nil && c.channelsBaseURL == nil)
        #expect(c.workerID == "host:1")
        #expect(try Settings(environment: [:]).logSettings() == LogSettings(format: .text, level: .info))
        #expect(SettingKey.logFormat.defaultValue == "text" && SettingKey.logLevel.defaultValue == "info")
        #expect(try Settings(environment: [:]).httpAddress() == nil)
    }

    @Test("every variable lands in its field")
    func everyVariable() throws {
        let c = try worker([
            "PUSHQ_CONNECTIONS": "3", "PUSHQ_APNS_STREAMS": "2000", "PUSHQ_FCM_STREAMS": "50",
            "PUSHQ_REQUEST_TIMEOUT": "7.5", "PUSHQ_CONNECT_TIMEOUT": "2", "PUSHQ_CLAIM_BATCH": "64", "PUSHQ_PREFETCH": "0",
            "PUSHQ_LEASE_SECONDS": "60", "PUSHQ_POLL_SECONDS": "0.25", "PUSHQ_RETRY_BASE_SECONDS": "0.05", "PUSHQ_RETRY_CAP_SECONDS": "0.2",
            "PUSHQ_PAUSE_BASE_SECONDS": "2", "PUSHQ_PAUSE_CAP_SECONDS": "4", "PUSHQ_OUTAGE_PROBE_BASE_SECONDS": "0.5",
            "PUSHQ_OUTAGE_PROBE_CAP_SECONDS": "9", "PUSHQ_SHUTDOWN_SECONDS": "0", "PUSHQ_RETAIN_SENT_SECONDS": "0",
            "PUSHQ_RETAIN_FINAL_SECONDS": "3600", "PUSHQ_APNS_TOPIC": "com.example.app", "PUSHQ_APNS_ENVIRONMENT": "development",
            "PUSHQ_APNS_URL": "https://127.0.0.1:8443", "PUSHQ_FCM_URL": "https://127.0.0.1:8444", "PUSHQ_CA_FILE": "/ca.pem",
            "PUSHQ_WORKER_ID": "w7",
        ])
        #expect(c.sender.connections == 3 && c.apns.streamsPerConnection == 2000 && c.sender.maxConcurrentStreams == 2000)
        #expect(c.fcm.streamsPerConnection == 50 && c.sender.requestTimeout == 7.5 && c.sender.connectTimeout == 2)
        #expect(c.claimBatchSize == 64 && c.prefetch == 0 && c.leaseSeconds == 60 && c.pollSeconds == 0.25)
        #expect(c.retryPolicy.baseSeconds == 0.05 && c.retryPolicy.capSeconds == 0.2)
        #expect(c.pauseBaseSeconds == 2 && c.pauseCapSeconds == 4 && c.outageProbeBaseSeconds == 0.5 && c.outageProbeCapSeconds == 9)
        #expect(c.shutdownSeconds == 0 && c.retention.sentSeconds == 0 && c.retention.finalSeconds == 3600)
        #expect(c.defaultTopic == "com.example.app" && c.apns.environment == .development)
        #expect(c.apns.baseURL == "https://127.0.0.1:8443" && c.fcm.baseURL == "https://127.0.0.1:8444" && c.sender.extraCAFile == "/ca.pem")
        #expect(c.workerID == "w7" && c.databaseURL == "postgresql://127.0.0.1:1/pushq")
        let streams = try worker(["PUSHQ_APNS_STREAMS": "20"])
        #expect(streams.apns.streamsPerConnection == 20 && streams.sender.maxConcurrentStreams == 1000, "the stream limit never drops below the default")
    }

    /// an empty value counts as unset, for every variable and for flags: the default (or the variable under
    /// an empty flag) applies
    @Test("an empty value counts as unset, for every variable and flag: the default (or the variable under an empty flag) applies")
    func emptyMeansUnset() throws {
        let everyEmpty = Dictionary(uniqueKeysWithValues: SettingKey.all.map { ($0.variable, "") })
        let c = try worker(everyEmpty.filter { $0.key != SettingKey.databaseURL.variable })
        let defaults = try worker([:])
        #expect(c.sender.connections == defaults.sender.connections && c.fcm.streamsPerConnection == defaults.fcm.streamsPerConnection)
        #expect(c.apns.environment == .production && c.sender.requestTimeout == defaults.sender.requestTimeout)
        #expect(c.leaseSeconds == defaults.leaseSeconds && c.retention.sentSeconds == defaults.retention.sentSeconds)
        #expect(c.apns.baseURL == nil && c.fcm.baseURL == nil && c.workerID == "host:1")
        #expect(try Settings(environment: everyEmpty).logSettings() == LogSettings())
        #expect(try Settings(environment: everyEmpty).httpAddress() == nil)
        #expect(throws: SettingError.self) { try Settings(environment: everyEmpty).databaseURL() }

        let underEmptyFlag = try worker(["PUSHQ_APNS_URL": "https://127.0.0.1:9"], flags: [.apnsURL: "", .workerID: ""])
        #expect(underEmptyFlag.apns.baseURL == "https://127.0.0.1:9" && underEmptyFlag.workerID == "host:1")
    }

    @Test("a flag overrides its variable, and a bad flag value is named by the flag")
    func flagsOverride() throws {
        let env = ["PUSHQ_APNS_URL": "https://127.0.0.1:1", "PUSHQ_APNS_ENVIRONMENT": "development", "PUSHQ_WORKER_ID": "from-env",
                   "PUSHQ_APNS_TOPIC": "com.example.env", "PUSHQ_HTTP_ADDR": "127.0.0.1:1"]
        let flags: [SettingKey: String?] = [.apnsURL: "https://127.0.0.1:2", .apnsEnvironment: "production", .workerID: "from-flag",
                                            .apnsTopic: "com.example.flag", .httpAddr: "[::1]:2", .caFile: nil]
        let c = try worker(env, flags: flags)
        #expect(c.apns.baseURL == "https://127.0.0.1:2" && c.apns.environment == .production)
        #expect(c.workerID == "from-flag" && c.defaultTopic == "com.example.flag")
        let settings = Settings(environment: env, flags: flags)
        #expect(try settings.httpAddress() == HTTPAddress(host: "::1", port: 2))
        #expect(settings.environment == env, "the environment is read, never written")
        #expect(error(env, flags: [.apnsURL: "http://127.0.0.1:2"]) == SettingError(setting: "--apns-url", value: "http://127.0.0.1:2", expected: "an https:// URL"))
        #expect(try Settings(environment: ["PUSHQ_DATABASE_URL": "postgresql://env"], flags: [.databaseURL: "postgresql://flag"]).databaseURL() == "postgresql://flag")
        let verbose = Settings(environment: ["PUSHQ_LOG_LEVEL": "error", "PUSHQ_LOG_FORMAT": "JSON"], flags: [.logLevel: "debug"])
        #expect(try verbose.logSettings() == LogSettings(format: .json, level: .debug))
    }

    @Test("each flag of pushq worker reaches the setting it is named for")
    func flagWiring() throws {
        for key in SettingKey.credentialKeys + SettingKey.sending + SettingKey.tuning.filter({ $0.flag != nil }) + [.databaseURL] {
            let flag = try #require(key.flag)
            let worker = try Worker.parse([flag, "value-of-" + flag])
            let given = worker.database.settings(worker.flags).given(key)
            #expect(given == Settings.Given(name: flag, text: "value-of-" + flag), "\(flag)")
        }
        let verbose = try Worker.parse(["--verbose"])
        #expect(try verbose.database.settings(verbose.flags).logSettings().level == .debug)
    }

    @Test("every error names the variable or flag, the value and what is allowed", arguments: [
        ("PUSHQ_FCM_STREAMS", "1.5", "PUSHQ_FCM_STREAMS=1.5: expected a whole number from 1 to 1000"),
        ("PUSHQ_APNS_STREAMS", "1e3", "PUSHQ_APNS_STREAMS=1e3: expected a whole number from 1 to 10000"),
        ("PUSHQ_CONNECTIONS", " 4", "PUSHQ_CONNECTIONS= 4: expected a whole number from 1 to 64"),
        ("PUSHQ_CLAIM_BATCH", "0", "PUSHQ_CLAIM_BATCH=0: expected a whole number from 1 to 10000"),
        ("PUSHQ_PREFETCH", "-1", "PUSHQ_PREFETCH=-1: expected a whole number from 0 to 100000"),
        ("PUSHQ_POLL_SECONDS", "0.001", "PUSHQ_POLL_SECONDS=0.001: expected seconds from 0.01 to 3600, decimals allowed"),
        ("PUSHQ_LEASE_SECONDS", "2m", "PUSHQ_LEASE_SECONDS=2m: expected seconds from 1 to 86400, decimals allowed"),
        ("PUSHQ_REQUEST_TIMEOUT", "0", "PUSHQ_REQUEST_TIMEOUT=0: expected seconds from 0.001 to 3600, decimals allowed"),
        ("PUSHQ_RETAIN_SENT_SECONDS", "a day", "PUSHQ_RETAIN_SENT_SECONDS=a day: expected seconds from 0 to 315360000, decimals allowed"),
        ("PUSHQ_APNS_ENVIRONMENT", "sandbox", "PUSHQ_APNS_ENVIRONMENT=sandbox: expected production or development"),
        ("PUSHQ_APNS_URL", "http://127.0.0.1", "PUSHQ_APNS_URL=http://127.0.0.1: expected an https:// URL"),
        ("PUSHQ_FCM_URL", "fcm.googleapis.com", "PUSHQ_FCM_URL=fcm.googleapis.com: expected an https:// URL"),
    ])
    func errors(variable: String, value: String, message: String) {
        #expect(error([variable: value])?.description == message)
    }

    @Test("log and listener settings name theirs too; a missing database says so")
    func otherErrors() {
        #expect(throws: SettingError(setting: "PUSHQ_LOG_FORMAT", value: "xml", expected: "text or json")) {
            try Settings(environment: ["PUSHQ_LOG_FORMAT": "xml"]).logSettings()
        }
        #expect(throws: SettingError(setting: "PUSHQ_LOG_LEVEL", value: "loud",
                                     expected: "one of trace, debug, info, notice, warning, error, critical")) {
            try Settings(environment: ["PUSHQ_LOG_LEVEL": "loud"]).logSettings()
        }
        #expect(throws: SettingError(setting: "--http-addr", value: "9464", expected: SettingKey.httpAddr.accepts)) {
            try Settings(environment: [:], flags: [.httpAddr: "9464"]).httpAddress()
        }
        let missing = #expect(throws: SettingError.self) { try Settings(environment: [:]).databaseURL() }
        #expect(missing?.description == "PUSHQ_DATABASE_URL (or --database-url) is not set: expected a libpq connection URI or conninfo string, e.g. postgresql://user@127.0.0.1:5432/pushq")
    }

    @Test("values that depend on each other: the one given is named, with the other's value")
    func together() {
        #expect(error(["PUSHQ_RETRY_BASE_SECONDS": "700"])?.description
            == "PUSHQ_RETRY_BASE_SECONDS=700: expected at most PUSHQ_RETRY_CAP_SECONDS (600)")
        #expect(error(["PUSHQ_RETRY_CAP_SECONDS": "0.5"])?.description
            == "PUSHQ_RETRY_CAP_SECONDS=0.5: expected at least PUSHQ_RETRY_BASE_SECONDS (1)")
        #expect(error(["PUSHQ_PAUSE_BASE_SECONDS": "20", "PUSHQ_PAUSE_CAP_SECONDS": "10"])?.description
            == "PUSHQ_PAUSE_CAP_SECONDS=10: expected at least PUSHQ_PAUSE_BASE_SECONDS (20)")
        #expect(error(["PUSHQ_OUTAGE_PROBE_BASE_SECONDS": "60"])?.description
            == "PUSHQ_OUTAGE_PROBE_BASE_SECONDS=60: expected at most PUSHQ_OUTAGE_PROBE_CAP_SECONDS (45)")
        #expect(error(["PUSHQ_LEASE_SECONDS": "35"])?.description
            == "PUSHQ_LEASE_SECONDS=35: expected more than PUSHQ_REQUEST_TIMEOUT (30) + 5 seconds, or rows would be taken again while still in flight")
        #expect(error(["PUSHQ_REQUEST_TIMEOUT": "200"])?.description
            == "PUSHQ_REQUEST_TIMEOUT=200: expected less than PUSHQ_LEASE_SECONDS (120) - 5 seconds, or rows would be taken again while still in flight")
        #expect(throws: Never.self) { try worker(["PUSHQ_LEASE_SECONDS": "35.5"]) }
    }

    @Test("an incomplete or doubled APNs credential is named before any file is read")
    func credentialErrors() {
        #expect(throws: SettingError(setting: "PUSHQ_APNS_TEAM_ID", value: "ABCDE12345",
                                     expected: "PUSHQ_APNS_KEY_ID and PUSHQ_APNS_KEY_FILE too (APNs token auth needs all three)")) {
            try Settings(environment: ["PUSHQ_APNS_TEAM_ID": "ABCDE12345", "PUSHQ_APNS_KEY_ID": ""]).credentials()
        }
        #expect(throws: SettingError(setting: "--key-file", value: "/k.p8",
                                     expected: "PUSHQ_APNS_TEAM_ID and PUSHQ_APNS_KEY_ID too (APNs token auth needs all three)")) {
            try Settings(environment: [:], flags: [.keyFile: "/k.p8"]).credentials()
        }
        #expect(throws: SettingError(setting: "PUSHQ_APNS_CERT_FILE", value: "/c.p12",
                                     expected: "no certificate beside token auth (--key-file): choose one, or name both in PUSHQ_CREDENTIALS_FILE")) {
            try Settings(environment: ["PUSHQ_APNS_TEAM_ID": "T", "PUSHQ_APNS_KEY_ID": "K", "PUSHQ_APNS_CERT_FILE": "/c.p12"],
                         flags: [.keyFile: "/k.p8"]).credentials()
        }
        let none = #expect(throws: CommandFailure.self) {
            try Settings(environment: ["PUSHQ_CREDENTIALS_FILE": "/nonexistent/credentials.json"]).credentials()
        }
        #expect(none?.description.hasPrefix("cannot read PUSHQ_CREDENTIALS_FILE /nonexistent/credentials.json") == true)
    }
}
