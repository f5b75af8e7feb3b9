-- The claim of the pushq release at schema 32 (the last before pushq.due), as its worker sent it for
-- 200 rows, no filter: what MigrationPopulatedTests and DueTableTests run as a worker of the
-- previous release. Parameters: $1 limit, $2 worker id, $3 lease seconds, $4 default environment,
-- $5–$8 routing (APNs names, APNs default, FCM names, FCM default), $9 rotation, $10–$11 credential
-- budget, $12 a rank to stay below. Columns: 0 id, 1 verdict, 12 attempts, 16 lease (µs).
WITH RECURSIVE waiting(lane) AS (
    (SELECT n.lane FROM pushq.notifications n
      WHERE n.status IN ('queued', 'retrying') ORDER BY n.lane LIMIT 1)
    UNION ALL
    SELECT (SELECT n.lane FROM pushq.notifications n
             WHERE n.status IN ('queued', 'retrying') AND n.lane > w.lane ORDER BY n.lane LIMIT 1)
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
           SELECT n.id, n.scheduled_at
             FROM pushq.notifications n
            WHERE n.lane = q.lane
              AND n.status IN ('queued', 'retrying')
              AND n.scheduled_at <= now()
              AND ((n.provider = 'apns' AND (n.credential = ANY($5::text[]) OR (n.credential IS NULL AND $6)))
            OR (n.provider = 'fcm' AND (n.credential = ANY($7::text[]) OR (n.credential IS NULL AND $8))))
              AND (n.provider <> 'apns' OR n.push_type IN ('alert', 'background', 'location', 'voip', 'complication', 'fileprovider', 'mdm', 'liveactivity', 'pushtotalk', 'widgets', 'controls'))
              AND (n.channel IS NULL OR pushq.channel_active(n.channel))
              /*FILTER*/
            ORDER BY n.scheduled_at, n.id
            LIMIT q.quota
              FOR UPDATE SKIP LOCKED) r
     LIMIT CASE WHEN $10::text IS NULL THEN $1::int
                ELSE least($1::int, COALESCE((SELECT greatest(0, floor(b.available))::int FROM budgets b WHERE b.key = $10::text), 0)) END
    ) capped LIMIT 256
), lapsed AS MATERIALIZED (
    SELECT n.id, n.locked_until,
           COALESCE((SELECT l.rank FROM pushq.lanes l WHERE l.name = n.lane),
                    (SELECT l.rank FROM pushq.lanes l WHERE l.name = 'default'), 100) AS rank
      FROM pushq.notifications n
     WHERE n.status = 'sending'
       AND n.locked_until < now()
       AND $12::int IS NULL
       AND ((n.provider = 'apns' AND (n.credential = ANY($5::text[]) OR (n.credential IS NULL AND $6)))
            OR (n.provider = 'fcm' AND (n.credential = ANY($7::text[]) OR (n.credential IS NULL AND $8))))
       AND (n.provider <> 'apns' OR n.push_type IN ('alert', 'background', 'location', 'voip', 'complication', 'fileprovider', 'mdm', 'liveactivity', 'pushtotalk', 'widgets', 'controls'))
       /*FILTER*/
       AND NOT COALESCE((SELECT l.paused FROM pushq.lanes l WHERE l.name = n.lane),
         (SELECT l.paused FROM pushq.lanes l WHERE l.name = 'default'), false)
     ORDER BY n.locked_until
     LIMIT $1
       FOR UPDATE OF n SKIP LOCKED
), picked AS MATERIALIZED (
    SELECT n.id, c.rank, c.budget, c.ord, c.due_at,
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
      FROM (SELECT id, rank, budget, ord, scheduled_at AS due_at FROM due
            UNION ALL
            SELECT id, rank, NULL, 0, locked_until FROM lapsed) c
      JOIN pushq.notifications n ON n.id = c.id
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
              CASE WHEN p.verdict = 'sending' THEN n.payload END,
              n.topic, n.push_type, n.priority,
              CASE WHEN isfinite(n.expires_at) THEN floor(extract(epoch FROM n.expires_at))::bigint END,
              n.collapse_id, n.apns_id, COALESCE(n.environment, $4), COALESCE(n.credential, 'default'),
              n.attempts, n.max_attempts, n.last_reason, n.provider,
              (extract(epoch FROM n.locked_until) * 1000000)::bigint,
              n.lane, p.rank, p.ord, p.due_at,
              CASE WHEN n.channel IS NOT NULL THEN (SELECT c.apns_channel_id FROM pushq.channels c WHERE c.name = n.channel) END,
              CASE WHEN n.channel IS NOT NULL THEN (SELECT c.message_storage_policy FROM pushq.channels c WHERE c.name = n.channel) END
)
-- In claim order: lapsed leases, then lane after lane, each in due order.
(SELECT * FROM claimed ORDER BY 20, 21, 1)
UNION ALL
-- A cap held back due rows: one row that says so (the worker claims again soon).
SELECT 0, 'budget', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
 WHERE EXISTS (
           SELECT 1 FROM queue q
            WHERE q.budget IS NOT NULL
              AND (SELECT count(*) FROM due WHERE due.budget = q.budget) >= q.quota
              AND EXISTS (SELECT 1 FROM pushq.notifications n
                           WHERE n.lane = q.lane
                             AND n.status IN ('queued', 'retrying')
                             AND n.scheduled_at <= now()
                             AND ((n.provider = 'apns' AND (n.credential = ANY($5::text[]) OR (n.credential IS NULL AND $6)))
            OR (n.provider = 'fcm' AND (n.credential = ANY($7::text[]) OR (n.credential IS NULL AND $8))))
                             AND (n.provider <> 'apns' OR n.push_type IN ('alert', 'background', 'location', 'voip', 'complication', 'fileprovider', 'mdm', 'liveactivity', 'pushtotalk', 'widgets', 'controls'))
                             AND (n.channel IS NULL OR pushq.channel_active(n.channel))
                             /*FILTER*/
                             AND n.id NOT IN (SELECT id FROM due)))
    OR ($10::text IS NOT NULL
        AND (SELECT count(*) FROM due) < $1
        AND (SELECT count(*) FROM due) >= COALESCE((SELECT floor(b.available) FROM budgets b WHERE b.key = $10::text), 0)
        AND EXISTS (SELECT 1 FROM pushq.notifications n
                     WHERE n.status IN ('queued', 'retrying')
                       AND n.scheduled_at <= now()
                       AND ((n.provider = 'apns' AND (n.credential = ANY($5::text[]) OR (n.credential IS NULL AND $6)))
            OR (n.provider = 'fcm' AND (n.credential = ANY($7::text[]) OR (n.credential IS NULL AND $8))))
                       AND (n.provider <> 'apns' OR n.push_type IN ('alert', 'background', 'location', 'voip', 'complication', 'fileprovider', 'mdm', 'liveactivity', 'pushtotalk', 'widgets', 'controls'))
                       AND (n.channel IS NULL OR pushq.channel_active(n.channel))
                       /*FILTER*/
                       AND n.id NOT IN (SELECT id FROM due)
                     -- In due order, fenced by OFFSET 0 (which keeps PostgreSQL from
                     -- dropping the ORDER BY of an EXISTS): a walk of notifications_due
                     -- that stops at the first row, never a scan of the table.
                     ORDER BY n.scheduled_at, n.id OFFSET 0 LIMIT 1))