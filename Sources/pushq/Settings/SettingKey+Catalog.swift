import Logging

/// Every setting pushq reads. A new `PUSHQ_*` variable gets a line here and a row in
/// `docs/configuration.md`; a test checks that the two agree, and that every flag of every
/// command's `--help` is documented.
extension SettingKey {
    static let all: [SettingKey] = common + credentialKeys + sending + tuning + retention + serving

    /// Read by every command.
    static let common: [SettingKey] = [databaseURL, logFormat, logLevel]
    /// The worker's credentials.
    static let credentialKeys: [SettingKey] = [
        teamID, keyID, keyFile, certFile, certPassword, credentialsFile, fcmServiceAccountFile,
        webPushVAPIDKeyFile, webPushVAPIDSubject,
    ]
    /// What the worker sends to and how it is seen.
    static let sending: [SettingKey] = [apnsTopic, apnsEnvironment, apnsURL, apnsChannelsURL, fcmURL, caFile, workerID, httpAddr,
                                           webPushCAFile, webPushAllowedOrigins]
    /// The worker's tuning: variables only, but for the connections and timeouts every provider shares.
    static let tuning: [SettingKey] = [
        connections, apnsStreams, fcmStreams, requestTimeout, connectTimeout, claimBatch, prefetch,
        leaseSeconds, pollSeconds, retryBaseSeconds, retryCapSeconds, pauseBaseSeconds, pauseCapSeconds,
        outageProbeBaseSeconds, outageProbeCapSeconds, shutdownSeconds, channelReconcileSeconds,
        webPushMaxConnections,
    ]
    /// How long final rows are kept (the worker's pruner and `pushq prune`).
    static let retention: [SettingKey] = [retainSentSeconds, retainFinalSeconds]
    /// `pushq serve`'s own (it also reads `PUSHQ_HTTP_ADDR`).
    static let serving: [SettingKey] = [httpTLSCert, httpTLSKey, tlsTerminatedByProxy, httpTrustedProxies, serveConnections, serveDashboardConnections, serveDatabaseWait, serveDatabaseQueue,
                                           dashboardQueryTimeout, httpIdleTimeout, httpHeaderTimeout, httpMaxConnections]

    // MARK: Every command

    static let databaseURL = SettingKey(
        variable: "PUSHQ_DATABASE_URL", flag: "--database-url", defaultValue: "none (required)", kind: .text,
        summary: "libpq connection URI or conninfo string.")
    static let logFormat = SettingKey(
        variable: "PUSHQ_LOG_FORMAT", flag: nil, defaultValue: "text", kind: .choice(["text", "json"]),
        summary: "Log lines on standard error as text or as one JSON object per line.")
    static let logLevel = SettingKey(
        variable: "PUSHQ_LOG_LEVEL", flag: "--verbose", defaultValue: "info", kind: .choice(Logger.Level.allCases.map(\.rawValue)),
        summary: "The least severe level logged; --verbose sets debug.")

    // MARK: Credentials

    static let teamID = SettingKey(
        variable: "PUSHQ_APNS_TEAM_ID", flag: "--team-id", defaultValue: "none", kind: .text,
        summary: "Apple team id (APNs token auth).")
    static let keyID = SettingKey(
        variable: "PUSHQ_APNS_KEY_ID", flag: "--key-id", defaultValue: "none", kind: .text,
        summary: "Key id of the .p8 key (APNs token auth).")
    static let keyFile = SettingKey(
        variable: "PUSHQ_APNS_KEY_FILE", flag: "--key-file", defaultValue: "none", kind: .file,
        summary: "Path of the .p8 key, PKCS#8 PEM (APNs token auth).")
    static let certFile = SettingKey(
        variable: "PUSHQ_APNS_CERT_FILE", flag: "--cert-file", defaultValue: "none", kind: .file,
        summary: "PKCS#12 (.p12) or PEM client certificate (APNs certificate auth).")
    static let certPassword = SettingKey(
        variable: "PUSHQ_APNS_CERT_PASSWORD", flag: "--cert-password", defaultValue: "none", kind: .text,
        summary: "Password of the certificate file. Prefer the variable: flags show in `ps`.")
    static let credentialsFile = SettingKey(
        variable: "PUSHQ_CREDENTIALS_FILE", flag: "--credentials-file", defaultValue: "none", kind: .file,
        summary: "JSON file naming several credentials, for the rows' credential column.")
    static let fcmServiceAccountFile = SettingKey(
        variable: "PUSHQ_FCM_SERVICE_ACCOUNT_FILE", flag: "--fcm-service-account-file", defaultValue: "none", kind: .file,
        summary: "Firebase service account JSON key file: the default FCM credential.")

