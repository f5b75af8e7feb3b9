import Foundation
import PushCore

/// A row the worker claimed, with what is needed to send it.
public struct ClaimedRow: Sendable {
    /// What the claim did with the row.
    public enum Verdict: String, Sendable {
        /// Now `sending`, held by this worker: send it.
        case send = "sending"
        /// `expires_at` had passed: now `expired` (final). Not to be sent.
        case expired
        /// Its token is invalid in `pushq.devices`: now `failed`/`TokenInvalidated` (final). Not to be sent.
        case tokenInvalidated = "failed"
    }

    public var id: Int64
    public var verdict: Verdict
    public var deviceToken: String
    /// The stored JSON, byte for byte (empty unless `verdict == .send`).
    public var payload: [UInt8]
    public var topic: String?
    public var pushType: PushType
    public var priority: Int?
    /// `expires_at` in UNIX seconds.
    public var expiresAt: Int64?
    public var collapseID: String?
    /// `apns_id`, lower-case canonical text.
    public var apnsID: String
    /// `environment`, or the worker's default.
    public var environment: APNsEnvironment
    /// `credential`, or `"default"`.
    public var credential: String
    /// `attempts` including the one this claim started.
    public var attempts: Int
    public var maxAttempts: Int
    /// `last_reason` before this claim (the previous attempt's).
    public var lastReason: String?
}

/// The write-back of one attempt: a row's ``Disposition`` plus APNs' answer.
public struct RowCompletion: Sendable {
    public var id: Int64
    /// The `attempts` value the row had when this worker claimed it (the fence).
    public var attempt: Int
    public var disposition: Disposition
    /// `last_status`: the HTTP status, nil when none came.
    public var httpStatus: Int?
    /// `apns-unique-id`, if APNs sent one.
    public var apnsUniqueID: UUID?

    public init(id: Int64, attempt: Int, disposition: Disposition, httpStatus: Int?, apnsUniqueID: UUID?) {
        self.id = id
        self.attempt = attempt
        self.disposition = disposition
        self.httpStatus = httpStatus
        self.apnsUniqueID = apnsUniqueID
    }
}

/// A token to record as invalid in `pushq.devices`.
public struct TokenInvalidation: Sendable, Hashable {
    public var deviceToken: String
    public var environment: APNsEnvironment
    public var reason: String
    /// Milliseconds since the epoch; nil for "now" (database clock).
    public var atMilliseconds: Int64?

    public init(deviceToken: String, environment: APNsEnvironment, reason: String, atMilliseconds: Int64?) {
        self.deviceToken = deviceToken
        self.environment = environment
        self.reason = reason
        self.atMilliseconds = atMilliseconds
    }
}

/// A (credential, environment) that APNs rejected as a whole.
public struct CredentialPause: Sendable, Hashable {
    public var credential: String
    public var environment: APNsEnvironment
    /// The APNs reason (`InvalidProviderToken`) or `BadDeviceTokenBurst`.
    public var reason: String
    /// One sentence for operators.
    public var message: String

    public init(credential: String, environment: APNsEnvironment, reason: String, message: String) {
        self.credential = credential
        self.environment = environment
        self.reason = reason
        self.message = message
    }
}

