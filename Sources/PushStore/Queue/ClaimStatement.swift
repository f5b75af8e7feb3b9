import PushCore
import PGClient

/// The claim statement of ``PGConnection/claim(limit:workerID:leaseSeconds:credentials:defaultEnvironment:only:row:excluding:rotation:budget:belowRank:considerate:)``.
///
/// One statement, in steps (each a CTE):
/// 1. `waiting`: the lanes that have entries in pushq.due, by a loose scan of due_order (one
///    index probe per lane);
/// 2. `settings`: each with its row of pushq.lanes, or default's (rank, pause, cap);
/// 3. `budgets`: the fleet's token buckets of the capped lanes (and of the capped credential
///    this claim is for), locked `SKIP LOCKED`: a bucket another worker is spending from now is
///    skipped this time;
/// 4. `queue`: the lanes not paused, lowest rank first, lanes of one rank in an order rotated
///    by `$9` every claim, each with its quota (its budget's whole tokens when capped);
/// 4b. `quiet_walk`, `quiet_rows`, `quieted`: for lanes with quiet hours only (`pushq.lane_rules`,
///    read in `settings`), their due entries walked once, each row's window computed by the server
///    once per zone (`pushq.quiet_window`): entries inside it move to its end (`held = 'quiet'`, the
///    row untouched), the others are what `due` takes for those lanes;
/// 5. `due`: each lane's entries of pushq.due in due order, each entry's row checked and locked
///    `SKIP LOCKED` in a sub-select (it must still wait and be due, or be a lapsed lease that the
///    upkeep gave an entry again, ``PGConnection/recoverLapsedLeases(limit:)``: an entry a worker
///    of the previous release left behind is skipped), up to its quota, lane after lane until
///    `$1` rows (or the credential's budget) are taken (a lane with tenants: each tenant's part
///    first, in turn, ``tenantWalkSQL(lane:walk:when:)``, walked only when the claim reaches
///    the lane; quiet_walk walks a quiet lane's the same way); `taken`: those entries deleted. `due`
///    ends in a constant `LIMIT` (``sizeBound(_:)``), so that every later step is planned for
///    about `$1` rows;
/// 6. `judged`: each row's verdict; `cap_lanes`, `cap_rows`, `cap_verdicts` (only when a lane of
///    the claim caps sends per recipient, `pushq.lane_caps`: else a one-time filter runs none of
///    it): each row that would go out counted against its recipient's reservations in
///    pushq.recipient_sends, and within the cap reserved (`reserved`), over it `capped` (skip) or
///    `deferred` (its entry held `cap` until the window has room, `cap_held`; its row untouched and
///    not returned); `picked`: the verdicts with the cap's; `spent`: the budgets less the rows that
///    go out; `leased`: one row of pushq.leases for the rows that go out (their ids and the lease's end);
/// 7. the UPDATE of the rows, and one more row (`id` 0, verdict `budget`) when a cap held
///    back rows that are due, so that the worker claims again soon rather than at its poll; and
///    one (verdict `again`, ``ClaimBatch/claimAgain``) when a quiet lane's walk moved entries and
///    read all it may, or rows were deferred by a cap while others are due behind them: the
///    worker claims again at once.
///
/// Two forms (``sql(considerate:)``): the considerate claim, all of the above; and the plain
/// claim, without the tenant walk and the cap steps, which a worker sends while no lane needs
/// them (``plainGuardSQL``: it takes nothing when one does, and answers one row, verdict
/// `considerate`).
enum ClaimStatement {
    /// Seconds of a cap a bucket may hold: a lane idle for a while sends at most this much
    /// more than its cap at once. Small, so that any 10-second window stays within 3% of the cap.
    static let burstSeconds = 0.25

    /// Parameters: `$1` limit, `$2` worker id, `$3` lease seconds, `$4` default environment,
    /// `$9` rotation, `$10` credential budget key (NULL: none), `$11` its cap per second, `$12` a
    /// rank to stay below (NULL: any); ``ClaimRouting``'s two per provider at
    /// ``routingParameter(_:)``; the ``ClaimFilter`` from ``firstFilterParameter``.
    static let firstFilterParameter = 13 + 2 * max(0, Provider.allCases.count - providersBeforeOwn)

    /// The providers whose routing parameters come before the claim's own `$9`–`$12`: APNs' and
    /// FCM's have always been `$5`–`$8`, and the statement's text stays the one it has been.
    static let providersBeforeOwn = 2

    /// The first of the two parameters of provider `index` (in ``Provider/allCases`` order):
    /// `$5` and `$7` for the first two, then after the claim's own, from `$13`. A provider added
    /// takes the next two numbers and moves no other one.
    static func routingParameter(_ index: Int) -> Int {
        index < providersBeforeOwn ? 5 + 2 * index : 13 + 2 * (index - providersBeforeOwn)
    }

    /// Row `n`'s key in pushq.token_throttles (`t`), as ``TokenThrottle`` writes it (``TokenKey``):
    /// an APNs token lower-case in its environment; another provider's token as given, under the
    /// provider's name. Both sides are the row's own values, so the probe descends the primary key
    /// on both columns.
    static let throttleMatch = """
        t.device_token = \(TokenKey.tokenSQL)
                                    AND t.environment = \(TokenKey.sql { $0.throttle?.sql })
        """

    /// Whether row `n`'s token is invalid in pushq.devices (`d`), as ``TokenInvalidation`` writes
    /// it (``TokenKey``): one probe of devices_invalidated on all three of its columns, each the
    /// row's own value. (An FCM or Web Push device's environment is always 'production'; saying
    /// so, rather than leaving the column out, is what lets the probe descend all three: without
    /// it PostgreSQL 18 costed the probe on the first and last column above the unique index of
    /// every registered device, and probed that one.)
    static let invalidTokenSQL = """
        EXISTS (SELECT 1 FROM pushq.devices d
                 WHERE d.device_token = \(TokenKey.tokenSQL)
                   AND d.environment = \(TokenKey.sql { $0.registry.sql })
                   AND d.provider = n.provider
                   AND pushq.token_is_invalid(d.registered_at, d.invalidated_at))
        """

