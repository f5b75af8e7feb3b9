import PushCore
import PGClient

/// A row of `pushq.channels` a worker claimed: one operation to carry out at Apple.
public struct ClaimedChannel: Sendable, Hashable {
    public var id: Int64
    /// The producer's name for it.
    public var name: String
    /// `creating`: create it at Apple; `deleting`: delete it there (or, never created there, just record it `deleted`).
    public var operation: ChannelDecision.Operation
    /// `credential`, or `"default"`.
    public var credential: String
    /// `environment`, or the worker's default.
    public var environment: APNsEnvironment
    /// `topic`: the app's bundle id; nil for the credential's (or the worker's) default.
    public var topic: String?
    /// `message_storage_policy`: 0 or 1.
    public var messageStoragePolicy: Int
    /// `apns_channel_id`, nil until Apple created it.
    public var apnsChannelID: String?
    /// `attempts` including the one this claim started (not counted for a delete with nothing to delete).
    public var attempts: Int
    public var maxAttempts: Int
    /// `locked_until` of this claim in microseconds since the epoch: the fence of its write-back
    /// (moved on by ``PGConnection/renewChannelLease(_:workerID:leaseSeconds:)``).
    public var lease: Int64
    /// `create_requested_at` as the claim found it, microseconds since the epoch: a create was
    /// sent for this row and no channel id came back (its answer was lost, or its worker died
    /// before writing it back). Nil when no create was sent, or one was answered.
    public var unansweredCreate: Int64?

    /// The endpoint whose credential and environment the request uses.
    public var endpoint: Endpoint { Endpoint(credential: credential, environment: environment) }
}

/// What became of one claimed channel operation: written back by ``PGConnection/completeChannel(_:workerID:)``.
public struct ChannelCompletion: Sendable, Hashable {
    public var id: Int64
    public var lease: Int64
    /// What to write: ``ChannelDecision``, decided in PushCore.
    public var result: ChannelDecision
    /// `last_status`: the HTTP status, nil when none came.
    public var httpStatus: Int?
    /// `last_reason`: Apple's reason or pushq's, nil after a success.
    public var reason: String?
    /// `apns_request_id` of the answer, when Apple sent one.
    public var requestID: String?

    public init(id: Int64, lease: Int64, result: ChannelDecision, httpStatus: Int?, reason: String?, requestID: String? = nil) {
        self.id = id
        self.lease = lease
        self.result = result
        self.httpStatus = httpStatus
        self.reason = reason
        self.requestID = requestID
    }
}

extension PGConnection {
    /// Claims up to `limit` channels with an operation due, for this worker, in one statement
    /// (the channel loop claims one at a time: each is carried out under its own lease).
    ///
    /// Due: `creating` or `deleting`, `scheduled_at` passed, not held under a lease that still
    /// runs (a lapsed one is taken again: its worker died mid-request), of one of `credentials`
    /// (`"default"` for NULL), and of no endpoint whose credential is held (a `credential` row of
    /// `pushq.credential_pauses`, read in the statement's own snapshot: Apple's management API
    /// refuses a rejected key as the push host does; an outage or burst of the push host says
    /// nothing about the management host). Each is locked `FOR UPDATE SKIP LOCKED`,
    /// so workers that look at once take different rows, and held until now + `leaseSeconds`
    /// (`locked_by`, `locked_until`), `attempts` + 1, committed before anything is sent: one
    /// worker alone creates a channel however many see it.
    ///
    /// An operation whose outcome at Apple can be in doubt (a create, or the deletion of a row
    /// whose create went unanswered) is not claimed while another of the same app (credential,
    /// environment, bundle id) is held under a live lease: a worker that lists Apple's channels to
    /// find what a lost create made must not see one that another worker is creating right now.
    /// Claims run one after another (an advisory lock for the transaction), so that two claims
    /// see each other's rows.
    ///
    /// - Parameters:
    ///   - defaultEnvironment: the environment of channels whose `environment` is NULL.
    public func claimChannels(limit: Int, workerID: String, leaseSeconds: Double, credentials: [String],
                              defaultEnvironment: APNsEnvironment) throws(PGError) -> [ClaimedChannel] {
        let parameters: [(any PGParameter)?] = [credentials, credentials.contains("default"), defaultEnvironment.rawValue, limit, workerID, leaseSeconds]
        let result = try typedTransaction(begin: "BEGIN; SELECT pg_advisory_xact_lock(\(Self.channelClaimLockKey))") { c throws(PGError) in
            try c.query(Self.claimChannelsSQL, parameters)
        }
        var rows: [ClaimedChannel] = []
        for row in result.rows {
            let apnsChannelID = try row.string("apns_channel_id")
            rows.append(ClaimedChannel(
                id: try row.decode(Int64?.self, "id") ?? 0,
                name: try row.string("name") ?? "",
                operation: try row.string("status") == "deleting" ? .delete : .create,
                credential: try row.string("credential") ?? "default",
                environment: APNsEnvironment(rawValue: try row.string("environment") ?? "") ?? defaultEnvironment,
                topic: try row.string("topic"),
                messageStoragePolicy: try row.decode(Int?.self, "message_storage_policy") ?? 1,
                apnsChannelID: apnsChannelID,
                attempts: try row.decode(Int?.self, "attempts") ?? 0,
                maxAttempts: try row.decode(Int?.self, "max_attempts") ?? 1,
                lease: try row.decode(Int64?.self, "lease") ?? 0,
                unansweredCreate: apnsChannelID == nil ? try row.decode(Int64?.self, "create_requested") : nil))
        }
        return rows
    }

