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
        /// Its attempts were used up (a lapsed lease of its last attempt, or `max_attempts`
        /// lowered): now `failed` (final), never past `max_attempts`. Not to be sent.
        case exhausted
        /// Its token is throttled (429): back to `retrying` until the throttle ends, attempt
        /// not counted. Not to be sent now.
        case throttled
        /// Now `sending`, held by this worker, but its `provider`, or an APNs row's `push_type` or
        /// `environment`, is one this worker does not know (a value added to the schema after this
        /// version, or a check constraint dropped): not to be sent; the worker ends it
        /// `failed`/`InvalidRow` like an answer. ``provider``, ``pushType`` and ``environment`` are
        /// then placeholders (`apns`, `alert`, the default). An FCM row is never unreadable for its
        /// `push_type` or `environment`, which it does not use.
        case unreadable
    }

    public var id: Int64
    public var verdict: Verdict
    /// `provider`: which service sends the row.
    public var provider: Provider
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
    /// `environment`, or the worker's default; `.production` (a placeholder) for FCM rows.
    public var environment: APNsEnvironment
    /// `credential`, or `"default"` (a name of the row's provider).
    public var credential: String
    /// `attempts` including the one this claim started.
    public var attempts: Int
    /// `locked_until` of this claim in microseconds since the epoch (0 unless held): with
    /// ``attempts`` the fence of its write-back, unique to this claim of the row.
    public var lease: Int64
    public var maxAttempts: Int
    /// `last_reason` before this claim (the previous attempt's).
    public var lastReason: String?
}

/// The write-back of one attempt: a row's ``Disposition`` plus APNs' answer.
public struct RowCompletion: Sendable {
    public var id: Int64
    /// The `attempts` value the row had when this worker claimed it (the fence).
    public var attempt: Int
    /// The claim's ``ClaimedRow/lease`` (the fence, with ``attempt``): an answer is recorded
    /// only under the claim that sent it, even if the same worker claimed the row again.
    public var lease: Int64
    public var disposition: Disposition
    /// `last_status`: the HTTP status, nil when none came.
    public var httpStatus: Int?
    /// `apns-unique-id`, if APNs sent one.
    public var apnsUniqueID: UUID?
    /// `fcm_message_name`: the `name` FCM answered a 200 with (`projects/…/messages/…`).
    public var messageName: String?

    public init(id: Int64, attempt: Int, lease: Int64, disposition: Disposition, httpStatus: Int?, apnsUniqueID: UUID?,
                messageName: String? = nil) {
        self.id = id
        self.attempt = attempt
        self.lease = lease
        self.disposition = disposition
        self.httpStatus = httpStatus
        self.apnsUniqueID = apnsUniqueID
        self.messageName = messageName
    }

    /// The claim this answers.
    public var claim: RowClaim { RowClaim(id: id, attempt: attempt, lease: lease) }
}

/// One claim of one row: its id and its fence (``ClaimedRow/attempts``, ``ClaimedRow/lease``).
public struct RowClaim: Sendable, Hashable {
    public var id: Int64
    public var attempt: Int
    public var lease: Int64

    public init(id: Int64, attempt: Int, lease: Int64) {
        self.id = id
        self.attempt = attempt
        self.lease = lease
    }
}

/// A token to record as invalid in `pushq.devices`: an APNs token lower-case in its environment,
/// an FCM token as given (case-sensitive) with environment `production`.
public struct TokenInvalidation: Sendable, Hashable {
    public var deviceToken: String
    /// The APNs environment; always `.production` for FCM.
    public var environment: APNsEnvironment
    /// `Unregistered`, `ExpiredToken`, `BadDeviceToken` (APNs); `UNREGISTERED`, `INVALID_ARGUMENT` (FCM).
    public var reason: String
    /// Milliseconds since the epoch; nil for "now" (database clock).
    public var atMilliseconds: Int64?
    public var provider: Provider

    public init(deviceToken: String, environment: APNsEnvironment, reason: String, atMilliseconds: Int64?, provider: Provider = .apns) {
        self.deviceToken = deviceToken
        self.environment = provider == .fcm ? .production : environment
        self.reason = reason
        self.atMilliseconds = atMilliseconds
        self.provider = provider
    }