    // MARK: Sending

    static let apnsTopic = SettingKey(
        variable: "PUSHQ_APNS_TOPIC", flag: "--topic", defaultValue: "none", kind: .text,
        summary: "Default apns-topic (bundle id) for rows whose topic is NULL and whose credential has no topic.")
    static let apnsEnvironment = SettingKey(
        variable: "PUSHQ_APNS_ENVIRONMENT", flag: "--environment", defaultValue: "production",
        kind: .choice(["production", "development"]),
        summary: "Environment of rows whose environment is NULL.")
    static let apnsURL = SettingKey(
        variable: "PUSHQ_APNS_URL", flag: "--apns-url", defaultValue: "Apple's hosts", kind: .httpsURL,
        summary: "Base URL replacing Apple's hosts (a mock or a proxy).")
    static let apnsChannelsURL = SettingKey(
        variable: "PUSHQ_APNS_CHANNELS_URL", flag: "--apns-channels-url", defaultValue: "Apple's channel-management hosts", kind: .httpsURL,
        summary: "Base URL replacing Apple's channel-management hosts for broadcast channels (a mock or a proxy).")
    static let fcmURL = SettingKey(
        variable: "PUSHQ_FCM_URL", flag: "--fcm-url", defaultValue: "https://fcm.googleapis.com", kind: .httpsURL,
        summary: "Base URL replacing FCM's host (a mock or a proxy).")
    static let caFile = SettingKey(
        variable: "PUSHQ_CA_FILE", flag: "--ca-file", defaultValue: "none", kind: .file,
        summary: "Extra trusted CA certificate (PEM), added to the system's roots for every provider and FCM's token endpoint.",
        aliases: ["PUSHQ_APNS_CA_FILE"])
    static let workerID = SettingKey(
        variable: "PUSHQ_WORKER_ID", flag: "--worker-id", defaultValue: "host:pid", kind: .text,
        summary: "Worker id written to locked_by and pushq.workers.")
    static let httpAddr = SettingKey(
        variable: "PUSHQ_HTTP_ADDR", flag: "--http-addr", defaultValue: "off (serve: 127.0.0.1:8080)", kind: .address,
        summary: "The HTTP listener's host:port: the worker's /metrics, /healthz and /readyz; serve's API and dashboard.")

    // MARK: Tuning

