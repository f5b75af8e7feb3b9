import Foundation
import PushCore
import PGClient

extension PGConnection {
    /// Claims up to `limit` due rows in one statement, for this worker, with the database clock,
    /// behind the fleet's claim lock (``serializedClaim(_:_:prepared:)``: claims take turns).
    ///
    /// Lanes (``ClaimStatement``): every due row of a lower rank (`pushq.lanes`; a lane with no
    /// row there has `default`'s settings) is taken before any row of a higher rank; lanes of one
    /// rank take turns being first, by `rotation`; within a lane rows go in the order they became
    /// due (`scheduled_at`, `id`). A paused lane's rows are not claimed (nor its lapsed leases). A
    /// capped lane (`max_per_second`) gets at most its budget's whole tokens, shared by every
    /// worker through `pushq.rate_budgets`; the rows that go out are spent from it.
    ///
    /// Due rows are `queued`/`retrying` with `scheduled_at <= now()`, and `sending` rows whose
    /// lease ran out (their worker died), of the given credentials of their provider and not held. Each is
    /// locked with `FOR UPDATE SKIP LOCKED` (concurrent workers take different rows), then:
    /// expired ones end `expired`, ones whose token is invalid end `failed`/`TokenInvalidated`,
    /// ones whose attempts are used up end `failed`, ones whose (APNs) token is throttled go back to
    /// `retrying` until the throttle ends, and the rest become `sending`, held by `workerID`
    /// until now + `leaseSeconds`, `attempts` + 1. Of those, a row of a lane with a frequency cap
    /// per recipient whose recipient has reached it ends `cancelled`/`FrequencyCapped` (`skip`) or
    /// waits, not returned, until the window has room (`defer`). The statement commits before
    /// anything is sent.
    ///
    /// A lapsed lease gives its attempt back the first time in a row (its worker may have died
    /// before sending; `last_reason` becomes `LeaseExpired`, `attempts` stays); a second lapse in
    /// a row counts, so a row that kills every worker that takes it still ends. The new
    /// `locked_until` (``ClaimedNotification/lease``) tells this claim from every other claim of the row.
    /// APNs rows of a push type this version does not know are left for a newer worker.
    ///
    /// Odd data cannot make it fail: an `expires_at` of 'infinity' is no expiry (``ClaimedNotification/expiresAt``
    /// nil), '-infinity' has passed; `attempts` + 1 cannot overflow, as only a row with `attempts` <
    /// `max_attempts` (a smallint) is sent. A row that still makes it fail (SQLSTATE class 22 or 23)
    /// fails the whole statement: see ``claimHeads(credentials:defaultEnvironment:only:excluding:)``
    /// and ``endClaimErrors(ids:workerID:)``.
    ///
    /// A token is invalid when `pushq.devices` has it invalid for the row's provider: an APNs
    /// row's token lower-case in the row's environment, an FCM row's token exactly (FCM tokens
    /// are case-sensitive; FCM has no environment).
    ///
    /// - Parameters:
    ///   - credentials: each provider's credential names this worker can send with (`"default"`
    ///     for NULL); a provider without an entry is not claimed (``ClaimRouting``).
    ///   - defaultEnvironment: the environment of APNs rows whose `environment` is NULL.
    ///   - only: claim rows of this endpoint alone (a probe); `credentials` is then ignored, and so is its hold. Otherwise no row of a held endpoint is claimed
    ///     (one with a row in `pushq.credential_pauses`, as the statement sees that table:
    ///     ``ClaimFilter/heldSQL(environment:)``). A row's endpoint is its credential and
    ///     channel: `fcm` for FCM rows, the environment (or `defaultEnvironment`) for APNs rows.
    ///   - row: claim this row alone, if it is due (finding a row that makes claims fail).
    ///   - excluding: rows not to claim (rows known to make claims fail).
    ///   - rotation: which lane of a rank goes first (the worker counts its claims).
    ///   - budget: the fleet's cap of the one credential this claim is for (with `credentials`
    ///     naming that credential alone): at most its whole tokens are taken.
    ///   - belowRank: take only rows of lanes ranked lower than this (and no lapsed lease): what
    ///     a worker whose window is full of rows of that rank claims when new rows arrive.
    ///   - considerate: the claim that applies every rule (``ClaimStatement/sql(considerate:)``);
    ///     false, the plain claim, cheaper for PostgreSQL, which takes nothing when a lane it would
    ///     walk caps sends per recipient or has rows with a tenant (``ClaimBatch/needsConsiderate``).
    /// - Returns: the rows, and whether a cap held back rows that were due (claim again soon).
    public func claim(limit: Int, workerID: String, leaseSeconds: Double, credentials: [Provider: [String]],
                      defaultEnvironment: APNsEnvironment, only: Endpoint? = nil,
                      row: Int64? = nil, excluding: [Int64] = [], rotation: Int = 0,
                      budget: RateBudget? = nil, belowRank: Int? = nil, considerate: Bool = true) throws(PGError) -> ClaimBatch {
        let (sql, parameters, custom) = ClaimStatement.bound(limit: limit, workerID: workerID, leaseSeconds: leaseSeconds,
                                                     credentials: credentials,
                                                     defaultEnvironment: defaultEnvironment, only: only, row: row,
                                                     excluding: excluding, rotation: rotation, budget: budget, belowRank: belowRank,
                                                     considerate: considerate)
        // Prepared unless it is a probe or a hunt's, the worker's usual claim: a handful of texts,
        // each parsed once per session and planned once PostgreSQL settles on its generic plan.
        let result = try serializedClaim(sql, parameters, prepared: !custom)
        var batch = ClaimBatch()
        let rows = result.rows
        let c = try ClaimColumns(rows)
        batch.rows.reserveCapacity(rows.count)
        for row in rows {
            let verdictText = row.string(c.verdict)
            if verdictText == ClaimBatch.budgetVerdict {
                batch.heldBackByCap = true
                continue
            }
            if verdictText == ClaimBatch.againVerdict {
                batch.claimAgain = true
                continue
            }
            if verdictText == ClaimBatch.considerateVerdict {
                batch.needsConsiderate = true
                continue
            }
            // The statement has committed: a row this worker cannot read must still come back,
            // as `unreadable` if it is now held, so that it is ended rather than left to its lease.
            guard var verdict = ClaimedNotification.Verdict(claimText: verdictText ?? "") else {
                throw PGError(code: .invalidValue, message: "claim returned a row with an unknown verdict")
            }
            let provider = Provider(rawValue: row.string(c.provider) ?? "")
            let pushType = PushType(rawValue: row.string(c.pushType) ?? "")
            let environment = APNsEnvironment(rawValue: row.string(c.environment) ?? "")
            let deviceToken = row.string(c.deviceToken)
            let channelID = row.string(c.channelID)
            // A broadcast whose channel row is gone (deleted by hand while the row was in flight)
            // has neither a token nor a channel id: it cannot be sent anywhere.
            let lostChannel = provider == .apns && deviceToken == nil && channelID == nil
            // A Web Push row needs its keys (the row rules see to it; checked again when its request is made).
            let readable = provider == .fcm || (provider == .webpush && row.string(c.webpushKeys) != nil)
                || (provider == .apns && pushType != nil && environment != nil && !lostChannel)
            if verdict == .send && !readable { verdict = .unreadable }
            batch.rows.append(ClaimedNotification(
                id: try row.decode(Int64.self, c.id),
                verdict: verdict,
                provider: provider ?? .apns,
                deviceToken: deviceToken ?? "",
                payload: verdict == .send ? row.bytes(c.payload) ?? [] : [],
                topic: row.string(c.topic),
                pushType: pushType ?? .alert,
                priority: try row.decode(Int?.self, c.priority),
                expiresAt: try row.decode(Int64?.self, c.expiresAt),
                collapseID: row.string(c.collapseID),
                apnsID: row.string(c.apnsID) ?? "",
                environment: provider == .fcm ? .production : environment ?? defaultEnvironment,
                credential: row.string(c.credential) ?? "",
                attempts: try row.decode(Int?.self, c.attempts) ?? 0,
                lease: try row.decode(Int64?.self, c.lease) ?? 0,
                maxAttempts: try row.decode(Int?.self, c.maxAttempts) ?? 1,
                lastReason: row.string(c.lastReason),
                lane: row.string(c.lane) ?? LaneStops.defaultLane,
                rank: try row.decode(Int?.self, c.rank) ?? Int(PushRequest.defaultRank),
                channelID: channelID,
                channelStoragePolicy: try row.decode(Int?.self, c.channelStoragePolicy),
                webpushKeys: row.string(c.webpushKeys),
                quietWindow: QuietInstants(opens: try row.decode(Int64?.self, c.quietOpens),
                                           closes: try row.decode(Int64?.self, c.quietCloses)),
                tenant: row.string(c.tenant)))
        }
        return batch
    }

