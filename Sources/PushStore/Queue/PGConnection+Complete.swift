import Foundation
import PushCore
import PGClient

extension PGConnection {
    /// Writes back a batch of attempts, with their token invalidations and throttles, and the
    /// endpoints to hold or resume, in one transaction.
    ///
    /// Fenced: a row is updated only while it is still `sending`, held by `workerID`, under the
    /// claim that sent it (its `attempts` and `locked_until`, ``RowCompletion/claim``). A row whose
    /// lease ran out and that another claim took, this worker's or another's, is left alone. Running the same batch twice (after a lost connection) changes nothing the
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
        let rowParameters = Self.completeParameters(completions, workerID: workerID)
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
            let key = t.storedToken + "/" + t.storedEnvironment
            if let old = longest[key], old.delaySeconds >= t.delaySeconds { continue }
            longest[key] = t
        }
        let thr = Array(longest.values)
        return try transaction(begin: hasRows ? Self.fencedUpdateBegin : "BEGIN") { c in
            var write = CompletionWrite()
            if hasRows {
                // Prepared: planned once per session (with nested loops off, as every time it runs).
                write.updated = try c.preparedQuery(Self.completeSQL, rowParameters).firstRow().decode(Int?.self, "updated") ?? 0
                // The upserts of tokens join pushq.devices, which may hold millions of rows: they
                // run with nested loops as the server sets them. The holds and the lifts touch
                // pushq.credential_pauses alone (a row per endpoint) and run as they are, which
                // spares most write-backs a round trip.
                if !invs.isEmpty || !thr.isEmpty { try c.execute(Self.fencedUpdateEnd) }
            }
            if !invs.isEmpty {
                try c.query(Self.invalidateSQL, [invs.map(\.storedToken), invs.map { $0.environment.rawValue },
                                                 invs.map { $0.atMilliseconds }, invs.map { $0.reason }, invs.map { $0.provider.rawValue }])
            }
            if !thr.isEmpty {
                try c.query(Self.throttleSQL, [thr.map(\.storedToken), thr.map(\.storedEnvironment),
                                               thr.map { $0.delaySeconds }])
            }
            for (h, seconds) in holds {
                let r = try c.query(Self.holdSQL, [h.endpoint.credential, h.endpoint.channel, h.kind.rawValue,
                                                   h.reason, h.message, seconds, workerID])
                if r.count > 0 { write.heldNow.append(h) }
            }
            if !resumed.isEmpty {
                // Prepared: nearly every write-back lifts (any accepted notification), and planning
                // it anew each time cost more than running it (docs/performance.md).
                let r = try c.preparedQuery(Self.liftSQL, [resumed.map(\.credential), resumed.map(\.channel)])
                write.lifted = try Self.decodeHolds(r)
            }
            return write
        }
    }

    /// Gives back rows this worker claimed but never handed to a provider (shutdown, a lease
    /// about to run out while the row waited for a stream, a sender that cannot be built): back
    /// to `queued` (or `retrying` if an earlier attempt was made), attempt refunded, lease
    /// dropped, due at once. Fenced like ``complete(_:invalidations:throttles:holds:resumed:workerID:)``.
    /// A row with ``RowClaim/quietUntil`` (its lane's quiet hours began before it started) is
    /// due at that instant instead, its entry of pushq.due held `quiet` (its `scheduled_at` stays).
    @discardableResult
    public func release(_ rows: [RowClaim], workerID: String) throws(PGError) -> Int {
        guard !rows.isEmpty else { return 0 }
        return try typedTransaction(begin: Self.fencedUpdateBegin) { c throws(PGError) in
            // A row given back was never handed to a provider: its reservation of a frequency cap
            // goes in the same transaction (claimed again, it is counted again).
            let released = try c.query("""
                WITH released AS (
                UPDATE pushq.notifications n
                   SET status = CASE WHEN n.attempts <= 1 THEN 'queued' ELSE 'retrying' END,
                       attempts = n.attempts - 1, locked_by = NULL, locked_until = NULL
                  FROM unnest($1::bigint[], $2::integer[], $4::bigint[]) AS u(id, attempt, lease)
                 WHERE n.id = u.id AND n.id = ANY ($1::bigint[]) AND n.status = 'sending' AND n.locked_by = $3 AND n.attempts = u.attempt
                   AND (extract(epoch FROM n.locked_until) * 1000000)::bigint = u.lease
                RETURNING n.id, n.status, n.lane, n.user_ref, n.provider, n.device_token
                ), unreserved AS (
                \(Self.unreserveSQL(from: "released"))
                )
                SELECT id FROM released
                """, [rows.map(\.id), rows.map(\.attempt), workerID, rows.map(\.lease)])
            let quiet = rows.filter { $0.quietUntil != nil }
            if !quiet.isEmpty, released.count > 0 {
                var ids = Set<Int64>()
                for row in released.rows { if let id = try row.decode(Int64?.self, "id") { ids.insert(id) } }
                let moved = quiet.filter { ids.contains($0.id) }
                if !moved.isEmpty {
                    // The entries the UPDATE's trigger just made (due at scheduled_at), by primary key.
                    try c.execute(Self.fencedUpdateEnd)
                    try c.query("""
                        UPDATE pushq.due d SET due_at = timestamptz 'epoch' + u.until * interval '1 microsecond', held = 'quiet'
                          FROM unnest($1::bigint[], $2::bigint[]) AS u(id, until)
                         WHERE d.id = u.id AND d.id = ANY ($1::bigint[])
                        """, [moved.map(\.id), moved.map { $0.quietUntil }])
                }
            }
            return released.count
        }
    }

    /// Opens the transaction of a fenced write-back (``completeSQL``, ``release(_:workerID:)``)
    /// with nested-loop joins off until ``fencedUpdateEnd``.
    ///
    /// Both statements join the batch (`unnest` of its arrays) to `pushq.notifications` on `id`
    /// and keep only rows still `sending`. PostgreSQL's statistics see the rows in flight as a
    /// sliver of the table, so it estimates one row or two behind `status = 'sending' AND
    /// locked_by = $worker` (the two columns are correlated; the planner multiplies them as if
    /// they were not), and may then pick a nested loop that reads those rows through
    /// `notifications_lease` and rescans the whole batch for each of them: 500 rows cost 250 000
    /// comparisons. The plan flipped to that after autovacuum's ANALYZE in a 500 000-row drain:
    /// write-backs of 1 000 rows took 400–600 ms instead of ~15, and the drain's rate fell to a
    /// third or less for seconds at a time (docs/performance.md, "The write-back's plan after
    /// ANALYZE"). Without nested loops, the join is a hash join whatever the estimate, linear in
    /// the batch and the rows in flight. Both also name the batch's ids (`n.id = ANY`), so that
    /// the rows are read by primary key, not through an index of the rows in flight (0.4.0
    /// dropped `notifications_lease`) nor by reading the whole table.
    static let fencedUpdateBegin = "BEGIN; SET LOCAL enable_nestloop = off"

    /// Gives the rest of the write-back's transaction the server's nested-loop setting back.
    static let fencedUpdateEnd = "SET LOCAL enable_nestloop TO DEFAULT"

    /// The parameters of ``completeSQL`` for `completions`, written back by `workerID`. `$10` is
    /// the answer's own name for the message: FCM's message name, or a Web Push service's
    /// `Location` (one array, so that the statement's parameters are those of every release: the
    /// upgrade tests run an earlier worker's statement with them).
    static func completeParameters(_ completions: [RowCompletion], workerID: String) -> [(any PGParameter)?] {
        [
            completions.map(\.id), completions.map(\.attempt), completions.map(\.disposition.status.rawValue),
            completions.map(\.httpStatus), completions.map(\.disposition.reason), completions.map(\.apnsUniqueID),
            completions.map(\.disposition.retryDelay), completions.map(\.disposition.refundsAttempt), workerID,
            completions.map { $0.messageName ?? $0.webpushLocation }, completions.map(\.lease),
        ]
    }

    /// The fenced update of the rows written back, their tally (``tallySQL(from:worker:)``) and
    /// the frequency-cap reservations of those not sent (``unreserveSQL(from:)``): answers how many
    /// rows it updated.
    static let completeSQL = """
        WITH done AS (
        UPDATE pushq.notifications n
           SET status = CASE WHEN u.status = 'retrying' AND n.expires_at <= now() + u.delay * interval '1 second'
                             THEN 'expired' ELSE u.status END,
               attempts = n.attempts - CASE WHEN u.refund THEN 1 ELSE 0 END,
               last_status = u.http,
               last_reason = u.reason,
               apns_unique_id = COALESCE(u.unique_id, n.apns_unique_id),
               fcm_message_name = CASE WHEN n.provider <> 'webpush' THEN COALESCE(u.message_name, n.fcm_message_name) END,
               webpush_location = CASE WHEN n.provider = 'webpush' THEN COALESCE(u.message_name, n.webpush_location) END,
               sent_at = CASE WHEN u.status = 'sent' THEN now() ELSE n.sent_at END,
               finished_at = CASE WHEN u.status = 'retrying' AND (n.expires_at IS NULL OR n.expires_at > now() + u.delay * interval '1 second')
                                  THEN NULL ELSE now() END,
               scheduled_at = CASE WHEN u.status = 'retrying' THEN now() + u.delay * interval '1 second' ELSE n.scheduled_at END,
               locked_by = NULL,
               locked_until = NULL
          FROM unnest($1::bigint[], $2::integer[], $3::text[], $4::smallint[], $5::text[], $6::uuid[], $7::float8[], $8::boolean[],
                      $10::text[], $11::bigint[])
               AS u(id, attempt, status, http, reason, unique_id, delay, refund, message_name, lease)
         WHERE n.id = u.id AND n.id = ANY ($1::bigint[]) AND n.status = 'sending' AND n.locked_by = $9 AND n.attempts = u.attempt
           AND (extract(epoch FROM n.locked_until) * 1000000)::bigint = u.lease
        RETURNING n.status, n.lane, n.last_reason AS reason, n.id, n.user_ref, n.provider, n.device_token
        ), tallied AS (
        \(tallySQL(from: "done", worker: "$9"))
        ), unreserved AS (
        -- A row that ends other than sent (failed, expired, to be retried) frees its place in its
        -- recipient's frequency cap.
        \(unreserveSQL(from: "done"))
        )
        SELECT count(*) AS updated FROM done
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

    /// Lifts the holds of the endpoints that just had a notification accepted.
    static let liftSQL = """
        DELETE FROM pushq.credential_pauses p USING unnest($1::text[], $2::text[]) AS r(credential, environment)
         WHERE p.credential = r.credential AND p.environment = r.environment
        RETURNING p.credential, p.environment, p.kind, p.reason
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
