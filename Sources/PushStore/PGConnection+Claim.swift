import Foundation
import PushCore

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
    /// A lapsed lease gives its attempt back the first time in a row (its worker may have died
    /// before sending; `last_reason` becomes `LeaseExpired`, `attempts` stays); a second lapse in
    /// a row counts, so a row that kills every worker that takes it still ends. The new
    /// `locked_until` (``ClaimedRow/lease``) tells this claim from every other claim of the row.
    /// APNs rows of a push type this version does not know are left for a newer worker.
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
                lastReason: result.string(r, 14),
                lane: result.string(r, 17) ?? "default",
                rank: try result.decode(Int.self, r, 18) ?? 100))
        }
        return rows
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
                  (extract(epoch FROM n.locked_until) * 1000000)::bigint,
                  n.lane, COALESCE((SELECT l.rank FROM pushq.lanes l WHERE l.name = n.lane),
                                   (SELECT l.rank FROM pushq.lanes l WHERE l.name = 'default'), 100)
        """

    /// Rows this version can read: an APNs row's `push_type` must be one it knows. A row of a
    /// push type added by a newer schema waits for a newer worker instead of being ended here.
    static let knownRowsSQL = "AND (n.provider <> 'apns' OR n.push_type IN ("
        + PushType.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ") + "))"
}