    /// The advisory lock that runs channel claims one after another ("pushchan").
    static let channelClaimLockKey: Int64 = 0x7075_7368_6368_616E

    /// ``claimChannels(limit:workerID:leaseSeconds:credentials:defaultEnvironment:)``'s statement.
    static let claimChannelsSQL = """
        WITH picked AS (
            SELECT c.id FROM pushq.channels c
             WHERE c.status IN ('creating', 'deleting')
               AND c.scheduled_at <= now()
               AND (c.locked_until IS NULL OR c.locked_until < now())
               AND (c.credential = ANY($1::text[]) OR (c.credential IS NULL AND $2))
               AND NOT EXISTS (SELECT 1 FROM pushq.credential_pauses h
                                WHERE h.kind = 'credential'
                                  AND h.credential = COALESCE(c.credential, 'default')
                                  AND h.environment = COALESCE(c.environment, $3))
               AND NOT ((c.status = 'creating' OR c.apns_channel_id IS NULL)
                        AND EXISTS (SELECT 1 FROM pushq.channels o
                                     WHERE o.id <> c.id
                                       AND o.status IN ('creating', 'deleting')
                                       AND (o.status = 'creating' OR o.apns_channel_id IS NULL)
                                       AND o.locked_until >= now()
                                       AND COALESCE(o.credential, 'default') = COALESCE(c.credential, 'default')
                                       AND COALESCE(o.environment, $3) = COALESCE(c.environment, $3)
                                       AND o.topic IS NOT DISTINCT FROM c.topic))
             ORDER BY c.scheduled_at, c.id
             LIMIT $4
               FOR UPDATE SKIP LOCKED
        )
        UPDATE pushq.channels c
           SET locked_by = $5, locked_until = now() + $6 * interval '1 second',
               attempts = c.attempts + CASE WHEN c.status = 'deleting' AND c.apns_channel_id IS NULL THEN 0 ELSE 1 END
          FROM picked p
         WHERE c.id = p.id
        RETURNING c.id, c.name, c.status, COALESCE(c.credential, 'default') AS credential, COALESCE(c.environment, $3) AS environment, c.topic,
                  c.message_storage_policy, c.apns_channel_id, c.attempts, c.max_attempts,
                  (extract(epoch FROM c.locked_until) * 1000000)::bigint AS lease,
                  (extract(epoch FROM c.create_requested_at) * 1000000)::bigint AS create_requested
        """

    /// Records the create about to be sent for `channel` (`create_requested_at` now,
    /// `create_request_id`) and renews its lease, fenced by the claim: committed before the
    /// request goes out, so that whoever claims the row next knows a channel may exist at Apple.
    ///
    /// - Returns: the new lease (the fence from here on); nil when the claim no longer holds the row.
    public func recordCreateAttempt(_ channel: ClaimedChannel, requestID: String, workerID: String,
                                    leaseSeconds: Double) throws(PGError) -> Int64? {
        let r = try query("""
            UPDATE pushq.channels c
               SET create_requested_at = now(), create_request_id = $4, apns_request_id = $4,
                   locked_until = now() + $5 * interval '1 second'
             WHERE c.id = $1 AND c.locked_by = $2 AND (extract(epoch FROM c.locked_until) * 1000000)::bigint = $3
            RETURNING (extract(epoch FROM c.locked_until) * 1000000)::bigint AS lease
            """, [channel.id, workerID, channel.lease, requestID, leaseSeconds])
        return try r.rows.first?.decode(Int64?.self, "lease")
    }

    /// Renews the lease of a claimed channel before one more request, fenced by the claim.
    ///
    /// - Returns: the new lease; nil when the claim no longer holds the row.
    public func renewChannelLease(_ channel: ClaimedChannel, workerID: String, leaseSeconds: Double) throws(PGError) -> Int64? {
        let r = try query("""
            UPDATE pushq.channels c SET locked_until = now() + $4 * interval '1 second'
             WHERE c.id = $1 AND c.locked_by = $2 AND (extract(epoch FROM c.locked_until) * 1000000)::bigint = $3
            RETURNING (extract(epoch FROM c.locked_until) * 1000000)::bigint AS lease
            """, [channel.id, workerID, channel.lease, leaseSeconds])
        return try r.rows.first?.decode(Int64?.self, "lease")
    }

