import PushCore
import PushStore
import PushTransport

/// Everything a ``PushWorker`` needs: where the queue is, how to reach each provider, and its tuning.
///
/// Defaults are fast on one small machine; `pushq worker` sets each from its own `PUSHQ_`
/// variable or flag (its `Settings`; the library reads no environment).
public struct WorkerConfiguration: Sendable {
    /// libpq connection URI or conninfo (`PUSHQ_DATABASE_URL`).
    public var databaseURL: String
    /// Written to `locked_by` (`PUSHQ_WORKER_ID`). Defaults to `host:pid`.
    public var workerID: String
    /// The credentials this worker can send with, by provider and name (names are per
    /// provider); a row's are its `provider` and `credential`, `"default"` when NULL. Rows naming
    /// a credential this worker lacks are left for a worker that has it; a worker sends only
    /// the providers it has credentials for.
    public var credentials: [CredentialKey: Credential]
    /// The credentials whose sends are capped, every worker together (the credentials file's
    /// `max_per_second`). Defaults to none.
    public var credentialCaps: [RateBudget] = []
    /// A base URL replacing Apple's channel-management hosts (`PUSHQ_APNS_CHANNELS_URL`:
    /// `api-manage-broadcast[.sandbox].push.apple.com`, ports 2196 / 2195, by environment), for a
    /// mock or a proxy. Broadcasts themselves go to the push host (``apns``'s). Defaults to nil.
    public var channelsBaseURL: String?
    /// How often each (credential, environment, bundle id) of `pushq.channels` is checked against
    /// Apple's `all-channels`, by one worker of the fleet, in seconds
    /// (`PUSHQ_CHANNEL_RECONCILE_SECONDS`). Defaults to 86 400 (nightly).
    public var channelReconcileSeconds: Double = 86_400
    /// `apns-topic` for rows whose `topic` is NULL (`PUSHQ_APNS_TOPIC`), suffix added per push type,
    /// unless their credential has a topic of its own in ``credentialTopics``.
    public var defaultTopic: String?
    /// Each credential's own default topic (the credentials file's `topic`), by credential name.
    /// Defaults to none.
    public var credentialTopics: [String: String]
    /// How every provider's senders connect (connections, timeouts, the extra CA).
    public var sender: PushSenderConfiguration
    /// APNs' own settings (`PUSHQ_APNS_URL`, `PUSHQ_APNS_STREAMS`); its `environment` is the
    /// default for rows whose `environment` is NULL (`PUSHQ_APNS_ENVIRONMENT`). Each APNs
    /// sender gets a copy with its endpoint's environment. Defaults to `APNsConfiguration()`.
    public var apns: APNsConfiguration
    /// FCM's own settings (`PUSHQ_FCM_URL`, `PUSHQ_FCM_STREAMS`). Defaults to `FCMConfiguration()`.
    public var fcm: FCMConfiguration
    /// Web Push's own settings (`PUSHQ_WEBPUSH_CA_FILE`, `_ALLOWED_ORIGINS`, `_MAX_CONNECTIONS`),
    /// for every Web Push credential's sender. Defaults to `WebPushConfiguration()`.
    public var webPush = WebPushConfiguration()
    /// Most rows claimed by one statement (`PUSHQ_CLAIM_BATCH`). Defaults to 500.
    public var claimBatchSize: Int
    /// Rows claimed beyond the HTTP/2 window so it never drains between claims (`PUSHQ_PREFETCH`).
    /// Defaults to 500.
    public var prefetch: Int
    /// How long a claimed row stays ours, in seconds (`PUSHQ_LEASE_SECONDS`); after that any
    /// worker may take it again. Must exceed the request timeout. Defaults to 120.
    public var leaseSeconds: Double
    /// How often an idle worker looks for due rows without a `NOTIFY` (expired leases), in
    /// seconds (`PUSHQ_POLL_SECONDS`); it also wakes when the next entry of `pushq.due` comes due
    /// (scheduled rows, retries, rows held for quiet hours or a cap). Defaults to 1.
    public var pollSeconds: Double
    /// Backoff of retries (`PUSHQ_RETRY_BASE_SECONDS`, `PUSHQ_RETRY_CAP_SECONDS`).
    public var retryPolicy: RetryPolicy
    /// First pause of a rejected credential, in seconds, doubled on each repeat
    /// (`PUSHQ_PAUSE_BASE_SECONDS`). Defaults to 30.
    public var pauseBaseSeconds: Double
    /// Longest pause of a rejected credential, in seconds (`PUSHQ_PAUSE_CAP_SECONDS`). Defaults to 900.
    public var pauseCapSeconds: Double
    /// First probe of an endpoint that is down, in seconds (`PUSHQ_OUTAGE_PROBE_BASE_SECONDS`). Defaults to 1.
    public var outageProbeBaseSeconds: Double
    /// Longest interval between probes of an endpoint that is down, in seconds
    /// (`PUSHQ_OUTAGE_PROBE_CAP_SECONDS`). Defaults to 45, so that every row goes out within
    /// a minute of the recovery.
    public var outageProbeCapSeconds: Double
    /// How often the worker marks itself alive in `pushq.workers` and expires rows that no
    /// worker claims, in seconds. Defaults to 5.
    public var heartbeatSeconds: Double
    /// Most rows one statement of the upkeep expires. Defaults to 1000.
    public var expiryChunkRows: Int
    /// Most expiry statements of one upkeep turn: a mass expiry (a million rows past their
    /// `expires_at`) is done a few chunks between claims, so claims keep flowing and the
    /// claim loop stays live. Defaults to 5.
    public var expiryChunksPerTurn: Int
    /// The server-side limit (`statement_timeout`) of each of the worker's statements, in
    /// seconds. Defaults to 20.
    public var statementTimeoutSeconds: Double
    /// How long the worker waits for any answer from PostgreSQL before it gives the connection
    /// up as lost and reconnects (a partition), in seconds. Defaults to 25. With libpq's
    /// connect_timeout (10 s), keepalives and tcp_user_timeout (30 s), set unless the URL sets
    /// them, no database call holds the worker, or its shutdown, for long.
    public var statementDeadlineSeconds: Double
    /// After a stop request, how long the worker keeps retrying to record answers and release
    /// rows before leaving them to their leases, in seconds. Defaults to 30.
    public var shutdownRetrySeconds: Double
    /// On SIGTERM/SIGINT, how long to wait for answers in flight before releasing them,
    /// in seconds (`PUSHQ_SHUTDOWN_SECONDS`). Defaults to 5.
    public var shutdownSeconds: Double
    /// How long final rows are kept before this worker's pruner deletes them, when it is the
    /// elected one (`PUSHQ_RETAIN_SENT_SECONDS`, `PUSHQ_RETAIN_FINAL_SECONDS`). Defaults to
    /// one day for `sent` rows and seven days for `failed`, `expired` and `cancelled` rows.
    public var retention: RetentionPolicy

