-- A producer in SQL: enqueue one APNs notification with psql.
--
--   psql "$PUSHQ_DATABASE_URL" -X -v ON_ERROR_STOP=1 -v token=5f1a…64-hex-digits… -f examples/sql/enqueue.sql
--
-- Prints the new row's id. A running `pushq worker` sends it; its outcome is in the same row
-- (status, last_status, last_reason). The contract: docs/producers.md.

INSERT INTO pushq.notifications (device_token, payload, expires_at, metadata)
VALUES (:'token',
        '{"aps":{"alert":{"title":"Order 1042","body":"Your order has shipped"},"sound":"default"}}',
        now() + interval '1 hour',
        '{"order": 1042, "example": "sql"}')
RETURNING id;