    /// The lanes that have entries in pushq.due (and one NULL): a loose scan of due_order, one
    /// index probe per lane. Opens the claim, the poison hunt's heads and the lane gauges.
    static let dueLanes = """
        WITH RECURSIVE waiting(lane) AS (
            (SELECT d.lane FROM pushq.due d ORDER BY d.lane LIMIT 1)
            UNION ALL
            SELECT (SELECT d.lane FROM pushq.due d WHERE d.lane > w.lane ORDER BY d.lane LIMIT 1)
              FROM waiting w
             WHERE w.lane IS NOT NULL
        )
        """

    /// Whether row `n` can go now as far as its broadcast channel goes: a row to a device token
    /// (the one test such a row pays), or one whose channel is `active` at Apple. A broadcast row
    /// for a channel not yet created waits, unclaimed; one for a deleted channel was ended by the
    /// deletion. Only waiting rows are filtered: a lapsed lease of a broadcast is
    /// taken again and sent, and Apple's answer ends it.
    /// (`pushq.channel_active` is a function of cost 1, not an inline EXISTS: its comment in 100_release_0_4_0.sql says why.)
    static let channelReadySQL = "AND (n.channel IS NULL OR pushq.channel_active(n.channel))"

    /// Whether row `n` is one to take from its entry in pushq.due: waiting and due (and
    /// `waitingAlso`), or in flight under a lease that has ended (the upkeep gave it an entry
    /// again, ``PGConnection/recoverLapsedLeases(limit:)``). The claim's and the poison hunt's.
    static func dueOrLapsedSQL(waitingAlso: String = "") -> String {
        """
        AND ((n.status IN ('queued', 'retrying') AND n.scheduled_at <= now() \(waitingAlso))
             OR (n.status = 'sending' AND n.locked_until < now()))
        """
    }

    /// What every claimable row is besides: of this worker's credentials (``ClaimRouting``,
    /// ``routingParameter(_:)``), of a kind it knows, and within the claim's filter (``ClaimFilter``).
    static let routedSQL = """
        \(ClaimRouting.sql(number: routingParameter))
        \(PGConnection.knownRowsSQL)
        \(ClaimFilter.marker)
        """

    /// The conditions under which row `n` can be claimed now from pushq.due: waiting and due
    /// with its channel ready, or a lapsed lease, and ``routedSQL``.
    static let dueClaimableSQL = dueOrLapsedSQL(waitingAlso: channelReadySQL) + "\n" + routedSQL

    /// Whether lane `lane` has an entry in pushq.due, besides those the claim takes (`due`),
    /// whose row can be claimed now (``dueClaimableSQL``): the first such entry in due order,
    /// fenced by OFFSET 0 (which keeps PostgreSQL from dropping the ORDER BY of an EXISTS), a walk
    /// of due_order that stops there. What the cap's check reads.
    static func dueBeyondSQL(lane: String) -> String {
        """
        SELECT 1 FROM pushq.due d
         WHERE d.lane = \(lane) AND d.due_at <= now()
           AND d.id NOT IN (SELECT id FROM due)
           AND EXISTS (SELECT 1 FROM pushq.notifications n WHERE n.id = d.id \(dueClaimableSQL))
         ORDER BY d.due_at, d.id OFFSET 0 LIMIT 1
        """
    }

    /// One lane's tenant walk (issue 48, item 5), run where the claim reaches the lane (`due`'s and
    /// quiet_walk's laterals: a lane the claim never reaches reads nothing here): rows (id, due_at,
    /// rank, turn, per, next) of pushq.due, unlocked and unchecked (due_tenant's columns only); the caller
    /// checks and locks the rows it takes, in (rank, turn) order. Nothing, without a read beyond one
    /// probe of due_tenant, when `when` is false or the lane has no entry with a tenant: the lane then
    /// walks due_order as it always did.
    ///
    /// `names`: the lane's tenants in a cycle that starts after the last one served (NULL, one tenant
    /// of its own, between the last name and the first), one probe of due_tenant each (its first
    /// entry: the tenant's earliest due_at), until `walk` tenants with an entry due now are found or
    /// 5 × the claim's size were visited; tenants whose entries are all in the future (scheduled,
    /// held 'quiet' or 'cap') take no place. `listed`: those due now, numbered from 0 (`turn`).
    /// `moved`: where the next claim's cycle starts, kept in the session (``tenantTurnSQL(lane:next:)``):
    /// after the last name visited, then, as the caller takes each tenant's first entry (`next`), after
    /// that tenant (after the last name visited for the last one listed): a claim that takes fewer
    /// than it listed (an earlier lane took most of it) starts the next after the last it served. A
    /// worker's claims walk every tenant in turn whatever their number; a new session starts at the
    /// first name. (Set in the claim's transaction: a claim rolled back leaves it as it was.) Each
    /// tenant's first entries in due order (`rank`), at most its part of `walk` (`per`: `walk`
    /// shared out, at most `walk` in all).
    static func tenantWalkSQL(lane: String, walk: String, when: String) -> String {
        let key = tenantTurnKey(lane)
        return """
            WITH RECURSIVE names(phase, tenant, first_due, visited, ready, start) AS (
                SELECT 0, s.start, NULL::timestamptz, 0, 0, s.start
                  FROM (SELECT COALESCE(current_setting(\(key), true), '') AS start) s
                 WHERE \(when)
                   -- (A probe in due_tenant's order, fenced by OFFSET 0: never a scan that stops at its first match.)
                   AND EXISTS (SELECT 1 FROM pushq.due d WHERE d.lane = \(lane) AND d.tenant IS NOT NULL
                                ORDER BY d.lane, d.tenant OFFSET 0 LIMIT 1)
                UNION ALL
                -- The next tenant: after this one (phase 0), then NULL's entries (1), then from the
                -- first name up to the start (2).
                SELECT x.phase, x.tenant, x.due_at, u.visited + 1, u.ready + CASE WHEN x.due_at <= now() THEN 1 ELSE 0 END, u.start
                  FROM names u
                 CROSS JOIN LATERAL (
                       (SELECT 0 AS phase, d.tenant, d.due_at FROM pushq.due d
                         WHERE u.phase = 0 AND d.lane = \(lane) AND d.tenant > u.tenant
                         ORDER BY d.lane, d.tenant, d.due_at LIMIT 1)
                       UNION ALL
                       (SELECT 1, NULL::text, d.due_at FROM pushq.due d
                         WHERE u.phase = 0 AND d.lane = \(lane) AND d.tenant IS NULL
                         ORDER BY d.lane, d.tenant, d.due_at LIMIT 1)
                       UNION ALL
                       (SELECT 2, d.tenant, d.due_at FROM pushq.due d
                         WHERE u.phase < 2 AND d.lane = \(lane) AND d.tenant <= u.start
                         ORDER BY d.lane, d.tenant, d.due_at LIMIT 1)
                       UNION ALL
                       (SELECT 2, d.tenant, d.due_at FROM pushq.due d
                         WHERE u.phase = 2 AND d.lane = \(lane) AND d.tenant > u.tenant AND d.tenant <= u.start
                         ORDER BY d.lane, d.tenant, d.due_at LIMIT 1)
                       LIMIT 1) x
                 WHERE u.visited < 5 * \(sizeMarker) AND u.ready < \(walk)
            ), listed AS MATERIALIZED (
                SELECT n.tenant, row_number() OVER (ORDER BY n.visited) - 1 AS turn, count(*) OVER () AS k
                  FROM names n
                 WHERE n.visited > 0 AND n.first_due <= now()
            ), moved AS MATERIALIZED (
                SELECT set_config(\(key), COALESCE((SELECT n.tenant FROM names n ORDER BY n.visited DESC LIMIT 1), ''), false) AS start
                 WHERE EXISTS (SELECT 1 FROM names)
            )
            SELECT e.id, e.due_at, e.rank, l.turn, l.per,
                   CASE WHEN e.rank = 1 THEN CASE WHEN l.turn = l.k - 1 THEN (SELECT m.start FROM moved m) ELSE COALESCE(l.tenant, '') END END AS next
              FROM (SELECT l.*, \(walk) / l.k + CASE WHEN l.turn < \(walk) % l.k THEN 1 ELSE 0 END AS per FROM listed l) l
             CROSS JOIN LATERAL (
                   -- Ranked once limited: each tenant's probe reads its part, not its backlog.
                   SELECT x.id, x.due_at, row_number() OVER (ORDER BY x.due_at, x.id) AS rank FROM (
                       (SELECT d.id, d.due_at FROM pushq.due d
                         WHERE l.tenant IS NOT NULL AND d.lane = \(lane) AND d.tenant = l.tenant AND d.due_at <= now()
                         ORDER BY d.lane, d.tenant, d.due_at, d.id
                         LIMIT l.per)
                       UNION ALL
                       (SELECT d.id, d.due_at FROM pushq.due d
                         WHERE l.tenant IS NULL AND d.lane = \(lane) AND d.tenant IS NULL AND d.due_at <= now()
                         ORDER BY d.lane, d.tenant, d.due_at, d.id
                         LIMIT l.per)) x) e
             -- The cycle's next start is set whenever the lane is walked (also when none is due now).
             WHERE (SELECT count(*) FROM moved) >= 0
            """
    }

