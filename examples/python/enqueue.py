#!/usr/bin/env python3
"""A producer in Python: enqueue one APNs notification with psycopg 3, then wait for its outcome.

    python3 -m pip install psycopg
    PUSHQ_DATABASE_URL=postgresql://pushq@db.internal/pushq python3 examples/python/enqueue.py DEVICE_TOKEN

Prints the row's id, then its final status; exits 0 only if it was sent. A producer usually
does not wait: the outcome stays in the row (status, last_status, last_reason).
The contract: docs/producers.md.
"""
import os
import sys
import time

import psycopg
from psycopg.types.json import Json, Jsonb

FINAL = {"sent", "failed", "expired", "cancelled"}


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: enqueue.py DEVICE_TOKEN", file=sys.stderr)
        return 2
    token = sys.argv[1]
    payload = {"aps": {"alert": {"title": "Order 1042", "body": "Your order has shipped"}, "sound": "default"}}

    with psycopg.connect(os.environ["PUSHQ_DATABASE_URL"], autocommit=True) as conn:
        # One transaction: in an application, the change that caused the notification (the
        # order's new state) would be written in it too, so both commit or neither does.
        with conn.transaction():
            (notification_id,) = conn.execute(
                """INSERT INTO pushq.notifications (device_token, payload, expires_at, metadata)
                   VALUES (%s, %s, now() + interval '1 hour', %s)
                   RETURNING id""",
                (token, Json(payload), Jsonb({"order": 1042, "example": "python"})),
            ).fetchone()
        print(f"notification {notification_id}: enqueued", flush=True)

        deadline = time.monotonic() + 60
        while True:
            status, http_status, reason = conn.execute(
                "SELECT status, last_status, last_reason FROM pushq.notifications WHERE id = %s",
                (notification_id,),
            ).fetchone()
            if status in FINAL or time.monotonic() > deadline:
                break
            time.sleep(0.2)

    print(f"notification {notification_id}: {status} (HTTP {http_status}) {reason or ''}".rstrip())
    return 0 if status == "sent" else 1


if __name__ == "__main__":
    sys.exit(main())
