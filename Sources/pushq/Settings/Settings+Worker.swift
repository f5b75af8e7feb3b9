import PushTransport
import PushCore
import PushWorker

extension Settings {
    /// Everything `pushq worker` runs with: database, credentials (every file loaded and
    /// checked), senders, tuning, retention.
    ///
    /// - Parameter defaultWorkerID: the worker id when none is given (`host:pid`).
    /// - Throws: ``SettingError`` naming the flag or variable whose value is not allowed (values
    ///   that depend on each other name one and the other's value), ``CommandFailure`` for a
    ///   credential that cannot be loaded, `WorkerError` for a worker without credentials.
    func workerConfiguration(defaultWorkerID: () -> String) throws -> WorkerConfiguration {
        let c = try workerConfiguration(credentials: try credentials(), defaultWorkerID: defaultWorkerID)
        try c.validate()
        return c
    }

    /// The worker's configuration with `resolved` credentials (loaded already): no I/O.
    ///
    /// - Throws: ``SettingError`` naming the flag or variable whose value is not allowed.
    func workerConfiguration(credentials resolved: ResolvedCredentials, defaultWorkerID: () -> String) throws -> WorkerConfiguration {
        var c = WorkerConfiguration(databaseURL: try databaseURL(), workerID: try text(.workerID) ?? defaultWorkerID(),
                                    credentials: resolved.credentials, defaultTopic: try text(.apnsTopic), sender: try senderConfiguration(),
                                    apns: try apnsConfiguration(), fcm: try fcmConfiguration())
        c.credentialTopics = resolved.topics
        c.credentialCaps = resolved.caps
        c.webPush = try webPushConfiguration()
        c.channelsBaseURL = try text(.apnsChannelsURL)
        if let s = try seconds(.channelReconcileSeconds) { c.channelReconcileSeconds = s }
        if let n = try wholeNumber(.claimBatch) { c.claimBatchSize = n }
        if let n = try wholeNumber(.prefetch) { c.prefetch = n }
        if let s = try seconds(.leaseSeconds) { c.leaseSeconds = s }
        if let s = try seconds(.pollSeconds) { c.pollSeconds = s }
        if let s = try seconds(.pauseBaseSeconds) { c.pauseBaseSeconds = s }
        if let s = try seconds(.pauseCapSeconds) { c.pauseCapSeconds = s }
        if let s = try seconds(.outageProbeBaseSeconds) { c.outageProbeBaseSeconds = s }
        if let s = try seconds(.outageProbeCapSeconds) { c.outageProbeCapSeconds = s }
        if let s = try seconds(.shutdownSeconds) { c.shutdownSeconds = s }
        let retry = c.retryPolicy
        let (base, cap) = (try seconds(.retryBaseSeconds) ?? retry.baseSeconds, try seconds(.retryCapSeconds) ?? retry.capSeconds)
        try require((.retryBaseSeconds, base), atMost: (.retryCapSeconds, cap))  // before RetryPolicy, which requires it
        c.retryPolicy = RetryPolicy(baseSeconds: base, capSeconds: cap, throttleDelaySeconds: retry.throttleDelaySeconds)
        c.retention = try retention()
        try checkTogether(c)
        return c
    }

    /// The values that depend on each other: each cap not below its base (the retry's is
    /// checked before its policy is built), the lease longer
    /// than the request timeout by more than 5 s (or rows would be taken again while in flight).
    ///
    /// - Throws: ``SettingError`` naming one of the two.
    private func checkTogether(_ c: WorkerConfiguration) throws {
        try require((.pauseBaseSeconds, c.pauseBaseSeconds), atMost: (.pauseCapSeconds, c.pauseCapSeconds))
        try require((.outageProbeBaseSeconds, c.outageProbeBaseSeconds), atMost: (.outageProbeCapSeconds, c.outageProbeCapSeconds))
        let timeout = c.sender.requestTimeout
        guard c.leaseOutlastsRequests else {
            let margin = SettingKey.format(WorkerConfiguration.leaseMarginSeconds)
            let (lease, request) = (SettingKey.leaseSeconds, SettingKey.requestTimeout)
            let why = "or rows would be taken again while still in flight"
            if given(lease) == nil, let blamed = given(request) {
                throw SettingError(setting: blamed.name, value: blamed.text,
                                   expected: "less than \(lease.variable) (\(SettingKey.format(c.leaseSeconds))) - \(margin) seconds, \(why)")
            }
            throw SettingError(setting: lease.variable, value: given(lease)?.text ?? SettingKey.format(c.leaseSeconds),
                               expected: "more than \(request.variable) (\(SettingKey.format(timeout))) + \(margin) seconds, \(why)")
        }
    }

    /// The worker's HTTP listener, nil when off.
    ///
    /// - Throws: ``SettingError`` for a value that is not `host:port`.
    func httpAddress() throws -> HTTPAddress? {
        if case .address(let address)? = try value(.httpAddr) { return address }
        return nil
    }
}
