-- The claim of a pushq worker before Web Push (commit b8f3e74, 0.4.0's statement), as it is sent for the default
-- APNs and FCM credentials with no hold, probe or filter: what the Web Push tests run as a 0.4.0 worker
-- beside migration 105. Its routing names only 'apns' and 'fcm'. Parameters: $1 limit, $2 worker id,
-- $3 lease seconds, $4 default environment, $5-$8 routing (APNs names, APNs default, FCM names, FCM
-- default), $9 rotation, $10 credential budget key, $11 its cap, $12 a rank to stay below.
WITH RECURSIVE waiting(lane) AS (
    (SELECT d.lane FROM pushq.due d ORDER BY d.lane LIMIT 1)
    UNION ALL
    SELECT (SELECT d.lane FROM pushq.due d WHERE d.lane > w.lane ORDER BY d.lane LIMIT 1)
      FROM waiting w
     WHERE w.lane IS NOT NULL
), settings AS MATERIALIZED (
    SELECT w.lane,
           COALESCE(l.rank, d.rank, 100) AS rank,
           COALESCE(l.paused, d.paused, false) AS paused,
           CASE WHEN l.name IS NOT NULL THEN l.max_per_second ELSE d.max_per_second END AS cap,
           'lane:' || COALESCE(l.name, 'default') AS budget
      FROM waiting w
      LEFT JOIN pushq.lanes l ON l.name = w.lane
      LEFT JOIN pushq.lanes d ON d.name = 'default'
     WHERE w.lane IS NOT NULL
), budgets AS MATERIALIZED (
    SELECT b.key,
           least(greatest(1, c.cap * 0.25),
                 b.tokens + c.cap * greatest(0, extract(epoch FROM now() - b.refilled_at))) AS available
      FROM pushq.rate_budgets b
      JOIN (SELECT DISTINCT s.budget AS key, s.cap FROM settings s WHERE s.cap IS NOT NULL AND NOT s.paused
            UNION ALL
            SELECT $10::text, $11::float8 WHERE $10::text IS NOT NULL) c ON c.key = b.key
       FOR UPDATE OF b SKIP LOCKED
), queue AS MATERIALIZED (
    SELECT t.lane, t.rank, t.budget, t.quota, row_number() OVER (ORDER BY t.rank, t.turn, t.lane) AS ord
      FROM (SELECT s.lane, s.rank,
                   CASE WHEN s.cap IS NOT NULL THEN s.budget END AS budget,
                   CASE WHEN s.cap IS NULL THEN $1::int
                        ELSE COALESCE(greatest(0, floor(b.available))::int, 0) END AS quota,
                   mod(row_number() OVER (PARTITION BY s.rank ORDER BY s.lane) + $9::int, count(*) OVER (PARTITION BY s.rank)) AS turn
              FROM settings s
              LEFT JOIN budgets b ON b.key = s.budget
             WHERE NOT s.paused AND ($12::int IS NULL OR s.rank < $12::int)) t
     ORDER BY ord
), due AS MATERIALIZED (
    -- The outer LIMIT, a constant at least $1 (sizeBound), tells the planner the claim's
    -- size, also in a generic plan. The inner one is a parameter, or a subquery when a
    -- credential is capped, and PostgreSQL guesses such a LIMIT at a tenth of the rows
    -- it limits: the rest of the claim was then planned as joins that read the whole
    -- table (docs/performance.md, "A capped credential read the whole table").
    SELECT * FROM (
    SELECT r.id, q.rank, q.budget, q.ord, r.scheduled_at
      FROM queue q
     CROSS JOIN LATERAL (
           SELECT d.id, d.due_at AS scheduled_at
             FROM pushq.due d
            WHERE d.lane = q.lane
              AND d.due_at <= now()
              -- The row, locked SKIP LOCKED, must still wait and be due, or be a lapsed
              -- lease (checked again on its latest version once locked: one another
              -- worker took or rescheduled meanwhile is skipped). The row's lock guards its entry too: every trigger
              -- that changes an entry runs under it. A sub-select with a lock is never
              -- made a join, so the walk is always due_order's, entry after entry, and
              -- stops at the quota: a join could be planned from pushq.notifications'
              -- own index of waiting rows, reading a campaign's whole backlog each claim.
              AND EXISTS (
                  SELECT 1 FROM pushq.notifications n
                   WHERE n.id = d.id
                     AND ((n.status IN ('queued', 'retrying') AND n.scheduled_at <= now() AND (n.channel IS NULL OR pushq.channel_active(n.channel)))
     OR (n.status = 'sending' AND n.locked_until < now()))
AND ((n.provider = 'apns' AND (n.credential = ANY($5::text[]) OR (n.credential IS NULL AND $6)))
            OR (n.provider = 'fcm' AND (n.credential = ANY($7::text[]) OR (n.credential IS NULL AND $8))))
AND (n.provider <> 'apns' OR n.push_type IN ('alert', 'background', 'location', 'voip', 'complication', 'fileprovider', 'mdm', 'liveactivity', 'pushtotalk', 'widgets', 'controls'))
AND (NOT EXISTS (SELECT 1 FROM pushq.credential_pauses)
     OR (COALESCE(n.credential, 'default'), CASE WHEN n.provider = 'fcm' THEN 'fcm' ELSE COALESCE(n.environment, $4) END)
        NOT IN (SELECT p.credential, p.environment FROM pushq.credential_pauses p))
                     FOR UPDATE OF n SKIP LOCKED)
            ORDER BY d.due_at, d.id
            LIMIT q.quota) r
     LIMIT CASE WHEN $10::text IS NULL THEN $1::int
                ELSE least($1::int, COALESCE((SELECT greatest(0, floor(b.available))::int FROM budgets b WHERE b.key = $10::text), 0)) END
    ) capped LIMIT 256
), picked AS MATERIALIZED (
    SELECT n.id, c.rank, c.budget, c.ord, c.due_at,
           -- A lease that ran out for the first time in a row: the attempt it counted is given
           -- back (its worker may have died before sending); a second one in a row counts.
           CASE WHEN n.status = 'sending' AND n.last_reason IS DISTINCT FROM 'LeaseExpired' THEN 1 ELSE 0 END AS refund,
           CASE WHEN n.expires_at <= now() THEN 'expired'
                -- An FCM device's environment is always 'production'
                -- (devices_fcm_environment_default): saying so lets the probe descend
                -- devices_invalidated on all three of its columns. Without it PostgreSQL 18
                -- costed the probe on the first and last column above the unique index of
                -- every registered device, and probed that one.
                WHEN n.provider = 'fcm' AND EXISTS (
                         SELECT 1 FROM pushq.devices d
                          WHERE d.device_token = n.device_token
                            AND d.environment = 'production'
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
      FROM (SELECT id, rank, budget, ord, scheduled_at AS due_at FROM due) c
      JOIN pushq.notifications n ON n.id = c.id
), taken AS (
    -- Every row taken from pushq.due leaves it, whatever its verdict: one that goes back
    -- to waiting (throttled) gets a new entry from notifications_due_waiting.
    -- (By primary key: an array, which the planner never answers by reading pushq.due
    -- whole, as it may a join with `due` when the table is small.)
    DELETE FROM pushq.due d WHERE d.id = ANY (ARRAY(SELECT t.id FROM due t))
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
              CASE WHEN p.verdict = 'sending' THEN n.payload END AS payload,
              n.topic, n.push_type, n.priority,
              CASE WHEN isfinite(n.expires_at) THEN floor(extract(epoch FROM n.expires_at))::bigint END AS expires_at,
              n.collapse_id, n.apns_id, COALESCE(n.environment, $4) AS environment, COALESCE(n.credential, 'default') AS credential,
              n.attempts, n.max_attempts, n.last_reason, n.provider,
              (extract(epoch FROM n.locked_until) * 1000000)::bigint AS lease,
              n.lane, p.rank, p.ord, p.due_at,
              CASE WHEN n.channel IS NOT NULL THEN (SELECT c.apns_channel_id FROM pushq.channels c WHERE c.name = n.channel) END AS channel_id,
              CASE WHEN n.channel IS NOT NULL THEN (SELECT c.message_storage_policy FROM pushq.channels c WHERE c.name = n.channel) END AS channel_storage_policy
), tallied AS (
    -- Rows the claim ends as failed (a token found invalid, attempts used up), tallied.
    INSERT INTO pushq.outcomes AS o (status, minute, lane, worker, reason, rows)
SELECT t.status, date_trunc('minute', now()), t.lane, $2 || '/claim',
       CASE WHEN t.status = 'failed' THEN COALESCE(t.reason, '') ELSE '' END, count(*)
  FROM (SELECT 'failed' AS status, c.lane, c.last_reason AS reason FROM claimed c WHERE c.verdict IN ('failed', 'exhausted')) t
 WHERE t.status IN ('sent', 'failed')
 GROUP BY 1, 3, 5
ON CONFLICT (status, minute, lane, worker, reason) DO UPDATE SET rows = o.rows + EXCLUDED.rows
)
-- In claim order: lane after lane, each in due order.
(SELECT * FROM claimed ORDER BY 20, 21, 1)
UNION ALL
-- A cap held back due rows: one row that says so (the worker claims again soon).
SELECT 0, 'budget', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
 WHERE EXISTS (
           SELECT 1 FROM queue q
            WHERE q.budget IS NOT NULL
              AND (SELECT count(*) FROM due WHERE due.budget = q.budget) >= q.quota
              AND EXISTS (SELECT 1 FROM pushq.due d
 WHERE d.lane = q.lane AND d.due_at <= now()
   AND d.id NOT IN (SELECT id FROM due)
   AND EXISTS (SELECT 1 FROM pushq.notifications n WHERE n.id = d.id AND ((n.status IN ('queued', 'retrying') AND n.scheduled_at <= now() AND (n.channel IS NULL OR pushq.channel_active(n.channel)))
     OR (n.status = 'sending' AND n.locked_until < now()))
AND ((n.provider = 'apns' AND (n.credential = ANY($5::text[]) OR (n.credential IS NULL AND $6)))
            OR (n.provider = 'fcm' AND (n.credential = ANY($7::text[]) OR (n.credential IS NULL AND $8))))
AND (n.provider <> 'apns' OR n.push_type IN ('alert', 'background', 'location', 'voip', 'complication', 'fileprovider', 'mdm', 'liveactivity', 'pushtotalk', 'widgets', 'controls'))
AND (NOT EXISTS (SELECT 1 FROM pushq.credential_pauses)
     OR (COALESCE(n.credential, 'default'), CASE WHEN n.provider = 'fcm' THEN 'fcm' ELSE COALESCE(n.environment, $4) END)
        NOT IN (SELECT p.credential, p.environment FROM pushq.credential_pauses p)))
 ORDER BY d.due_at, d.id OFFSET 0 LIMIT 1))
    OR ($10::text IS NOT NULL
        AND (SELECT count(*) FROM due) < $1
        AND (SELECT count(*) FROM due) >= COALESCE((SELECT floor(b.available) FROM budgets b WHERE b.key = $10::text), 0)
        AND EXISTS (SELECT 1 FROM queue q WHERE EXISTS (SELECT 1 FROM pushq.due d
 WHERE d.lane = q.lane AND d.due_at <= now()
   AND d.id NOT IN (SELECT id FROM due)
   AND EXISTS (SELECT 1 FROM pushq.notifications n WHERE n.id = d.id AND ((n.status IN ('queued', 'retrying') AND n.scheduled_at <= now() AND (n.channel IS NULL OR pushq.channel_active(n.channel)))
     OR (n.status = 'sending' AND n.locked_until < now()))
AND ((n.provider = 'apns' AND (n.credential = ANY($5::text[]) OR (n.credential IS NULL AND $6)))
            OR (n.provider = 'fcm' AND (n.credential = ANY($7::text[]) OR (n.credential IS NULL AND $8))))
AND (n.provider <> 'apns' OR n.push_type IN ('alert', 'background', 'location', 'voip', 'complication', 'fileprovider', 'mdm', 'liveactivity', 'pushtotalk', 'widgets', 'controls'))
AND (NOT EXISTS (SELECT 1 FROM pushq.credential_pauses)
     OR (COALESCE(n.credential, 'default'), CASE WHEN n.provider = 'fcm' THEN 'fcm' ELSE COALESCE(n.environment, $4) END)
        NOT IN (SELECT p.credential, p.environment FROM pushq.credential_pauses p)))
 ORDER BY d.due_at, d.id OFFSET 0 LIMIT 1)))