    /// The token as `pushq.devices` keys it: lower-case for APNs, as given for FCM.
    var storedToken: String { provider == .fcm ? deviceToken : deviceToken.lowercased() }
}

/// A token APNs throttled (429): other rows for it wait until `delay` seconds from now (APNs
/// rows only: the claim never checks throttles for FCM rows).
public struct TokenThrottle: Sendable, Hashable {
    public var deviceToken: String
    public var environment: APNsEnvironment
    public var delaySeconds: Double

    public init(deviceToken: String, environment: APNsEnvironment, delaySeconds: Double) {
        self.deviceToken = deviceToken
        self.environment = environment
        self.delaySeconds = delaySeconds
    }
}

extension PGConnection {
    /// Claims up to `limit` due rows in one statement, for this worker, with the database clock.
    ///
    /// Due rows are `queued`/`retrying` with `scheduled_at <= now()`, and `sending` rows whose
    /// lease ran out (their worker died), of the given credentials of their provider and not held. Each is
    /// locked with `FOR UPDATE SKIP LOCKED` (concurrent workers take different rows), then:
    /// expired ones end `expired`, ones whose token is invalid end `failed`/`TokenInvalidated`,
    /// ones whose attempts are used up end `failed`, ones whose (APNs) token is throttled go back to
    /// `retrying` until the throttle ends, and the rest become `sending`, held by `workerID`
    /// until now + `leaseSeconds`, `attempts` + 1. The statement commits before anything is sent.
    ///
    /// Odd data cannot make it fail: an `expires_at` of 'infinity' is no expiry (``ClaimedRow/expiresAt``
    /// nil), '-infinity' has passed; `attempts` + 1 cannot overflow, as only a row with `attempts` <
    /// `max_attempts` (a smallint) is sent. A row that still makes it fail (SQLSTATE class 22 or 23)
    /// fails the whole statement: see ``claimHeads(credentials:fcmCredentials:defaultEnvironment:held:only:excluding:)``
    /// and ``endClaimErrors(ids:)``.
    ///
    /// A token is invalid when `pushq.devices` has it invalid for the row's provider: an APNs
    /// row's token lower-case in the row's environment, an FCM row's token exactly (FCM tokens
    /// are case-sensitive; FCM has no environment).
    ///
    /// - Parameters:
    ///   - credentials: APNs credential names this worker can send with (`"default"` for NULL).
    ///   - fcmCredentials: FCM credential names this worker can send with (`"default"` for NULL).
    ///   - defaultEnvironment: the environment of APNs rows whose `environment` is NULL.
    ///   - held: endpoints not to claim (every endpoint with a row in `pushq.credential_pauses`).
    ///     A row's endpoint is its credential and channel: `fcm` for FCM rows, the environment
    ///     (or `defaultEnvironment`) for APNs rows.
    ///   - only: claim rows of this endpoint alone (a probe); `credentials`, `fcmCredentials`
    ///     and `held` are then ignored.
    ///   - row: claim this row alone, if it is due (finding a row that makes claims fail).
    ///   - excluding: rows not to claim (rows known to make claims fail).
    public func claim(limit: Int, workerID: String, leaseSeconds: Double, credentials: [String], fcmCredentials: [String] = [],
                      defaultEnvironment: APNsEnvironment, held: [Endpoint] = [], only: Endpoint? = nil,
                      row: Int64? = nil, excluding: [Int64] = []) throws(PGError) -> [ClaimedRow] {
        var parameters: [(any PGParameter)?] = [limit, workerID, leaseSeconds, defaultEnvironment.rawValue]
        parameters += ClaimRouting(apns: credentials, fcm: fcmCredentials, only: only).parameters
        var sql = Self.claimSQL
        var filter = ClaimFilter(next: 9, environment: "$4", defaultEnvironment: defaultEnvironment)
        filter.add(held: held, only: only, row: row, excluding: excluding)
        if !filter.sql.isEmpty {
            sql = sql.replacingOccurrences(of: "/*FILTER*/", with: filter.sql)
            parameters += filter.parameters
        }
        let result = try query(sql, parameters)
        var rows: [ClaimedRow] = []
        rows.reserveCapacity(result.count)
        for r in 0..<result.count {
            // The statement has committed: a row this worker cannot read must still come back,
            // as `unreadable` if it is now held, so that it is ended rather than left to its lease.
            guard var verdict = ClaimedRow.Verdict(rawValue: result.string(r, 1) ?? "") else {
                throw PGError(code: .invalidValue, message: "claim returned a row with an unknown verdict")
            }
            let provider = Provider(rawValue: result.string(r, 15) ?? "")
            let pushType = PushType(rawValue: result.string(r, 5) ?? "")
            let environment = APNsEnvironment(rawValue: result.string(r, 10) ?? "")
            let readable = provider == .fcm || (provider == .apns && pushType != nil && environment != nil)
            if verdict == .send && !readable { verdict = .unreadable }
            rows.append(ClaimedRow(
                id: try result.decode(Int64.self, r, 0) ?? 0,
                verdict: verdict,
                provider: provider ?? .apns,
                deviceToken: result.string(r, 2) ?? "",
                payload: verdict == .send ? result.bytes(r, 3) ?? [] : [],
                topic: result.string(r, 4),
                pushType: pushType ?? .alert,
                priority: try result.decode(Int.self, r, 6),
                expiresAt: try result.decode(Int64.self, r, 7),
                collapseID: result.string(r, 8),
                apnsID: result.string(r, 9) ?? "",
                environment: provider == .fcm ? .production : environment ?? defaultEnvironment,
                credential: result.string(r, 11) ?? "",
                attempts: try result.decode(Int.self, r, 12) ?? 0,
                lease: try result.decode(Int64.self, r, 16) ?? 0,
                maxAttempts: try result.decode(Int.self, r, 13) ?? 1,
                lastReason: result.string(r, 14)))
        }
        return rows
    }