extension PGConnection {
    /// Claims up to `limit` due rows in one statement, for this worker, with the database clock.
    ///
    /// Due rows are `queued`/`retrying` with `scheduled_at <= now()`, and `sending` rows whose
    /// lease ran out (their worker died), of the given credentials and not paused. Each is
    /// locked with `FOR UPDATE SKIP LOCKED` (concurrent workers take different rows), then:
    /// expired ones end `expired`, ones whose token is invalid end `failed`/`TokenInvalidated`,
    /// the rest become `sending`, held by `workerID` until now + `leaseSeconds`, `attempts` + 1.
    /// The statement commits before anything is sent.
    ///
    /// - Parameters:
    ///   - credentials: names this worker can send with (`"default"` for NULL).
    ///   - defaultEnvironment: the environment of rows whose `environment` is NULL.
    ///   - paused: `"credential/environment"` pairs not to claim (see ``activePauseKeys()``).
    public func claim(limit: Int, workerID: String, leaseSeconds: Double, credentials: [String],
                      defaultEnvironment: APNsEnvironment, paused: [String] = []) throws(PGError) -> [ClaimedRow] {
        // Filters are written so the planner can estimate them (no expressions over columns):
        // with a misjudged filter it sorts every waiting row instead of walking notifications_due.
        var parameters: [(any PGParameter)?] = [limit, workerID, leaseSeconds, credentials.filter { $0 != "default" },
                                                 defaultEnvironment.rawValue, credentials.contains("default")]
        let sql: String
        if paused.isEmpty {
            sql = Self.claimSQL
        } else {
            sql = Self.claimSQL.replacingOccurrences(of: "/*PAUSED*/", with:
                "AND COALESCE(n.credential, 'default') || '/' || COALESCE(n.environment, $5) <> ALL ($7::text[])")
            parameters.append(paused)
        }
        let result = try query(sql, parameters)
        var rows: [ClaimedRow] = []
        rows.reserveCapacity(result.count)
        for r in 0..<result.count {
            guard let verdict = ClaimedRow.Verdict(rawValue: result.string(r, 1) ?? ""),
                  let pushType = PushType(rawValue: result.string(r, 5) ?? ""),
                  let environment = APNsEnvironment(rawValue: result.string(r, 10) ?? "") else {
                throw PGError(code: .invalidValue, message: "claim returned a row with an unknown status, push_type or environment")
            }
            rows.append(ClaimedRow(
                id: try result.decode(Int64.self, r, 0) ?? 0,
                verdict: verdict,
                deviceToken: result.string(r, 2) ?? "",
                payload: result.bytes(r, 3) ?? [],
                topic: result.string(r, 4),
                pushType: pushType,
                priority: try result.decode(Int.self, r, 6),
                expiresAt: try result.decode(Int64.self, r, 7),
                collapseID: result.string(r, 8),
                apnsID: result.string(r, 9) ?? "",
                environment: environment,
                credential: result.string(r, 11) ?? "",
                attempts: try result.decode(Int.self, r, 12) ?? 0,
                maxAttempts: try result.decode(Int.self, r, 13) ?? 1,
                lastReason: result.string(r, 14)))
        }
        return rows
    }

    /// Writes back a batch of attempts, with their token invalidations and credential pauses,
    /// in one transaction.
    ///
    /// Fenced: a row is updated only while it is still `sending`, held by `workerID`, at the
    /// attempt this worker claimed. A row whose lease ran out and that another worker took is
    /// left alone. Running the same batch twice (after a lost connection) changes nothing the
    /// second time. Returns the number of rows updated.
    ///
    /// - Parameters:
    ///   - resumed: (credential, environment) pairs that just had a notification accepted:
    ///     their pauses, if any, are lifted.
    ///   - pauseBaseSeconds, pauseCapSeconds: a new pause lasts the base; each repeat doubles it, up to the cap.
    @discardableResult
    public func complete(_ completions: [RowCompletion], invalidations: [TokenInvalidation],
                         pauses: [CredentialPause], resumed: [(credential: String, environment: APNsEnvironment)],
                         workerID: String, pauseBaseSeconds: Double, pauseCapSeconds: Double) throws -> Int {
        // 2: always give the attempt back (the credential's fault: a paused row must not burn
        // its attempts however long the pause lasts); 1: give it back unless the previous
        // attempt failed for the same reason (a connection-level failure that repeats counts).
        let refunds = completions.map { $0.disposition.pausesCredential ? 2 : $0.disposition.refundsAttempt ? 1 : 0 }
        let rowParameters: [(any PGParameter)?] = [
            completions.map(\.id), completions.map(\.attempt), completions.map(\.disposition.status.rawValue),
            completions.map(\.httpStatus), completions.map(\.disposition.reason), completions.map(\.apnsUniqueID),
            completions.map(\.disposition.retryDelay), refunds, workerID,
        ]
        let hasRows = !completions.isEmpty
        // ON CONFLICT may touch a row once per statement: one invalidation per (token, environment), the latest.
        var latest: [String: TokenInvalidation] = [:]
        for inv in invalidations {
            let key = inv.deviceToken.lowercased() + "/" + inv.environment.rawValue
            if let old = latest[key], (old.atMilliseconds ?? .max) >= (inv.atMilliseconds ?? .max) { continue }
            latest[key] = inv
        }
        let invs = Array(latest.values)
        return try transaction { c in
            var updated = 0
            if hasRows {
                updated = try c.query(Self.completeSQL, rowParameters).affectedRows
            }
            if !invs.isEmpty {
                try c.query(Self.invalidateSQL, [invs.map { $0.deviceToken.lowercased() }, invs.map { $0.environment.rawValue },
                                                 invs.map { $0.atMilliseconds }, invs.map { $0.reason }])
            }
            for p in pauses {
                try c.query(Self.pauseSQL, [p.credential, p.environment.rawValue, p.reason, p.message,
                                            pauseBaseSeconds, pauseCapSeconds, workerID])
            }
            if !resumed.isEmpty {
                try c.query("DELETE FROM pushq.credential_pauses p USING unnest($1::text[], $2::text[]) AS r(credential, environment) WHERE p.credential = r.credential AND p.environment = r.environment",
                            [resumed.map { $0.credential }, resumed.map { $0.environment.rawValue }])
            }
            return updated
        }
    }