    /// What the worker weighs, after an unanswered create, against the ids Apple lists for the
    /// app `bundleID` of `channel`'s credential and environment.
    public struct UnansweredCreateFacts: Sendable, Hashable {
        /// Every `apns_channel_id` of `pushq.channels`: channels pushq knows, never touched.
        public var known: Set<String>
        /// Rows of the same app with a create sent and no id (this one included).
        public var unansweredRows: Int
        /// The ids the last reconciliation of the app that ended before the row's create found
        /// unknown: channels that existed before it, someone else's.
        public var unknownBefore: Set<String>
    }

    /// ``UnansweredCreateFacts`` for `channel`, whose ``ClaimedChannel/unansweredCreate`` is set.
    public func unansweredCreateFacts(_ channel: ClaimedChannel, bundleID: String) throws(PGError) -> UnansweredCreateFacts {
        let known = try query("SELECT apns_channel_id FROM pushq.channels WHERE apns_channel_id IS NOT NULL")
        let rest = try query("""
            SELECT (SELECT count(*) FROM pushq.channels o
                     WHERE o.apns_channel_id IS NULL AND o.create_requested_at IS NOT NULL
                       AND o.status IN ('creating', 'deleting')
                       AND COALESCE(o.credential, 'default') = $1 AND COALESCE(o.environment, $2) = $2
                       AND (o.topic = $3 OR (o.topic IS NULL AND $4))) AS unanswered_rows,
                   (SELECT array_to_string(r.unknown_ids, ' ') FROM pushq.channel_reconciliations r
                     WHERE r.credential = $1 AND r.environment = $2 AND r.topic = $3
                       AND r.checked_at < to_timestamp($5::double precision / 1000000)) AS unknown_before
            """, [channel.credential, channel.environment.rawValue, bundleID, channel.topic == nil,
                  Double(channel.unansweredCreate ?? 0)])
        let facts = try rest.firstRow()
        return UnansweredCreateFacts(
            known: Set(try known.rows.map { row throws(PGError) in try row.string("apns_channel_id") }.compactMap { $0 }),
            unansweredRows: try facts.decode(Int?.self, "unanswered_rows") ?? 0,
            unknownBefore: Set((try facts.string("unknown_before") ?? "").split(separator: " ").map(String.init)))
    }

    /// Writes back one channel operation, fenced: only while the row is held under the claim
    /// that carried it out (`locked_until` is still its ``ClaimedChannel/lease``). A producer's
    /// deletion that came meanwhile is kept: a channel created for it stays `deleting` with its
    /// id (the next claim deletes it), a create that failed for it ends `deleted`.
    ///
    /// - Returns: the channel's status afterwards; nil when the claim no longer held the row.
    @discardableResult
    public func completeChannel(_ completion: ChannelCompletion, workerID: String) throws(PGError) -> String? {
        let kind: String
        var channelID: String?
        var after = 0.0
        switch completion.result {
        case .created(let id): kind = "created"; channelID = id
        case .deleted: kind = "deleted"
        case .retry(let seconds, let refund): kind = refund ? "refund" : "retry"; after = seconds
        case .failed: kind = "failed"
        }
        let result = try query("""
            UPDATE pushq.channels c
               SET status = CASE $2
                                WHEN 'created' THEN CASE WHEN c.status = 'creating' THEN 'active' ELSE c.status END
                                WHEN 'deleted' THEN 'deleted'
                                WHEN 'failed' THEN CASE WHEN c.status = 'deleting' AND c.apns_channel_id IS NULL THEN 'deleted' ELSE 'failed' END
                                ELSE c.status END,
                   apns_channel_id = COALESCE($3, c.apns_channel_id),
                   activated_at = CASE WHEN $2 = 'created' THEN now() ELSE c.activated_at END,
                   attempts = CASE $2 WHEN 'created' THEN 0 WHEN 'refund' THEN greatest(c.attempts - 1, 0) ELSE c.attempts END,
                   scheduled_at = CASE WHEN $2 IN ('retry', 'refund') THEN now() + $4 * interval '1 second' ELSE now() END,
                   last_status = $5, last_reason = $6, apns_request_id = COALESCE($7, c.apns_request_id),
                   locked_by = NULL, locked_until = NULL
             WHERE c.id = $1
               AND c.locked_by = $9
               AND (extract(epoch FROM c.locked_until) * 1000000)::bigint = $8
            RETURNING c.status
            """, [completion.id, kind, channelID, after, completion.httpStatus, completion.reason, completion.requestID,
                  completion.lease, workerID])
        return try result.rows.first?.string("status")
    }
}