    /// Writes back a batch of attempts, with their token invalidations and throttles, and the
    /// endpoints to hold or resume, in one transaction.
    ///
    /// Fenced: a row is updated only while it is still `sending`, held by `workerID`, at the
    /// attempt this worker claimed. A row whose lease ran out and that another worker took is
    /// left alone. Running the same batch twice (after a lost connection) changes nothing the
    /// second time.
    ///
    /// - Parameters:
    ///   - holds: endpoints to hold, each with the seconds until its first probe. A hold is
    ///     written when the endpoint has none, or has one of a lesser kind (outage < burst <
    ///     credential); otherwise the existing one stands.
    ///   - resumed: endpoints that just had a notification accepted: their holds, if any, are lifted.
    /// - Returns: the rows updated, the holds this call wrote (to be reported once, by the
    ///   worker that wrote them) and the holds it lifted.
    @discardableResult
    public func complete(_ completions: [RowCompletion], invalidations: [TokenInvalidation], throttles: [TokenThrottle] = [],
                         holds: [(hold: HoldRequest, seconds: Double)], resumed: [Endpoint],
                         workerID: String) throws -> CompletionWrite {
        let rowParameters: [(any PGParameter)?] = [
            completions.map(\.id), completions.map(\.attempt), completions.map(\.disposition.status.rawValue),
            completions.map(\.httpStatus), completions.map(\.disposition.reason), completions.map(\.apnsUniqueID),
            completions.map(\.disposition.retryDelay), completions.map(\.disposition.refundsAttempt), workerID,
            completions.map(\.messageName), completions.map(\.lease),
        ]
        let hasRows = !completions.isEmpty
        // ON CONFLICT may touch a row once per statement: one invalidation per (token, environment,
        // provider), the latest.
        var latest: [String: TokenInvalidation] = [:]
        for inv in invalidations {
            let key = inv.storedToken + "/" + inv.environment.rawValue + "/" + inv.provider.rawValue
            if let old = latest[key], (old.atMilliseconds ?? .max) >= (inv.atMilliseconds ?? .max) { continue }
            latest[key] = inv
        }
        let invs = Array(latest.values)
        var longest: [String: TokenThrottle] = [:]
        for t in throttles {
            let key = t.deviceToken.lowercased() + "/" + t.environment.rawValue
            if let old = longest[key], old.delaySeconds >= t.delaySeconds { continue }
            longest[key] = t
        }
        let thr = Array(longest.values)
        return try transaction { c in
            var write = CompletionWrite()
            if hasRows {
                write.updated = try c.query(Self.completeSQL, rowParameters).affectedRows
            }
            if !invs.isEmpty {
                try c.query(Self.invalidateSQL, [invs.map(\.storedToken), invs.map { $0.environment.rawValue },
                                                 invs.map { $0.atMilliseconds }, invs.map { $0.reason }, invs.map { $0.provider.rawValue }])
            }
            if !thr.isEmpty {
                try c.query(Self.throttleSQL, [thr.map { $0.deviceToken.lowercased() }, thr.map { $0.environment.rawValue },
                                               thr.map { $0.delaySeconds }])
            }
            for (h, seconds) in holds {
                let r = try c.query(Self.holdSQL, [h.endpoint.credential, h.endpoint.channel, h.kind.rawValue,
                                                   h.reason, h.message, seconds, workerID])
                if r.count > 0 { write.heldNow.append(h) }
            }
            if !resumed.isEmpty {
                let r = try c.query("""
                    DELETE FROM pushq.credential_pauses p USING unnest($1::text[], $2::text[]) AS r(credential, environment)
                     WHERE p.credential = r.credential AND p.environment = r.environment
                    RETURNING p.credential, p.environment, p.kind, p.reason
                    """, [resumed.map(\.credential), resumed.map(\.channel)])
                write.lifted = try Self.decodeHolds(r)
            }
            return write
        }
    }

