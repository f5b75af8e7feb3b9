-- The claim of pushq 0.3.0 (schema 11, commit b175a92), as its worker sent it with no filter
-- (`/*FILTER*/` is where a probe's or a held endpoint's condition went): what the upgrade tests run
-- as a 0.3.0 worker. It walks notifications_due and notifications_lease and knows nothing of
-- lanes, pushq.due or pushq.leases. Parameters: $1 limit, $2 worker id, $3 lease seconds, $4
-- default environment, $5-$8 routing (APNs names, APNs default, FCM names, FCM default).
-- Columns: 0 id, 1 verdict, 12 attempts, 16 lease (µs).
WITH due AS MATERIALIZED (
    SELECT n.id
      FROM pushq.notifications n
     WHERE n.status IN ('queued', 'retrying')
       AND n.scheduled_at <= now()
       AND ((n.provider = 'apns' AND (n.credential = ANY($5::text[]) OR (n.credential IS NULL AND $6)))
            OR (n.provider = 'fcm' AND (n.credential = ANY($7::text[]) OR (n.credential IS NULL AND $8))))
       AND (n.provider <> 'apns' OR n.push_type IN ('alert', 'background', 'location', 'voip', 'complication', 'fileprovider', 'mdm', 'liveactivity', 'pushtotalk', 'widgets', 'controls'))
       /*FILTER*/
     ORDER BY n.scheduled_at, n.id
     LIMIT $1
       FOR UPDATE SKIP LOCKED
), lapsed AS MATERIALIZED (
    SELECT n.id
      FROM pushq.notifications n
     WHERE n.status = 'sending'
       AND n.locked_until < now()
       AND ((n.provider = 'apns' AND (n.credential = ANY($5::text[]) OR (n.credential IS NULL AND $6)))
            OR (n.provider = 'fcm' AND (n.credential = ANY($7::text[]) OR (n.credential IS NULL AND $8))))
       AND (n.provider <> 'apns' OR n.push_type IN ('alert', 'background', 'location', 'voip', 'complication', 'fileprovider', 'mdm', 'liveactivity', 'pushtotalk', 'widgets', 'controls'))
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