    /// The claim's columns (``ClaimStatement``'s `RETURNING`), found by name once per claim, not
    /// once per row: a claim decodes up to hundreds of rows.
    private struct ClaimColumns {
        let id, verdict, deviceToken, payload, topic, pushType, priority, expiresAt, collapseID, apnsID, environment: PGColumn
        let credential, attempts, maxAttempts, lastReason, provider, lease, lane, rank, channelID, channelStoragePolicy, webpushKeys: PGColumn
        let quietOpens, quietCloses: PGColumn
        let tenant: PGColumn

        init(_ rows: PGRows) throws(PGError) {
            id = try rows.column("id")
            verdict = try rows.column("verdict")
            deviceToken = try rows.column("device_token")
            payload = try rows.column("payload")
            topic = try rows.column("topic")
            pushType = try rows.column("push_type")
            priority = try rows.column("priority")
            expiresAt = try rows.column("expires_at")
            collapseID = try rows.column("collapse_id")
            apnsID = try rows.column("apns_id")
            environment = try rows.column("environment")
            credential = try rows.column("credential")
            attempts = try rows.column("attempts")
            maxAttempts = try rows.column("max_attempts")
            lastReason = try rows.column("last_reason")
            provider = try rows.column("provider")
            lease = try rows.column("lease")
            lane = try rows.column("lane")
            rank = try rows.column("rank")
            channelID = try rows.column("channel_id")
            channelStoragePolicy = try rows.column("channel_storage_policy")
            webpushKeys = try rows.column("webpush_keys")
            quietOpens = try rows.column("quiet_opens")
            quietCloses = try rows.column("quiet_closes")
            tenant = try rows.column("tenant")
        }
    }