    static let connections = SettingKey(
        variable: "PUSHQ_CONNECTIONS", flag: "--connections", defaultValue: "2", kind: .wholeNumber(1...64),
        summary: "HTTP/2 connections per APNs (credential, environment) and per FCM credential, opened a second apart.",
        aliases: ["PUSHQ_APNS_CONNECTIONS"])
    static let apnsStreams = SettingKey(
        variable: "PUSHQ_APNS_STREAMS", flag: nil, defaultValue: "500", kind: .wholeNumber(1...10_000),
        summary: "Requests in flight per connection to APNs (APNs allows 1000).")
    static let fcmStreams = SettingKey(
        variable: "PUSHQ_FCM_STREAMS", flag: nil, defaultValue: "100", kind: .wholeNumber(1...1000),
        summary: "Requests in flight per connection to FCM (FCM allows 100).")
    static let requestTimeout = SettingKey(
        variable: "PUSHQ_REQUEST_TIMEOUT", flag: "--request-timeout", defaultValue: "30", kind: .seconds(0.001...3600),
        summary: "Seconds before a request without an answer fails (TransportTimeout) and is retried.",
        aliases: ["PUSHQ_APNS_REQUEST_TIMEOUT"])
    static let connectTimeout = SettingKey(
        variable: "PUSHQ_CONNECT_TIMEOUT", flag: "--connect-timeout", defaultValue: "10", kind: .seconds(0.001...3600),
        summary: "Seconds for a connection's TCP and TLS setup.",
        aliases: ["PUSHQ_APNS_CONNECT_TIMEOUT"])
    static let claimBatch = SettingKey(
        variable: "PUSHQ_CLAIM_BATCH", flag: nil, defaultValue: "500", kind: .wholeNumber(1...10_000),
        summary: "Most rows claimed by one statement.")
    static let prefetch = SettingKey(
        variable: "PUSHQ_PREFETCH", flag: nil, defaultValue: "500", kind: .wholeNumber(0...100_000),
        summary: "Rows claimed beyond the requests in flight, so the window never drains between claims.")
    static let leaseSeconds = SettingKey(
        variable: "PUSHQ_LEASE_SECONDS", flag: nil, defaultValue: "120", kind: .seconds(1...86_400),
        summary: "How long a claimed row stays this worker's; more than the request timeout + 5.")
    static let pollSeconds = SettingKey(
        variable: "PUSHQ_POLL_SECONDS", flag: nil, defaultValue: "1", kind: .seconds(0.01...3600),
        summary: "How often an idle worker looks for lapsed leases; it wakes for new rows and when the next scheduled, retrying or held row comes due.")
    static let retryBaseSeconds = SettingKey(
        variable: "PUSHQ_RETRY_BASE_SECONDS", flag: nil, defaultValue: "1", kind: .seconds(0.001...86_400),
        summary: "Shortest wait before a retry.")
    static let retryCapSeconds = SettingKey(
        variable: "PUSHQ_RETRY_CAP_SECONDS", flag: nil, defaultValue: "600", kind: .seconds(0.001...864_000),
        summary: "Longest backoff before a retry; not below the base.")
    static let pauseBaseSeconds = SettingKey(
        variable: "PUSHQ_PAUSE_BASE_SECONDS", flag: nil, defaultValue: "30", kind: .seconds(0.01...86_400),
        summary: "First probe of a paused credential (or burst).")
    static let pauseCapSeconds = SettingKey(
        variable: "PUSHQ_PAUSE_CAP_SECONDS", flag: nil, defaultValue: "900", kind: .seconds(0.01...86_400),
        summary: "Longest interval between probes of a paused credential; not below the base.")
    static let outageProbeBaseSeconds = SettingKey(
        variable: "PUSHQ_OUTAGE_PROBE_BASE_SECONDS", flag: nil, defaultValue: "1", kind: .seconds(0.01...3600),
        summary: "First probe of an endpoint that is down.")
    static let outageProbeCapSeconds = SettingKey(
        variable: "PUSHQ_OUTAGE_PROBE_CAP_SECONDS", flag: nil, defaultValue: "45", kind: .seconds(0.01...3600),
        summary: "Longest interval between probes of an endpoint that is down; not below the base.")
    static let channelReconcileSeconds = SettingKey(
        variable: "PUSHQ_CHANNEL_RECONCILE_SECONDS", flag: nil, defaultValue: "86400", kind: .seconds(1...31_536_000),
        summary: "How often one worker compares each app's broadcast channels at Apple (all-channels) with pushq.channels.")
    static let shutdownSeconds = SettingKey(
        variable: "PUSHQ_SHUTDOWN_SECONDS", flag: nil, defaultValue: "5", kind: .seconds(0...3600),
        summary: "On SIGTERM or SIGINT, how long to wait for answers in flight.")

    // MARK: Retention

    static let retainSentSeconds = SettingKey(
        variable: "PUSHQ_RETAIN_SENT_SECONDS", flag: nil, defaultValue: "86400", kind: .seconds(0...315_360_000),
        summary: "How long sent rows are kept after they finished.")
    static let retainFinalSeconds = SettingKey(
        variable: "PUSHQ_RETAIN_FINAL_SECONDS", flag: nil, defaultValue: "604800", kind: .seconds(0...315_360_000),
        summary: "How long failed, expired and cancelled rows are kept after they finished.")

