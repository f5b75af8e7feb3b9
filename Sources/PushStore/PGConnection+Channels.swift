import PushCore

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
    /// `locked_until` of this claim in microseconds since the epoch: the fence of its write-back.
    public var lease: Int64

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
    /// Claims up to `limit` channels with an operation due, for this worker, in one statement.
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
    /// - Parameters:
    ///   - defaultEnvironment: the environment of channels whose `environment` is NULL.
    public func claimChannels(limit: Int, workerID: String, leaseSeconds: Double, credentials: [String],
                              defaultEnvironment: APNsEnvironment) throws(PGError) -> [ClaimedChannel] {
        let result = try query("""
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
                 ORDER BY c.scheduled_at, c.id
                 LIMIT $4
                   FOR UPDATE SKIP LOCKED
            )
            UPDATE pushq.channels c
               SET locked_by = $5, locked_until = now() + $6 * interval '1 second',
                   attempts = c.attempts + CASE WHEN c.status = 'deleting' AND c.apns_channel_id IS NULL THEN 0 ELSE 1 END
              FROM picked p
             WHERE c.id = p.id
            RETURNING c.id, c.name, c.status, COALESCE(c.credential, 'default'), COALESCE(c.environment, $3), c.topic,
                      c.message_storage_policy, c.apns_channel_id, c.attempts, c.max_attempts,
                      (extract(epoch FROM c.locked_until) * 1000000)::bigint
            """, [credentials, credentials.contains("default"), defaultEnvironment.rawValue, limit, workerID, leaseSeconds])
        var rows: [ClaimedChannel] = []
        for r in 0..<result.count {
            rows.append(ClaimedChannel(
                id: try result.decode(Int64.self, r, 0) ?? 0,
                name: result.string(r, 1) ?? "",
                operation: result.string(r, 2) == "deleting" ? .delete : .create,
                credential: result.string(r, 3) ?? "default",
                environment: APNsEnvironment(rawValue: result.string(r, 4) ?? "") ?? defaultEnvironment,
                topic: result.string(r, 5),
                messageStoragePolicy: try result.decode(Int.self, r, 6) ?? 1,
                apnsChannelID: result.string(r, 7),
                attempts: try result.decode(Int.self, r, 8) ?? 0,
                maxAttempts: try result.decode(Int.self, r, 9) ?? 1,
                lease: try result.decode(Int64.self, r, 10) ?? 0))
        }
        return rows
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
        return result.count == 0 ? nil : result.string(0, 0)
    }
}