    /// Gives back rows this worker claimed but never handed to a provider (shutdown, a lease
    /// about to run out while the row waited for a stream, a sender that cannot be built): back
    /// to `queued` (or `retrying` if an earlier attempt was made), attempt refunded, lease
    /// dropped, due at once. Fenced like ``complete(_:invalidations:throttles:holds:resumed:workerID:)``.
    @discardableResult
    public func release(_ rows: [RowClaim], workerID: String) throws(PGError) -> Int {
        guard !rows.isEmpty else { return 0 }
        return try query("""
            UPDATE pushq.notifications n
               SET status = CASE WHEN n.attempts <= 1 THEN 'queued' ELSE 'retrying' END,
                   attempts = n.attempts - 1, locked_by = NULL, locked_until = NULL
              FROM unnest($1::bigint[], $2::integer[], $4::bigint[]) AS u(id, attempt, lease)
             WHERE n.id = u.id AND n.status = 'sending' AND n.locked_by = $3 AND n.attempts = u.attempt
               AND (extract(epoch FROM n.locked_until) * 1000000)::bigint = u.lease
            """, [rows.map(\.id), rows.map(\.attempt), workerID, rows.map(\.lease)]).affectedRows
    }

    static let claimSQL = """
        WITH due AS MATERIALIZED (
            SELECT n.id
              FROM pushq.notifications n
             WHERE n.status IN ('queued', 'retrying')
               AND n.scheduled_at <= now()
               \(ClaimRouting.sql(from: 5))
               \(knownRowsSQL)
               /*FILTER*/
             ORDER BY n.scheduled_at, n.id
             LIMIT $1
               FOR UPDATE SKIP LOCKED
        ), lapsed AS MATERIALIZED (
            SELECT n.id
              FROM pushq.notifications n
             WHERE n.status = 'sending'
               AND n.locked_until < now()
               \(ClaimRouting.sql(from: 5))
               \(knownRowsSQL)
               /*FILTER*/
             ORDER BY n.locked_until
             LIMIT $1
               FOR UPDATE SKIP LOCKED
        ), picked AS MATERIALIZED (
            SELECT n.id,
                   -- A lease that ran out for the first time in a row: the attempt it counted is given
                   -- back (its worker may have died before sending); a second one in a row counts.
                   CASE WHEN n.status = 'sending' AND n.last_reason IS DISTINCT FROM 'LeaseExpired' THEN 1 ELSE 0 END AS refund,
                   CASE WHEN n.expires_at <= now() THEN 'expired'
                        WHEN n.provider = 'fcm' AND EXISTS (
                                 SELECT 1 FROM pushq.devices d
                                  WHERE d.device_token = n.device_token
                                    AND d.provider = 'fcm'
                                    AND pushq.token_is_invalid(d.registered_at, d.invalidated_at)) THEN 'failed'
                        WHEN n.provider = 'apns' AND EXISTS (
                                 SELECT 1 FROM pushq.devices d
                                  WHERE d.device_token = lower(n.device_token)
                                    AND d.environment = COALESCE(n.environment, $4)
                                    AND d.provider = 'apns'
                                    AND pushq.token_is_invalid(d.registered_at, d.invalidated_at)) THEN 'failed'
                        WHEN n.attempts - CASE WHEN n.status = 'sending' AND n.last_reason IS DISTINCT FROM 'LeaseExpired' THEN 1 ELSE 0 END
                             >= n.max_attempts THEN 'exhausted'
                        WHEN n.provider = 'apns' AND EXISTS (
                                 SELECT 1 FROM pushq.token_throttles t
                                  WHERE t.device_token = lower(n.device_token)
                                    AND t.environment = COALESCE(n.environment, $4)
                                    AND t.until > now()) THEN 'throttled'
                        ELSE 'sending' END AS verdict
              FROM pushq.notifications n
             WHERE n.id IN (SELECT id FROM due UNION ALL SELECT id FROM lapsed)
        )
        UPDATE pushq.notifications n
           SET status       = CASE p.verdict WHEN 'sending' THEN 'sending' WHEN 'expired' THEN 'expired'
                                             WHEN 'throttled' THEN 'retrying' ELSE 'failed' END,
               attempts     = n.attempts + CASE WHEN p.verdict = 'sending' THEN 1 ELSE 0 END - CASE WHEN p.verdict = 'exhausted' THEN 0 ELSE p.refund END,
               locked_by    = CASE WHEN p.verdict = 'sending' THEN $2 END,
               locked_until = CASE WHEN p.verdict = 'sending' THEN now() + $3 * interval '1 second' END,
               last_reason  = CASE p.verdict WHEN 'failed' THEN 'TokenInvalidated'
                                             WHEN 'exhausted' THEN CASE WHEN n.status = 'sending' THEN 'LeaseExpired'
                                                                        ELSE COALESCE(n.last_reason, 'AttemptsExhausted') END
                                             WHEN 'sending' THEN CASE WHEN n.status = 'sending' THEN 'LeaseExpired' ELSE n.last_reason END
                                             ELSE n.last_reason END,
               scheduled_at = CASE WHEN p.verdict <> 'throttled' THEN n.scheduled_at
                                   ELSE (SELECT max(t.until) FROM pushq.token_throttles t
                                          WHERE t.device_token = lower(n.device_token)
                                            AND t.environment = COALESCE(n.environment, $4)) END,
               finished_at  = CASE WHEN p.verdict IN ('sending', 'throttled') THEN NULL ELSE now() END
          FROM picked p
         WHERE n.id = p.id
        RETURNING n.id, p.verdict, n.device_token,
                  CASE WHEN p.verdict = 'sending' THEN n.payload END,
                  n.topic, n.push_type, n.priority,
                  CASE WHEN isfinite(n.expires_at) THEN floor(extract(epoch FROM n.expires_at))::bigint END,
                  n.collapse_id, n.apns_id, COALESCE(n.environment, $4), COALESCE(n.credential, 'default'),
                  n.attempts, n.max_attempts, n.last_reason, n.provider,
                  (extract(epoch FROM n.locked_until) * 1000000)::bigint
        """