    /// The defaults listed on each property.
    public init(databaseURL: String, workerID: String, credentials: [CredentialKey: Credential],
                defaultTopic: String?, sender: PushSenderConfiguration = PushSenderConfiguration(),
                apns: APNsConfiguration = APNsConfiguration(), fcm: FCMConfiguration = FCMConfiguration()) {
        self.databaseURL = databaseURL
        self.workerID = workerID
        self.credentials = credentials
        self.defaultTopic = defaultTopic
        self.credentialTopics = [:]
        self.sender = sender
        self.apns = apns
        self.fcm = fcm
        self.claimBatchSize = 500
        self.prefetch = 500
        self.leaseSeconds = 120
        self.pollSeconds = 1
        self.retryPolicy = RetryPolicy()
        self.pauseBaseSeconds = 30
        self.pauseCapSeconds = 900
        self.outageProbeBaseSeconds = 1
        self.outageProbeCapSeconds = 45
        self.heartbeatSeconds = 5
        self.expiryChunkRows = 1000
        self.expiryChunksPerTurn = 5
        self.statementTimeoutSeconds = 20
        self.statementDeadlineSeconds = 25
        self.shutdownRetrySeconds = 30
        self.shutdownSeconds = 5
        self.retention = RetentionPolicy()
    }

    /// How endpoints are held and probed (pauses and outages).
    public var holdPolicy: HoldPolicy {
        HoldPolicy(pauseBaseSeconds: pauseBaseSeconds, pauseCapSeconds: pauseCapSeconds,
                   outageBaseSeconds: outageProbeBaseSeconds, outageCapSeconds: outageProbeCapSeconds)
    }

    /// The bundle id of an APNs row of `credential` whose `topic` is NULL (its push type's
    /// suffix is added by `PushRequest(row:defaultTopic:sendBy:)`): the credential's topic, else the worker's; nil
    /// when neither is set.
    public func defaultTopic(credential: String) -> String? {
        credentialTopics[credential] ?? defaultTopic
    }

    /// The name rows with a NULL `credential` use.
    public static let defaultCredentialName = "default"

    /// Whether this worker has the credential of `endpoint` (of its provider).
    public func serves(_ endpoint: Endpoint) -> Bool { credentials[endpoint.credentialKey] != nil }

