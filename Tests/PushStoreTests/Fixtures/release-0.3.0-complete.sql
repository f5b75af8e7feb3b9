-- The write-back of pushq 0.3.0 (schema 11, commit b175a92), fenced by worker, attempt and lease,
-- as its worker sent it for a batch of answers: it knows nothing of pushq.outcomes. Parameters:
-- $1 ids, $2 attempts, $3 statuses, $4 HTTP statuses, $5 reasons, $6 apns-unique-ids, $7 retry
-- delays, $8 refunds, $9 worker id, $10 FCM message names, $11 leases (µs).
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