    /// The session's setting that holds where lane `lane`'s next tenant walk starts.
    static func tenantTurnKey(_ lane: String) -> String {
        "'pushq.tenant_turn_' || md5(\(lane))"
    }

    /// Moves lane `lane`'s tenant cycle to start after `next` (a taken row's, from tenantWalkSQL;
    /// NULL: stays), as the row is taken.
    static func tenantTurnSQL(lane: String, next: String) -> String {
        "CASE WHEN \(next) IS NOT NULL THEN set_config(\(tenantTurnKey(lane)), \(next), false) END"
    }

    /// Whether lane `lane` (an SQL expression) is paused (its own row of pushq.lanes, else default's).
    static func lanePausedSQL(_ lane: String) -> String {
        """
        COALESCE((SELECT l.paused FROM pushq.lanes l WHERE l.name = \(lane)),
                 (SELECT l.paused FROM pushq.lanes l WHERE l.name = 'default'), false)
        """
    }

    /// The statement and its parameters for a claim with these arguments (those of
    /// ``PGConnection/claim(limit:workerID:leaseSeconds:credentials:defaultEnvironment:only:row:excluding:rotation:budget:belowRank:considerate:)``),
    /// and whether it is a custom one (``ClaimFilter/custom``: a probe, a hunt's rows).
    static func bound(limit: Int, workerID: String, leaseSeconds: Double, credentials: [Provider: [String]],
                      defaultEnvironment: APNsEnvironment, only: Endpoint?, row: Int64?, excluding: [Int64],
                      rotation: Int, budget: RateBudget?, belowRank: Int?, considerate: Bool = true)
        -> (sql: String, parameters: [(any PGParameter)?], custom: Bool) {
        let routing = ClaimRouting(credentials, only: only).parameters
        var parameters: [(any PGParameter)?] = [limit, workerID, leaseSeconds, defaultEnvironment.rawValue]
        parameters += routing.prefix(2 * providersBeforeOwn)
        parameters += [rotation % 1_000_000, budget?.key, budget?.perSecond, belowRank]
        parameters += routing.dropFirst(2 * providersBeforeOwn)
        var filter = ClaimFilter(next: firstFilterParameter, environment: "$4", defaultEnvironment: defaultEnvironment)
        filter.add(only: only, row: row, excluding: excluding)
        let text = (considerate ? templates.considerate : templates.plain).render([sizeMarker: String(sizeBound(limit)), ClaimFilter.marker: filter.sql])
        return (text, parameters + filter.parameters, filter.custom)
    }

    /// Where ``sql`` takes the claim's ``sizeBound(_:)``.
    static let sizeMarker = "/*SIZE*/"

    /// ``sql(considerate:)``, each form, cut at its markers once (``bound(limit:workerID:leaseSeconds:credentials:defaultEnvironment:only:row:excluding:rotation:budget:belowRank:considerate:)``
    /// joins the pieces for every claim).
    static let templates = (plain: SQLTemplate(sql(considerate: false), markers: [sizeMarker, ClaimFilter.marker]),
                            considerate: SQLTemplate(sql(considerate: true), markers: [sizeMarker, ClaimFilter.marker]))

    /// The claim's size as the planner sees it: the least power of two not below `limit`. A
    /// constant in the text, so that a generic plan is planned for about the claim's size, and
    /// a power of two, so that a worker's claims have a handful of texts to prepare.
    static func sizeBound(_ limit: Int) -> Int {
        var bound = 1
        while bound < limit { bound *= 2 }
        return bound
    }