    /// Every endpoint this worker can send to: each APNs credential in both environments, each FCM
    /// credential, each Web Push credential as a whole (its origins are whatever rows name).
    public var endpoints: [Endpoint] {
        credentials.keys.sorted().flatMap { key -> [Endpoint] in
            switch key.provider {
            case .apns: return APNsEnvironment.allCases.map { Endpoint(credential: key.name, environment: $0) }
            case .fcm: return [.fcm(key.name)]
            case .webpush: return [.webPush(key.name, origin: nil)]
            }
        }
    }

    /// Rows in flight plus claimed ahead: the most rows this worker holds at once. The window
    /// is the larger of APNs' and (with FCM credentials) FCM's.
    public var holdLimit: Int {
        let fcmWindow = credentialNames(.fcm).isEmpty ? 0 : sender.connections * fcm.streamsPerConnection
        return max(sender.connections * apns.streamsPerConnection, fcmWindow) + prefetch
    }

    /// How long after its claim began a row may still start to be sent, in seconds: the lease
    /// less the request timeout and a margin of up to 5 s (half of what the lease leaves over
    /// the timeout). A row still waiting for a stream then is given back unsent, attempt
    /// refunded, so that no request is in flight when its lease runs out and another claim may
    /// take the row: a slow provider or a small window delays rows, it never sends them twice.
    public var sendWindowSeconds: Double {
        let spare = leaseSeconds - sender.requestTimeout
        return spare - min(Self.leaseMarginSeconds, spare / 2)
    }

    /// How much longer than the request timeout a lease must be, in seconds.
    public static let leaseMarginSeconds: Double = 5

    /// Whether the lease outlasts the request timeout by more than ``leaseMarginSeconds``:
    /// otherwise rows would be taken again while still in flight.
    public var leaseOutlastsRequests: Bool { leaseSeconds > sender.requestTimeout + Self.leaseMarginSeconds }

    /// Checks the values that depend on each other.
    ///
    /// - Throws: ``WorkerError`` `.configuration` saying which value to change.
    public func validate() throws {
        guard !credentials.isEmpty else {
            throw WorkerError(.configuration, "no credential: set PUSHQ_APNS_TEAM_ID, PUSHQ_APNS_KEY_ID and PUSHQ_APNS_KEY_FILE (APNs token auth), PUSHQ_APNS_CERT_FILE (APNs certificate auth), PUSHQ_FCM_SERVICE_ACCOUNT_FILE (FCM), PUSHQ_WEBPUSH_VAPID_KEY_FILE with PUSHQ_WEBPUSH_VAPID_SUBJECT (Web Push) or PUSHQ_CREDENTIALS_FILE")
        }
        if let key = credentials.first(where: { $0.key.provider != $0.value.provider })?.key {
            throw WorkerError(.configuration, "credential \(key) is a credential of \(credentials[key]?.provider.serviceName ?? "another provider"), not of \(key.provider.serviceName)")
        }
        if let url = channelsBaseURL, !url.lowercased().hasPrefix("https://") {
            throw WorkerError(.configuration, "PUSHQ_APNS_CHANNELS_URL must be an https:// URL (APNs is HTTP/2 over TLS), not \(url)")
        }
        if let url = fcm.baseURL, !url.lowercased().hasPrefix("https://") {
            throw WorkerError(.configuration, "PUSHQ_FCM_URL must be an https:// URL (FCM is HTTP/2 over TLS), not \(url)")
        }
        guard leaseOutlastsRequests else {
            throw WorkerError(.configuration, "PUSHQ_LEASE_SECONDS (\(leaseSeconds)) must exceed the request timeout (\(sender.requestTimeout) s) by more than \(Int(Self.leaseMarginSeconds)) s, or rows would be taken again while still in flight")
        }
        guard pauseCapSeconds >= pauseBaseSeconds else {
            throw WorkerError(.configuration, "PUSHQ_PAUSE_CAP_SECONDS must not be below PUSHQ_PAUSE_BASE_SECONDS")
        }
        guard outageProbeCapSeconds >= outageProbeBaseSeconds else {
            throw WorkerError(.configuration, "PUSHQ_OUTAGE_PROBE_CAP_SECONDS must not be below PUSHQ_OUTAGE_PROBE_BASE_SECONDS")
        }
        guard !workerID.isEmpty else { throw WorkerError(.configuration, "PUSHQ_WORKER_ID must not be empty") }
    }
}

/// A worker failure that stops it: bad configuration, or a database it cannot use.
public struct WorkerError: Error, Sendable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let name: String
        /// A setting is missing or malformed.
        public static let configuration = Code(name: "configuration")
        /// The database is missing the pushq schema or is too old.
        public static let schema = Code(name: "schema")
        public var description: String { name }
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