    // MARK: Serve

    static let httpTLSCert = SettingKey(
        variable: "PUSHQ_HTTP_TLS_CERT", flag: "--http-tls-cert", defaultValue: "none", kind: .file,
        summary: "serve: PEM certificate chain; with PUSHQ_HTTP_TLS_KEY, serve speaks HTTPS.")
    static let httpTLSKey = SettingKey(
        variable: "PUSHQ_HTTP_TLS_KEY", flag: "--http-tls-key", defaultValue: "none", kind: .file,
        summary: "serve: PEM private key of the certificate.")
    static let tlsTerminatedByProxy = SettingKey(
        variable: "PUSHQ_HTTP_TLS_TERMINATED_BY_PROXY", flag: "--tls-terminated-by-proxy", defaultValue: "false", kind: .choice(["true", "false"]),
        summary: "serve: a proxy in front terminates TLS, so serve may listen beyond loopback in plain HTTP.")
    static let httpTrustedProxies = SettingKey(
        variable: "PUSHQ_HTTP_TRUSTED_PROXIES", flag: "--http-trusted-proxies", defaultValue: "none", kind: .text,
        summary: "serve: comma-separated CIDRs (IPv4, IPv6) of the proxies whose X-Forwarded-For is believed; the client is the first hop from the right outside them, else the TCP peer.")
    static let serveConnections = SettingKey(
        variable: "PUSHQ_SERVE_CONNECTIONS", flag: "--db-connections", defaultValue: "4", kind: .wholeNumber(1...64),
        summary: "serve: PostgreSQL connections at most (one per request in progress).")
    static let serveDashboardConnections = SettingKey(
        variable: "PUSHQ_SERVE_DASHBOARD_CONNECTIONS", flag: "--dashboard-db-connections", defaultValue: "2", kind: .wholeNumber(1...64),
        summary: "serve: the dashboard's own PostgreSQL connections, apart from the API's (searches never take a producer's).")
    static let serveDatabaseWait = SettingKey(
        variable: "PUSHQ_SERVE_DB_WAIT", flag: "--db-wait", defaultValue: "5", kind: .seconds(0.001...600),
        summary: "serve: how long a request waits for a free PostgreSQL connection before 503 database_busy.")
    static let serveDatabaseQueue = SettingKey(
        variable: "PUSHQ_SERVE_DB_QUEUE", flag: "--db-queue", defaultValue: "100", kind: .wholeNumber(0...100_000),
        summary: "serve: requests that may wait for a connection of one pool (API, dashboard) at once; beyond, 503 database_busy at once.")
    static let dashboardQueryTimeout = SettingKey(
        variable: "PUSHQ_DASHBOARD_QUERY_TIMEOUT", flag: "--dashboard-query-timeout", defaultValue: "5", kind: .seconds(0.1...3600),
        summary: "serve: the statement timeout of the dashboard's reads (searches, the failures list); a page cut by it says so.")
    static let httpIdleTimeout = SettingKey(
        variable: "PUSHQ_HTTP_IDLE_TIMEOUT", flag: "--http-idle-timeout", defaultValue: "60", kind: .seconds(0.1...86_400),
        summary: "serve: a connection with no request in progress for this long is closed.")
    static let httpHeaderTimeout = SettingKey(
        variable: "PUSHQ_HTTP_HEADER_TIMEOUT", flag: "--http-header-timeout", defaultValue: "10", kind: .seconds(0.1...3600),
        summary: "serve: a request's head must arrive within this long of the connection's start (or the request's first byte); else the connection is closed.")
    static let httpMaxConnections = SettingKey(
        variable: "PUSHQ_HTTP_MAX_CONNECTIONS", flag: "--http-max-connections", defaultValue: "1000", kind: .wholeNumber(1...1_000_000),
        summary: "serve: open connections at most; one more is closed as soon as it is accepted.")
}
