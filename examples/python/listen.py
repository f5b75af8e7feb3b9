#!/usr/bin/env python3
"""Enqueue once, hear the outcome: a dedupe key and a completion signal, with psycopg 3.

    python3 -m pip install psycopg
    PUSHQ_DATABASE_URL=postgresql://pushq@db.internal/pushq python3 examples/python/listen.py DEVICE_TOKEN

Listens on a channel, enqueues one APNs notification with a dedupe_key and that notify_channel,
retries the INSERT the way a job runner would (the key makes it a no-op), then waits for the
row's signal instead of polling. Prints the signal and the final status; exits 0 only if it
was sent.
The contract: docs/producers.md.
"""
import json
import os
import sys
import time

import psycopg
from psycopg.types.json import Json, Jsonb

CHANNEL = "order_events"
FINAL = ("sent", "failed", "expired", "cancelled")


def enqueue(conn, token, key):
    """The new row's id, or None when a row with this key exists already."""
    row = conn.execute(
        """INSERT INTO pushq.notifications (device_token, payload, expires_at, metadata, dedupe_key, notify_channel)
           VALUES (%s, %s, now() + interval '1 hour', %s, %s, %s)
           ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
           RETURNING id""",
        (token,
         Json({"aps": {"alert": {"title": "Order 1042", "body": "Your order has shipped"}, "sound": "default"}}),
         Jsonb({"order": 1042, "example": "python-listen"}), key, CHANNEL),
    ).fetchone()
    return row[0] if row else None


def listen(url):
    """A connection of its own that listens on CHANNEL."""
    conn = psycopg.connect(url, autocommit=True)
    conn.execute(f"LISTEN {CHANNEL}")
    return conn


def outcome(url, listener, notification_id, timeout):
    """The row's final outcome from its signal. NOTIFY is not durable: after a reconnection,
    signals sent while no one listened are lost, so the row itself is read again (LISTEN
    first, then read: nothing falls between)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            for notify in listener.notifies(timeout=max(0.1, deadline - time.monotonic())):
                signal = json.loads(notify.payload)
                if signal["id"] == notification_id:
                    print(f"signal on {notify.channel}: {notify.payload}", flush=True)
                    return signal
        except psycopg.OperationalError as error:
            print(f"listener lost its connection ({error}); reconnecting", file=sys.stderr)
            time.sleep(1)
            try:
                listener = listen(url)
                row = listener.execute(
                    """SELECT json_build_object('id', id, 'status', status, 'last_status', last_status, 'last_reason', last_reason)
                         FROM pushq.notifications WHERE id = %s AND status = ANY(%s)""",
                    (notification_id, list(FINAL))).fetchone()
                if row:
                    return row[0]
            except psycopg.OperationalError:
                pass  # tried again on the next turn
    return None


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: listen.py DEVICE_TOKEN", file=sys.stderr)
        return 2
    token = sys.argv[1]
    url = os.environ["PUSHQ_DATABASE_URL"]
    key = f"order-1042-shipped:{token[:16]}"

    listener = listen(url)  # before the INSERT: its signal cannot come before anyone listens
    with psycopg.connect(url, autocommit=True) as conn:
        notification_id = enqueue(conn, token, key)
        print(f"notification {notification_id}: enqueued with key {key}", flush=True)
        if enqueue(conn, token, key) is None:
            print("retried INSERT: nothing enqueued, the key exists", flush=True)

    signal = outcome(url, listener, notification_id, timeout=60)
    if signal is None:
        print(f"notification {notification_id}: no outcome within 60 s")
        return 1
    print(f"notification {notification_id}: {signal['status']} (HTTP {signal['last_status']}) {signal['last_reason'] or ''}".rstrip())
    return 0 if signal["status"] == "sent" else 1


if __name__ == "__main__":
    sys.exit(main())