    /// The plain claim's guard (``sql(considerate:)``): one row when a lane the claim would walk
    /// (not paused, within `$12`) caps sends per recipient, or has an entry of pushq.due with a
    /// tenant. Then `queue` is empty, the claim takes nothing and says so (verdict `considerate`).
    /// Whether any entry has a tenant is one probe of due_tenanted (migration 115: those entries
    /// only, empty while no producer sets `tenant`), run once (an uncorrelated sub-select); only
    /// when one has, each lane is asked (a probe of due_tenanted by lane).
    static let plainGuardSQL = """
        ), considerate AS MATERIALIZED (
            SELECT 1 FROM settings s
             WHERE NOT s.paused AND ($12::int IS NULL OR s.rank < $12::int)
               AND (s.recipient_cap IS NOT NULL
                    -- (Each in an index's order, fenced by OFFSET 0: without statistics PostgreSQL takes
                    -- almost every entry for one with a tenant, and a scan that stops at its first
                    -- match, which reads pushq.due whole when none has.)
                    OR (EXISTS (SELECT 1 FROM pushq.due t WHERE t.tenant IS NOT NULL ORDER BY t.lane, t.tenant OFFSET 0 LIMIT 1)
                        AND EXISTS (SELECT 1 FROM pushq.due d WHERE d.lane = s.lane AND d.tenant IS NOT NULL
                                     ORDER BY d.lane, d.tenant OFFSET 0 LIMIT 1)))
             LIMIT 1

        """

    /// Whether the row of entry `id` can be claimed now (``dueClaimableSQL``), locked if so, `SKIP
    /// LOCKED` and checked again on its latest version once locked: `due`'s test of each entry it
    /// takes. (A sub-select with a lock is never made a join: the walk stays entry after entry.)
    static func claimableLockedSQL(_ id: String) -> String {
        """
        EXISTS (
              SELECT 1 FROM pushq.notifications n
               WHERE n.id = \(id)
                 \(dueClaimableSQL)
                 FOR UPDATE OF n SKIP LOCKED)
        """
    }

    /// quiet_walk's read of the row of entry `id` (`r`): its zone (one pushq.time_zones no longer
    /// lists is none) and expiry, if it can be claimed now (``dueClaimableSQL``). (OFFSET 0: the
    /// sub-select stays a probe per entry, never a join that reads the lane's backlog whole.)
    static func zonedRowSQL(_ id: String) -> String {
        """
        CROSS JOIN LATERAL (
              SELECT z.name AS zone, n.expires_at
                FROM pushq.notifications n
                LEFT JOIN pushq.time_zones z ON z.name = n.time_zone
               WHERE n.id = \(id)
                 \(dueClaimableSQL)
              OFFSET 0) r
        """
    }

    /// A quiet lane's tenants' parts, in quiet_walk's lateral before its walk in due order (the
    /// considerate claim's).
    static let quietTenantsSQL = """
                   WITH tw AS MATERIALIZED (
                       \(tenantWalkSQL(lane: "ql.lane", walk: "least(ql.quota, $1::int)", when: "ql.quiet_start IS NOT NULL AND ql.quota > 0"))
                   )
                   SELECT * FROM (
                   (SELECT t.id, t.due_at, r.expires_at, r.zone, t.rank, t.turn, t.per, t.next
                     FROM (SELECT * FROM tw ORDER BY tw.rank, tw.turn OFFSET 0) t
                    \(zonedRowSQL("t.id")))
                   UNION ALL
        """

    /// A lane's tenants' parts, in due's lateral before its walk in due order (the considerate
    /// claim's; the plain claim opens the same union without them).
    static let dueTenantsSQL = """
                   -- A lane with tenants (without quiet hours): its tenants walked when the claim
                   -- reaches the lane (tenantWalkSQL; a lane it never reaches reads nothing there).
                   WITH tw AS MATERIALIZED (
                       \(tenantWalkSQL(lane: "q.lane", walk: "least(q.quota, $1::int)", when: "q.quiet_start IS NULL AND q.quota > 0"))
                   )
                   SELECT * FROM (
                   -- First its walked entries in turn (rank, then tenant from the cycle's start), each
                   -- row locked as below, up to the quota (the ordered subquery, fenced by OFFSET 0, is
                   -- read row by row up to the LIMIT); when the tenants' parts leave room, the walk
                   -- below fills it. A lane without tenants has no entry in tw: nothing is read here.
                   -- A row taken moves the lane's tenant cycle past its tenant (`turned`, tenantTurnSQL).
                   (SELECT w.id, w.due_at AS scheduled_at, NULL::tstzrange AS quiet, \(tenantTurnSQL(lane: "q.lane", next: "w.next")) AS turned
                      FROM (SELECT w.id, w.due_at, w.next
                              FROM tw w
                             ORDER BY w.rank, w.turn
                            OFFSET 0) w
                     WHERE \(claimableLockedSQL("w.id"))
                     LIMIT q.quota)
                   UNION ALL
        """