    /// Rows this version can read: an APNs row's `push_type` must be one it knows. A row of a
    /// push type added by a newer schema waits for a newer worker instead of being ended here.
    static let knownRowsSQL = "AND (n.provider <> 'apns' OR n.push_type IN ("
        + PushType.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ") + "))"
}

extension PGConnection {
    /// An arbitrary constant: the transaction-level advisory lock that lets one claim run at a
    /// time across the fleet.
    public static let claimLockKey: Int64 = 0x7075_7368_636C_6169  // "pushclai"

    /// The statement that ends a claim's transaction: what `pg_stat_activity` shows of a
    /// worker's claim connection once a claim has committed.
    public static let claimCommitSQL = "COMMIT -- pushq claim"

    /// Runs the claim `sql` in a transaction that first takes ``claimLockKey``: claims of every
    /// worker take turns. Concurrent claims walked the same head of the due index, each skipping
    /// the rows the others had locked and the entries of rows just claimed; one at a time they
    /// cost PostgreSQL less (8 workers: 78–80 → 72–75 µs per notification, docs/performance.md). The
    /// claim's snapshot is taken after the lock, so it sees every earlier claim's rows as
    /// claimed. A claim of 500 rows holds the lock for a few milliseconds; the lock goes with
    /// the transaction, also when the connection is lost.
    ///
    /// A prepared claim is planned as ``planSettings`` says.
    func serializedClaim(_ sql: String, _ parameters: [(any PGParameter)?], prepared: Bool) throws(PGError) -> PGResult {
        try typedTransaction(begin: Self.claimBegin(prepared: prepared), commit: Self.claimCommitSQL) { c throws(PGError) in
            prepared ? try c.preparedQuery(sql, parameters) : try c.query(sql, parameters)
        }
    }