    /// Rows this version can read: an APNs row's `push_type` must be one it knows. A row of a
    /// push type added by a newer schema waits for a newer worker instead of being ended here.
    static let knownRowsSQL = "AND (n.provider <> 'apns' OR n.push_type IN ("
        + PushType.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ") + "))"

    static let completeSQL = """
        UPDATE pushq.notifications n
           SET status = CASE WHEN u.status = 'retrying' AND n.expires_at <= now() + u.delay * interval '1 second'
                             THEN 'expired' ELSE u.status END,
               attempts = n.attempts - CASE WHEN u.refund THEN 1 ELSE 0 END,
               last_status = u.http,
               last_reason = u.reason,
               apns_unique_id = COALESCE(u.unique_id, n.apns_unique_id),
               fcm_message_name = COALESCE(u.message_name, n.fcm_message_name),
               sent_at = CASE WHEN u.status = 'sent' THEN now() ELSE n.sent_at END,
               finished_at = CASE WHEN u.status = 'retrying' AND (n.expires_at IS NULL OR n.expires_at > now() + u.delay * interval '1 second')
                                  THEN NULL ELSE now() END,
               scheduled_at = CASE WHEN u.status = 'retrying' THEN now() + u.delay * interval '1 second' ELSE n.scheduled_at END,
               locked_by = NULL,
               locked_until = NULL
          FROM unnest($1::bigint[], $2::integer[], $3::text[], $4::smallint[], $5::text[], $6::uuid[], $7::float8[], $8::boolean[],
                      $10::text[], $11::bigint[])
               AS u(id, attempt, status, http, reason, unique_id, delay, refund, message_name, lease)
         WHERE n.id = u.id AND n.status = 'sending' AND n.locked_by = $9 AND n.attempts = u.attempt
           AND (extract(epoch FROM n.locked_until) * 1000000)::bigint = u.lease
        """

    static let invalidateSQL = """
        INSERT INTO pushq.devices AS d (device_token, environment, provider, registered_at, invalidated_at, invalid_reason)
        SELECT v.token, v.environment, v.provider, NULL, COALESCE(to_timestamp(v.ms / 1000.0), now()), v.reason
          FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[]) AS v(token, environment, ms, reason, provider)
         -- (device_token, environment) is unique too (old producers' ON CONFLICT): a token the other
         -- provider has registered (an APNs token sent through FCM by mistake) is that provider's.
         WHERE NOT EXISTS (SELECT 1 FROM pushq.devices o
                            WHERE o.device_token = v.token AND o.environment = v.environment AND o.provider <> v.provider)
        ON CONFLICT (device_token, environment, provider) DO UPDATE
           SET invalid_reason = CASE WHEN d.invalidated_at IS NULL OR EXCLUDED.invalidated_at >= d.invalidated_at
                                     THEN EXCLUDED.invalid_reason ELSE d.invalid_reason END,
               invalidated_at = GREATEST(d.invalidated_at, EXCLUDED.invalidated_at)
        """

    static let throttleSQL = """
        INSERT INTO pushq.token_throttles AS t (device_token, environment, until)
        SELECT v.token, v.environment, now() + v.delay * interval '1 second'
          FROM unnest($1::text[], $2::text[], $3::float8[]) AS v(token, environment, delay)
        ON CONFLICT (device_token, environment) DO UPDATE SET until = GREATEST(t.until, EXCLUDED.until)
        """

    /// Writes a hold unless one of the same or a higher kind stands (outage < burst < credential);
    /// returns a row only when it wrote one.
    static let holdSQL = """
        INSERT INTO pushq.credential_pauses AS p (credential, environment, kind, reason, message, paused_until, paused_by)
        VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 second', $7)
        ON CONFLICT (credential, environment) DO UPDATE
           SET kind = EXCLUDED.kind, reason = EXCLUDED.reason, message = EXCLUDED.message, failures = 1,
               paused_at = now(), paused_until = EXCLUDED.paused_until, paused_by = EXCLUDED.paused_by
         WHERE array_position(ARRAY['outage', 'burst', 'credential'], EXCLUDED.kind)
             > array_position(ARRAY['outage', 'burst', 'credential'], p.kind)
        RETURNING p.credential
        """
}

/// What one ``PGConnection/complete(_:invalidations:throttles:holds:resumed:workerID:)`` wrote.
public struct CompletionWrite: Sendable {
    /// Rows updated.
    public var updated = 0
    /// Holds written by this call (new, or of a higher kind than the one they replaced).
    public var heldNow: [HoldRequest] = []
    /// Holds deleted by this call, with their kind and reason.
    public var lifted: [HeldEndpoint] = []

    public init() {}
}