    /// The cap's verdicts, after `judged` (the considerate claim's; in the plain claim `judged`
    /// is `picked`).
    static let capStepsSQL = """
        ), cap_lanes AS MATERIALIZED (
            -- The lanes of this claim's rows that cap sends per recipient (pushq.lane_caps, read
            -- in `settings`: the lane's row of pushq.lanes, or default's for a lane without one).
            SELECT q.ord, q.lane, q.recipient_cap AS cap, q.recipient_window AS win, q.over_cap
              FROM queue q
             WHERE q.recipient_cap IS NOT NULL AND q.ord IN (SELECT j.ord FROM judged j)
        ), cap_rows AS MATERIALIZED (
            -- The rows of capped lanes that would go out, each with its recipient
            -- (pushq.recipient_key, the row read again by primary key). A one-time filter: when no
            -- lane of this claim has a cap, this and every cap step below run no node at all. The
            -- cap comes after the other verdicts: an expired, invalid or throttled row never takes
            -- a recipient's place.
            SELECT j.id, k.lane, k.cap, k.win, k.over_cap, j.due_at, j.lapsed,
                   pushq.recipient_key(cn.user_ref, cn.provider, cn.device_token) AS recipient
              FROM judged j
              JOIN cap_lanes k ON k.ord = j.ord
              JOIN pushq.notifications cn ON cn.id = j.id
             WHERE j.verdict = 'sending'
               AND EXISTS (SELECT 1 FROM cap_lanes)
        ), cap_verdicts AS MATERIALIZED (
            -- `sends`: the recipient's reservations inside the window, oldest first, at most `cap`
            -- of them (a range of recipient_sends' primary key, one lateral probe per row: a join
            -- of two CTEs was planned as a nested loop of every pair). `pos`: their number plus the
            -- row's rank among this claim's rows of its recipient (due order). Within the cap the
            -- row goes (`reserved`); over it, 'capped' (skip), or 'deferred' until the window has
            -- room for it: the (pos - cap)-th of the sends counted and this claim's (at now()),
            -- plus the window (a whole window more per cap beyond). Exact because claims take
            -- turns (claimBegin's lock): each sees every earlier claim's reservations. A lapsed
            -- lease always goes (its first worker may have sent it already: neither capped nor
            -- deferred) and is counted again: a reservation at now() beside its first one (kept),
            -- ranked before the claim's other rows of its recipient. Else a re-send whose first
            -- reservation left the window, or that never had one (claimed before the cap was set),
            -- went uncounted. A row without a recipient (a broadcast) goes uncounted.
            SELECT c.id, c.lane, c.recipient, c.pos,
                   CASE WHEN c.pos IS NULL OR c.lapsed OR c.pos <= c.cap THEN 'sending'
                        WHEN c.over_cap = 'defer' THEN 'deferred' ELSE 'capped' END AS verdict,
                   CASE WHEN NOT c.lapsed AND c.pos > c.cap
                        THEN (c.sends || array_fill(now(), ARRAY[greatest(0, c.cap - cardinality(c.sends))]))[(c.pos - c.cap - 1) % c.cap + 1]
                             + c.win * ((c.pos - c.cap - 1) / c.cap + 1) END AS until
              FROM (SELECT r.id, r.lane, r.recipient, r.cap, r.win, r.over_cap, r.lapsed, k.sends,
                           CASE WHEN r.recipient IS NOT NULL
                                THEN cardinality(k.sends) + row_number() OVER (PARTITION BY r.lane, r.recipient
                                                                              ORDER BY r.lapsed DESC, r.due_at, r.id) END AS pos
                      FROM cap_rows r
                     CROSS JOIN LATERAL (
                           SELECT COALESCE(array_agg(x.sent_at ORDER BY x.sent_at), '{}') AS sends
                             FROM (SELECT e.sent_at FROM pushq.recipient_sends e
                                    WHERE e.lane = r.lane AND e.recipient = r.recipient AND e.sent_at > now() - r.win
                                    ORDER BY e.sent_at LIMIT r.cap) x) k) c
        ), picked AS MATERIALIZED (
            -- Each row's verdict: judged's, or the cap's for a row of a capped lane.
            SELECT j.id, j.rank, j.budget, j.ord, j.due_at, j.quiet, j.refund,
                   COALESCE(v.verdict, j.verdict) AS verdict, v.until AS cap_until
              FROM judged j
              LEFT JOIN cap_verdicts v ON v.id = j.id
        """

    /// The cap's writes: reservations, and deferred rows' entries held (the considerate claim's).
    static let capWritesSQL = """
        ), reserved AS (
            -- A row of a capped lane that goes out reserves its place in its recipient's window
            -- (a lapsed lease once more, at this claim's instant).
            INSERT INTO pushq.recipient_sends (lane, recipient, sent_at, id)
            SELECT v.lane, v.recipient, now(), v.id FROM cap_verdicts v WHERE v.verdict = 'sending' AND v.pos IS NOT NULL
            ON CONFLICT DO NOTHING
        ), cap_held AS (
            -- A deferred row's entry stays, moved to when the window has room and held 'cap'
            -- (`pushq status` counts it apart from the due ones); its row is not written (status,
            -- attempts and scheduled_at stay). By primary key, as `taken` (the row is locked).
            UPDATE pushq.due d SET due_at = p.cap_until, held = 'cap'
              FROM (SELECT x.id, x.cap_until FROM picked x WHERE x.verdict = 'deferred') p
             WHERE d.id = p.id AND d.id = ANY (ARRAY(SELECT x.id FROM picked x WHERE x.verdict = 'deferred'))
        """

    /// The considerate claim's reason to claim again at once: rows over their recipient's cap
    /// were deferred while other rows are due behind them.
    static let capAgainSQL = """
        OR (EXISTS (SELECT 1 FROM picked p WHERE p.verdict = 'deferred')
                AND EXISTS (SELECT 1 FROM queue q WHERE EXISTS (\(dueBeyondSQL(lane: "q.lane")))))
        """

    /// The columns of a signal row after its id and verdict (``ClaimBatch``'s extra rows).
    static let nullColumns = "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"