    /// What opens a claim's transaction, in one message: `BEGIN` and the fleet's claim lock; for
    /// a prepared claim also its plan settings (``planSettings``).
    static func claimBegin(prepared: Bool) -> String {
        prepared ? "BEGIN; \(planSettings) SELECT pg_advisory_xact_lock(\(claimLockKey))"
                 : "BEGIN; SELECT pg_advisory_xact_lock(\(claimLockKey))"
    }

    /// How a prepared claim is planned, for the rest of its transaction, by what PostgreSQL's
    /// statistics last said of `pushq.notifications` (`pg_class.reltuples`).
    ///
    /// From 10 000 rows: `plan_cache_mode = force_generic_plan`, so that it runs on the plan
    /// PostgreSQL made once for its text. With the default (`auto`) PostgreSQL kept planning a
    /// claim anew at every run whenever its generic plan's estimate came out a little above the
    /// custom ones' (a campaign lane, for one): 1.8–2.1 ms of planning per claim, more than the
    /// 1 ms that an urgent claim of a few rows runs for (docs/performance.md, "A campaign's
    /// statistics, and claims planned once"). The generic plan is what `auto` settles on
    /// elsewhere; ``ClaimPlanTests`` checks that it reads no table whole. Unprepared claims (a
    /// probe, a hunt) keep custom plans: `force_generic_plan` would apply to their unnamed
    /// statements too.
    ///
    /// Under 10 000 rows, or none counted yet (-1): `force_custom_plan`, planned at each claim
    /// for the table as it is then, and sequential scans off. A generic plan is kept until an
    /// ANALYZE; made on an empty table (a new install, a table retention emptied) it was wrong
    /// for the rows that came next: with scans on it read `pushq.notifications` whole for every
    /// entry it walked, with scans off it joined each claim's rows to the whole table by a
    /// comparison per pair. 10 000 live-activity rows drained in claims of ~2 s each, 5 million
    /// comparisons apiece, until autovacuum's ANALYZE (docs/performance.md, "A plan made on an
    /// empty table"). Planning costs ~1–2 ms a claim, paid only while the table is small.
    /// Scans stay on from 10 000 rows: off for every claim, the plan of a full table costs
    /// ~2 µs more per notification.
    static let planSettings = """
        SELECT set_config('plan_cache_mode', CASE WHEN c.reltuples < 10000 THEN 'force_custom_plan' ELSE 'force_generic_plan' END, true), \
        set_config('enable_seqscan', CASE WHEN c.reltuples < 10000 THEN 'off' ELSE 'on' END, true) \
        FROM pg_class c WHERE c.oid = 'pushq.notifications'::regclass;
        """

    /// Creates the `pushq.rate_budgets` rows of `keys` that do not exist yet (empty: no burst at start).
    public func ensureBudgets(_ keys: [String]) throws(PGError) {
        // The lanes' rows too: the lanes_budget trigger makes them when a cap is set, but a row
        // deleted since (TRUNCATE pushq.rate_budgets) would stop its lane for good.
        try query("""
            INSERT INTO pushq.rate_budgets (key)
            SELECT unnest($1::text[]) UNION SELECT 'lane:' || l.name FROM pushq.lanes l WHERE l.max_per_second IS NOT NULL
            ON CONFLICT (key) DO NOTHING
            """, [keys])
    }
}