    /// Gives back rows this worker claimed but never handed to APNs (shutdown): back to
    /// `queued` (or `retrying` if an earlier attempt was made), attempt refunded, lease dropped.
    /// Fenced like ``complete(_:invalidations:pauses:resumed:workerID:pauseBaseSeconds:pauseCapSeconds:)``.
    @discardableResult
    public func release(ids: [Int64], attempts: [Int], workerID: String) throws(PGError) -> Int {
        guard !ids.isEmpty else { return 0 }
        return try query("""
            UPDATE pushq.notifications n
               SET status = CASE WHEN n.attempts <= 1 THEN 'queued' ELSE 'retrying' END,
                   attempts = n.attempts - 1, locked_by = NULL, locked_until = NULL
              FROM unnest($1::bigint[], $2::integer[]) AS u(id, attempt)
             WHERE n.id = u.id AND n.status = 'sending' AND n.locked_by = $3 AND n.attempts = u.attempt
            """, [ids, attempts, workerID]).affectedRows
    }

    /// The (credential, environment) pairs paused now, as `"credential/environment"`, for ``claim(limit:workerID:leaseSeconds:credentials:defaultEnvironment:paused:)``.
    public func activePauseKeys() throws(PGError) -> [String] {
        let r = try query("SELECT credential || '/' || environment FROM pushq.credential_pauses WHERE paused_until > now()")
        return (0..<r.count).compactMap { r.string($0, 0) }
    }

    /// The (credential, environment) pairs paused now, with their reason and when the pause ends.
    public func activePauses() throws(PGError) -> [(pause: CredentialPause, until: Date)] {
        let r = try query("""
            SELECT credential, environment, reason, message, paused_until
              FROM pushq.credential_pauses WHERE paused_until > now() ORDER BY credential, environment
            """)
        var out: [(CredentialPause, Date)] = []
        for i in 0..<r.count {
            let pause = CredentialPause(credential: r.string(i, 0) ?? "", environment: APNsEnvironment(rawValue: r.string(i, 1) ?? "") ?? .production,
                                        reason: r.string(i, 2) ?? "", message: r.string(i, 3) ?? "")
            out.append((pause, try r.decode(Date.self, i, 4) ?? Date()))
        }
        return out
    }