    /// The claim's text: `considerate`, with every rule of issue 48 (a lane's tenants taken in turn,
    /// caps per recipient); plain, without the tenant walk and the cap steps, and so a plan of about
    /// half the nodes, which PostgreSQL sets up at every claim: for a fleet that uses neither. A
    /// plain claim takes nothing when a lane it would walk has a cap per recipient or an entry with
    /// a tenant (`considerate`): it answers one row (verdict `considerate`,
    /// ``ClaimBatch/needsConsiderate``) and the worker claims again with the considerate text.
    static func sql(considerate: Bool) -> String {
        dueLanes + """
        , settings AS MATERIALIZED (
            SELECT w.lane,
                   COALESCE(l.rank, d.rank, 100) AS rank,
                   COALESCE(l.paused, d.paused, false) AS paused,
                   CASE WHEN l.name IS NOT NULL THEN l.max_per_second ELSE d.max_per_second END AS cap,
                   'lane:' || COALESCE(l.name, 'default') AS budget,
                   r.quiet_start, r.quiet_end, r.time_zone AS quiet_zone,
                   k.recipient_cap, k.recipient_window, k.over_cap
              FROM waiting w
              LEFT JOIN pushq.lanes l ON l.name = w.lane
              LEFT JOIN pushq.lanes d ON d.name = 'default'
              -- (Functions called on a column, not a sub-select: PostgreSQL inlines them into
              -- this join; called on a sub-select, each was planned again at every claim.)
              LEFT JOIN LATERAL pushq.lane_rules(COALESCE(l.name, 'default')) r ON true
              LEFT JOIN LATERAL pushq.lane_caps(COALESCE(l.name, 'default')) k ON true
             WHERE w.lane IS NOT NULL
        \(considerate ? "" : plainGuardSQL)), budgets AS MATERIALIZED (
            SELECT b.key,
                   least(greatest(1, c.cap * \(burstSeconds)),
                         b.tokens + c.cap * greatest(0, extract(epoch FROM now() - b.refilled_at))) AS available
              FROM pushq.rate_budgets b
              JOIN (SELECT DISTINCT s.budget AS key, s.cap FROM settings s WHERE s.cap IS NOT NULL AND NOT s.paused
                    UNION ALL
                    SELECT $10::text, $11::float8 WHERE $10::text IS NOT NULL) c ON c.key = b.key
               FOR UPDATE OF b SKIP LOCKED
        ), queue AS MATERIALIZED (
            SELECT t.lane, t.rank, t.budget, t.quota, row_number() OVER (ORDER BY t.rank, t.turn, t.lane) AS ord,
                   t.quiet_start, t.quiet_end, t.quiet_zone, t.recipient_cap, t.recipient_window, t.over_cap
              FROM (SELECT s.lane, s.rank, s.quiet_start, s.quiet_end, s.quiet_zone, s.recipient_cap, s.recipient_window, s.over_cap,
                           CASE WHEN s.cap IS NOT NULL THEN s.budget END AS budget,
                           CASE WHEN s.cap IS NULL THEN $1::int
                                ELSE COALESCE(greatest(0, floor(b.available))::int, 0) END AS quota,
                           mod(row_number() OVER (PARTITION BY s.rank ORDER BY s.lane) + $9::int, count(*) OVER (PARTITION BY s.rank)) AS turn
                      FROM settings s
                      LEFT JOIN budgets b ON b.key = s.budget
                     WHERE NOT s.paused AND ($12::int IS NULL OR s.rank < $12::int)
                       \(considerate ? "" : "AND NOT EXISTS (SELECT 1 FROM considerate)")) t
             ORDER BY ord
        ), quiet_walk AS MATERIALIZED (
            -- Only lanes with quiet hours (none: nothing is read here). Each one's due entries in
            -- due order, each row read with its zone (one pushq.time_zones no longer lists is
            -- none) and its expiry, at most the lane's share of the claim and 4 × $1 more: those
            -- inside the window are moved out of the walk (`quieted`), so that a night's backlog
            -- costs one move per row, not a check at every claim. Nothing is locked here: only the
            -- entries moved (`quieted`) and the rows taken (`due`) are. (OFFSET 0: the row's
            -- sub-select stays a probe per entry, never a join that reads the lane's backlog whole.)
            -- A lane with tenants walks its tenants' parts first (tenantWalkSQL: the lane's share
            -- of the claim, read whole, as the parts are taken in turn), then its other due entries
            -- in due order up to the same bound (read as far as the bound needs).
            SELECT ql.lane, e.id, e.due_at, e.expires_at, COALESCE(e.zone, ql.quiet_zone, 'UTC') AS zone, ql.quiet_start, ql.quiet_end,
                   e.rank, e.turn, e.per, e.next
              FROM queue ql
             CROSS JOIN LATERAL (
                   \(considerate ? quietTenantsSQL : "")
                   (SELECT d.id, d.due_at, r.expires_at, r.zone, NULL::bigint AS rank, NULL::bigint AS turn, NULL::bigint AS per, NULL::text AS next
                     FROM pushq.due d
                    \(zonedRowSQL("d.id"))
                    WHERE d.lane = ql.lane AND d.due_at <= now()
                      \(considerate ? "AND d.id <> ALL (ARRAY(SELECT t.id FROM tw t))" : "")
                    ORDER BY d.due_at, d.id
                    LIMIT least(ql.quota, $1::int) + 4 * $1::int)
                   \(considerate ? ") x LIMIT least(ql.quota, $1::int) + 4 * $1::int" : "")) e
             WHERE ql.quiet_start IS NOT NULL
             LIMIT 5 * \(sizeMarker)
        ), quiet_rows AS MATERIALIZED (
            -- The window of each zone (and lane window) once: pushq.quiet_window, computed by the
            -- server (OFFSET 0 keeps the per-zone subquery from being pulled up into the join,
            -- which called the function for every walked row). Inside: the entry waits for its
            -- end, unless its row has expired (the claim ends it now).
            SELECT w.lane, w.id, w.due_at, w.expires_at, z.win, w.rank, w.turn, w.next,
                   z.win @> now() AND (w.expires_at IS NULL OR w.expires_at > now()) AS inside
              FROM quiet_walk w
              JOIN (SELECT u.zone, u.quiet_start, u.quiet_end, pushq.quiet_window(now(), u.zone, u.quiet_start, u.quiet_end) AS win
                      FROM (SELECT DISTINCT zone, quiet_start, quiet_end FROM quiet_walk) u
                    OFFSET 0) z
                ON z.zone = w.zone AND z.quiet_start = w.quiet_start AND z.quiet_end = w.quiet_end
        ), quieted AS (
            -- Entries inside their window move to its end, marked held, with their row's expiry
            -- (a lapsed lease's entry has none, and the expiry sweep walks due_expiry); their rows
            -- are not written (status, attempts and scheduled_at stay). The entry's own lock
            -- guards the move: each entry is locked SKIP LOCKED and checked again on its latest
            -- version (still due). An entry another claim is taking is locked by that claim's
            -- delete (skipped here, or, locked here first, deleted by it after this commits: the
            -- row goes, as that claim judged it outside); a producer's change to the row rewrites
            -- or deletes the entry under the entry's lock (skipped, or no longer due or of another
            -- lane and passed over, or deleted: not moved).
            UPDATE pushq.due d SET due_at = upper(m.win), held = 'quiet', expires_at = m.expires_at
              FROM (SELECT l.id, r.win, r.expires_at
                      FROM quiet_rows r
                      JOIN pushq.due l ON l.id = r.id
                     WHERE r.inside AND l.due_at <= now() AND l.lane = r.lane
                       FOR UPDATE OF l SKIP LOCKED) m
             WHERE d.id = m.id
            RETURNING d.id, d.lane
        ), due AS MATERIALIZED (
            -- The outer LIMIT, a constant at least $1 (sizeBound), tells the planner the claim's
            -- size, also in a generic plan. The inner one is a parameter, or a subquery when a
            -- credential is capped, and PostgreSQL guesses such a LIMIT at a tenth of the rows
            -- it limits: the rest of the claim was then planned as joins that read the whole
            -- table (docs/performance.md, "A capped credential read the whole table").
            SELECT * FROM (
            SELECT r.id, q.rank, q.budget, q.ord, r.scheduled_at, r.quiet, r.turned
              FROM queue q
             CROSS JOIN LATERAL (
                   \(considerate ? dueTenantsSQL : "SELECT * FROM (")
                   (SELECT d.id, d.due_at AS scheduled_at, NULL::tstzrange AS quiet, NULL::text AS turned
                     FROM pushq.due d
                    WHERE d.lane = q.lane
                      AND d.due_at <= now()
                      -- A lane without quiet hours walks here (a one-time filter per lane); one
                      -- with quiet hours takes the entries outside their window from quiet_rows.
                      AND q.quiet_start IS NULL
                      -- A lane with tenants: the entries its walk read are passed over (taken above,
                      -- or not to be taken now); an empty array for lanes without. (An array, read
                      -- once: NOT IN took seconds, NOT EXISTS became an anti join that read the lane.)
                      \(considerate ? "AND d.id <> ALL (ARRAY(SELECT t.id FROM tw t))" : "")
                      -- The row, locked SKIP LOCKED, must still wait and be due, or be a lapsed
                      -- lease (checked again on its latest version once locked: one another
                      -- worker took or rescheduled meanwhile is skipped). The row's lock guards its entry too: every trigger
                      -- that changes an entry runs under it. A sub-select with a lock is never
                      -- made a join, so the walk is always due_order's, entry after entry, and
                      -- stops at the quota: a join could be planned from pushq.notifications'
                      -- own index of waiting rows, reading a campaign's whole backlog each claim.
                      AND \(claimableLockedSQL("d.id"))
                    ORDER BY d.due_at, d.id
                    LIMIT q.quota)
                   UNION ALL
                   -- Its rows taken are locked here, as above, in due order until the quota (the
                   -- ordered subquery, fenced by OFFSET 0, is read row by row up to the LIMIT).
                   (SELECT w.id, w.due_at, w.win, \(considerate ? tenantTurnSQL(lane: "q.lane", next: "w.next") : "NULL::text")
                      FROM (SELECT w.id, w.due_at, w.win, w.next
                              FROM quiet_rows w
                             WHERE q.quiet_start IS NOT NULL AND w.lane = q.lane AND NOT w.inside
                             -- A lane with tenants: in turn (rank, tenant); without: rank is NULL.
                             ORDER BY w.rank, w.turn, w.due_at, w.id
                            OFFSET 0) w
                     WHERE \(claimableLockedSQL("w.id"))
                     LIMIT q.quota)) r0
             LIMIT q.quota) r
             LIMIT CASE WHEN $10::text IS NULL THEN $1::int
                        ELSE least($1::int, COALESCE((SELECT greatest(0, floor(b.available))::int FROM budgets b WHERE b.key = $10::text), 0)) END
            ) capped LIMIT \(sizeMarker)
        ), \(considerate ? "judged" : "picked") AS MATERIALIZED (
            SELECT n.id, c.rank, c.budget, c.ord, c.due_at, c.quiet, n.status = 'sending' AS lapsed,
                   -- A lease that ran out for the first time in a row: the attempt it counted is given
                   -- back (its worker may have died before sending); a second one in a row counts.
                   CASE WHEN n.status = 'sending' AND n.last_reason IS DISTINCT FROM 'LeaseExpired' THEN 1 ELSE 0 END AS refund,
                   CASE WHEN n.expires_at <= now() THEN 'expired'
                        -- The row's token invalid for its provider (invalidTokenSQL).
                        WHEN \(invalidTokenSQL) THEN 'failed'
                        WHEN n.attempts - CASE WHEN n.status = 'sending' AND n.last_reason IS DISTINCT FROM 'LeaseExpired' THEN 1 ELSE 0 END
                             >= n.max_attempts THEN 'exhausted'
                        -- Any provider's token: a throttle is kept as the provider matches the
                        -- token (TokenThrottle), and this computes the same key from the row.
                        -- Not a provider whose service never throttles a token (TokenKey.throttle).
                        WHEN n.provider IN (\(TokenKey.throttlingProvidersSQL)) AND EXISTS (
                                 SELECT 1 FROM pushq.token_throttles t
                                  WHERE \(throttleMatch)
                                    AND t.until > now()) THEN 'throttled'
                        ELSE 'sending' END AS verdict
              FROM (SELECT id, rank, budget, ord, scheduled_at AS due_at, quiet FROM due) c
              JOIN pushq.notifications n ON n.id = c.id
        \(considerate ? capStepsSQL : "")
        \(considerate ? capWritesSQL : "")
        ), taken AS (
            -- Every row taken from pushq.due leaves it, whatever its verdict: one that goes back
            -- to waiting (throttled) gets a new entry from notifications_due_waiting.
            -- (By primary key: an array, which the planner never answers by reading pushq.due
            -- whole, as it may a join with `due` when the table is small.)
            -- A deferred row keeps its entry (`cap_held`).
            DELETE FROM pushq.due d WHERE d.id = ANY (ARRAY(SELECT t.id FROM picked t WHERE t.verdict <> 'deferred'))
        ), leased AS (
            -- The lease as a row of its own: the upkeep finds the rows of a lease that ended
            -- here, not through an index of the rows' status. The same end as the rows' own.
            INSERT INTO pushq.leases (worker, lease_until, ids)
            SELECT $2, now() + $3 * interval '1 second', array_agg(p.id ORDER BY p.id)
              FROM picked p WHERE p.verdict = 'sending'
            HAVING count(*) > 0
        ), spent AS (
            UPDATE pushq.rate_budgets b
               SET tokens = b2.available - u.used, refilled_at = greatest(b.refilled_at, now())
              FROM budgets b2
              JOIN (SELECT p.budget AS key, count(*) AS used FROM picked p
                     WHERE p.verdict = 'sending' AND p.budget IS NOT NULL GROUP BY p.budget
                    UNION ALL
                    SELECT $10::text, count(*) FROM picked p WHERE $10::text IS NOT NULL AND p.verdict = 'sending') u
                ON u.key = b2.key
             WHERE b.key = b2.key AND u.used > 0
        ), claimed AS (
            UPDATE pushq.notifications n
               SET status       = CASE p.verdict WHEN 'sending' THEN 'sending' WHEN 'expired' THEN 'expired'
                                                 WHEN 'throttled' THEN 'retrying' WHEN 'capped' THEN 'cancelled' ELSE 'failed' END,
                   attempts     = n.attempts + CASE WHEN p.verdict = 'sending' THEN 1 ELSE 0 END - CASE WHEN p.verdict = 'exhausted' THEN 0 ELSE p.refund END,
                   locked_by    = CASE WHEN p.verdict = 'sending' THEN $2 END,
                   locked_until = CASE WHEN p.verdict = 'sending' THEN now() + $3 * interval '1 second' END,
                   last_reason  = CASE p.verdict WHEN 'failed' THEN 'TokenInvalidated'
                                                 WHEN 'exhausted' THEN CASE WHEN n.status = 'sending' THEN 'LeaseExpired'
                                                                            ELSE COALESCE(n.last_reason, 'AttemptsExhausted') END
                                                 WHEN 'sending' THEN CASE WHEN n.status = 'sending' THEN 'LeaseExpired' ELSE n.last_reason END
                                                 WHEN 'capped' THEN 'FrequencyCapped'
                                                 ELSE n.last_reason END,
                   scheduled_at = CASE WHEN p.verdict <> 'throttled' THEN n.scheduled_at
                                       ELSE (SELECT max(t.until) FROM pushq.token_throttles t WHERE \(throttleMatch)) END,
                   finished_at  = CASE WHEN p.verdict IN ('sending', 'throttled') THEN NULL ELSE now() END
              FROM picked p
             WHERE n.id = p.id AND p.verdict <> 'deferred'
            RETURNING n.id, p.verdict, n.device_token,
                      CASE WHEN p.verdict = 'sending' THEN n.payload END AS payload,
                      n.topic, n.push_type, n.priority,
                      CASE WHEN isfinite(n.expires_at) THEN floor(extract(epoch FROM n.expires_at))::bigint END AS expires_at,
                      n.collapse_id, n.apns_id, COALESCE(n.environment, $4) AS environment, COALESCE(n.credential, 'default') AS credential,
                      n.attempts, n.max_attempts, n.last_reason, n.provider,
                      (extract(epoch FROM n.locked_until) * 1000000)::bigint AS lease,
                      n.lane, p.rank, p.ord, p.due_at,
                      CASE WHEN n.channel IS NOT NULL THEN (SELECT c.apns_channel_id FROM pushq.channels c WHERE c.name = n.channel) END AS channel_id,
                      CASE WHEN n.channel IS NOT NULL THEN (SELECT c.message_storage_policy FROM pushq.channels c WHERE c.name = n.channel) END AS channel_storage_policy,
                      CASE WHEN p.verdict = 'sending' THEN n.webpush_keys::text END AS webpush_keys,
                      -- A quiet lane's row: when its window next opens and closes where its
                      -- recipient is (the worker gives it back unsent if it has not started by then).
                      CASE WHEN p.verdict = 'sending' THEN (extract(epoch FROM lower(p.quiet)) * 1000000)::bigint END AS quiet_opens,
                      CASE WHEN p.verdict = 'sending' THEN (extract(epoch FROM upper(p.quiet)) * 1000000)::bigint END AS quiet_closes,
                      -- Whose row it is: the worker's queue takes a lane's tenants in turn too.
                      n.tenant
        ), tallied AS (
            -- Rows the claim ends as failed (a token found invalid, attempts used up), tallied.
            \(PGConnection.tallySQL(from: """
                (SELECT 'failed' AS status, c.lane, c.last_reason AS reason FROM claimed c WHERE c.verdict IN ('failed', 'exhausted'))
                """, worker: PGConnection.claimTallyWorker("$2")))
        )
        -- In claim order: lane after lane, each in due order.
        (SELECT * FROM claimed ORDER BY 20, 21, 1)
        UNION ALL
        -- A cap held back due rows: one row that says so (the worker claims again soon).
        SELECT 0, 'budget', \(nullColumns)
         WHERE EXISTS (
                   SELECT 1 FROM queue q
                    WHERE q.budget IS NOT NULL
                      AND (SELECT count(*) FROM due WHERE due.budget = q.budget) >= q.quota
                      AND EXISTS (\(dueBeyondSQL(lane: "q.lane"))))
            OR ($10::text IS NOT NULL
                AND (SELECT count(*) FROM due) < $1
                AND (SELECT count(*) FROM due) >= COALESCE((SELECT floor(b.available) FROM budgets b WHERE b.key = $10::text), 0)
                AND EXISTS (SELECT 1 FROM queue q WHERE EXISTS (\(dueBeyondSQL(lane: "q.lane")))))
        UNION ALL
        -- Claim again at once rather than at the poll (ClaimBatch.claimAgain): a quiet lane's walk
        -- moved entries and read as many as it may (more may be due behind them, other zones' rows
        -- among them), or (the considerate claim) rows over their recipient's cap were deferred
        -- while other rows are due behind them.
        SELECT 0, 'again', \(nullColumns)
         WHERE (EXISTS (SELECT 1 FROM quieted)
                AND ((SELECT count(*) FROM quiet_walk) >= 5 * \(sizeMarker)
                     OR EXISTS (SELECT 1 FROM queue q
                                 WHERE q.quiet_start IS NOT NULL
                                   AND (SELECT count(*) FROM quiet_walk w WHERE w.lane = q.lane) >= least(q.quota, $1::int) + 4 * $1::int)
                     -- A lane with tenants: a tenant's part of the walk was read whole.
                     OR EXISTS (SELECT 1 FROM quiet_walk w WHERE w.rank >= w.per)))
            \(considerate ? capAgainSQL : "")
        \(considerate ? "" : "UNION ALL SELECT 0, 'considerate', \(nullColumns) WHERE EXISTS (SELECT 1 FROM considerate)")
        """
    }
}