    static let claimSQL = """
        WITH due AS MATERIALIZED (
            SELECT n.id
              FROM pushq.notifications n
             WHERE n.status IN ('queued', 'retrying')
               AND n.scheduled_at <= now()
               AND (n.credential = ANY($4::text[]) OR (n.credential IS NULL AND $6))
               /*PAUSED*/
             ORDER BY n.scheduled_at, n.id
             LIMIT $1
               FOR UPDATE SKIP LOCKED
        ), lapsed AS MATERIALIZED (
            SELECT n.id
              FROM pushq.notifications n
             WHERE n.status = 'sending'
               AND n.locked_until < now()
               AND (n.credential = ANY($4::text[]) OR (n.credential IS NULL AND $6))
               /*PAUSED*/
             ORDER BY n.locked_until
             LIMIT $1
               FOR UPDATE SKIP LOCKED
        ), picked AS MATERIALIZED (
            SELECT n.id,
                   CASE WHEN n.expires_at <= now() THEN 'expired'
                        WHEN EXISTS (SELECT 1 FROM pushq.devices d
                                      WHERE d.device_token = lower(n.device_token)
                                        AND d.environment = COALESCE(n.environment, $5)
                                        AND pushq.token_is_invalid(d.registered_at, d.invalidated_at)) THEN 'failed'
                        ELSE 'sending' END AS verdict
              FROM pushq.notifications n
             WHERE n.id IN (SELECT id FROM due UNION ALL SELECT id FROM lapsed)
        )
        UPDATE pushq.notifications n
           SET status       = p.verdict,
               attempts     = n.attempts + CASE WHEN p.verdict = 'sending' THEN 1 ELSE 0 END,
               locked_by    = CASE WHEN p.verdict = 'sending' THEN $2 END,
               locked_until = CASE WHEN p.verdict = 'sending' THEN now() + $3 * interval '1 second' END,
               last_reason  = CASE WHEN p.verdict = 'failed' THEN 'TokenInvalidated' ELSE n.last_reason END,
               finished_at  = CASE WHEN p.verdict = 'sending' THEN NULL ELSE now() END
          FROM picked p
         WHERE n.id = p.id
        RETURNING n.id, n.status, n.device_token,
                  CASE WHEN p.verdict = 'sending' THEN n.payload END,
                  n.topic, n.push_type, n.priority,
                  floor(extract(epoch FROM n.expires_at))::bigint,
                  n.collapse_id, n.apns_id, COALESCE(n.environment, $5), COALESCE(n.credential, 'default'),
                  n.attempts, n.max_attempts, n.last_reason
        """

    static let completeSQL = """
        UPDATE pushq.notifications n
           SET status = CASE WHEN u.status = 'retrying' AND n.expires_at <= now() + u.delay * interval '1 second'
                             THEN 'expired' ELSE u.status END,
               attempts = n.attempts - CASE WHEN u.refund = 2 OR (u.refund = 1 AND n.last_reason IS DISTINCT FROM u.reason)
                                            THEN 1 ELSE 0 END,
               last_status = u.http,
               last_reason = u.reason,
               apns_unique_id = COALESCE(u.unique_id, n.apns_unique_id),
               sent_at = CASE WHEN u.status = 'sent' THEN now() ELSE n.sent_at END,
               finished_at = CASE WHEN u.status = 'retrying' AND (n.expires_at IS NULL OR n.expires_at > now() + u.delay * interval '1 second')
                                  THEN NULL ELSE now() END,
               scheduled_at = CASE WHEN u.status = 'retrying' THEN now() + u.delay * interval '1 second' ELSE n.scheduled_at END,
               locked_by = NULL,
               locked_until = NULL
          FROM unnest($1::bigint[], $2::integer[], $3::text[], $4::smallint[], $5::text[], $6::uuid[], $7::float8[], $8::smallint[])
               AS u(id, attempt, status, http, reason, unique_id, delay, refund)
         WHERE n.id = u.id AND n.status = 'sending' AND n.locked_by = $9 AND n.attempts = u.attempt
        """

    static let invalidateSQL = """
        INSERT INTO pushq.devices AS d (device_token, environment, registered_at, invalidated_at, invalid_reason)
        SELECT v.token, v.environment, NULL, COALESCE(to_timestamp(v.ms / 1000.0), now()), v.reason
          FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[]) AS v(token, environment, ms, reason)
        ON CONFLICT (device_token, environment) DO UPDATE
           SET invalid_reason = CASE WHEN d.invalidated_at IS NULL OR EXCLUDED.invalidated_at >= d.invalidated_at
                                     THEN EXCLUDED.invalid_reason ELSE d.invalid_reason END,
               invalidated_at = GREATEST(d.invalidated_at, EXCLUDED.invalidated_at)
        """

    static let pauseSQL = """
        INSERT INTO pushq.credential_pauses AS p (credential, environment, reason, message, paused_until, paused_by)
        VALUES ($1, $2, $3, $4, now() + $5 * interval '1 second', $7)
        ON CONFLICT (credential, environment) DO UPDATE
           SET reason = EXCLUDED.reason, message = EXCLUDED.message,
               failures = p.failures + 1, paused_at = now(), paused_by = EXCLUDED.paused_by,
               paused_until = now() + LEAST($6, $5 * power(2, LEAST(p.failures, 30))) * interval '1 second'
         WHERE p.paused_until <= now()
        """
}
