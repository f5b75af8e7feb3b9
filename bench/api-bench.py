#!/usr/bin/env python3
"""scripts/bench's `api` part: the same notifications enqueued through `pushq serve`'s
POST /api/v1/notifications, BATCH rows per request, and through plain INSERTs of BATCH rows per
statement (psycopg, `INSERT ... SELECT FROM unnest(...)`), one client each, one after the other.

    api-bench.py api URL KEY ROWS BATCH     # prints rows/s through the API
    api-bench.py sql DATABASE_URL ROWS BATCH  # prints rows/s through plain INSERTs

Every row: a 64-hex-digit device token, a ~100-byte alert payload and a dedupe_key; the bodies
and the arrays are built before the clock starts, so each figure is the server side's cost (HTTP,
JSON, the insert) and not Python's.
"""
import http.client
import json
import sys
import time
import urllib.parse


def rows(n):
    for i in range(n):
        yield ("%064x" % (i + 1), '{"aps":{"alert":{"title":"Order %d","body":"Your order has shipped"},"sound":"default"}}' % i,
               "bench-%d" % i)


def api(url, key, n, batch):
    parsed = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=120)
    all_rows = list(rows(n))
    bodies = []
    for start in range(0, n, batch):
        chunk = all_rows[start:start + batch]
        bodies.append(("[" + ",".join('{"device_token":"%s","payload":%s,"dedupe_key":"%s"}' % r for r in chunk) + "]").encode())
    headers = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
    begin = time.monotonic()
    for body in bodies:
        conn.request("POST", "/api/v1/notifications", body=body, headers=headers)
        answer = conn.getresponse()
        text = answer.read()
        if answer.status != 201:
            sys.exit("api-bench: POST answered %d: %s" % (answer.status, text[:300]))
    return n / (time.monotonic() - begin)


def sql(database_url, n, batch):
    import psycopg
    all_rows = list(rows(n))
    chunks = []
    for start in range(0, n, batch):
        chunk = all_rows[start:start + batch]
        chunks.append(([r[0] for r in chunk], [r[1] for r in chunk], [r[2] for r in chunk]))
    with psycopg.connect(database_url, autocommit=True) as conn:
        statement = ("INSERT INTO pushq.notifications (device_token, payload, dedupe_key) "
                     "SELECT * FROM unnest(%s::text[], %s::json[], %s::text[])")
        begin = time.monotonic()
        for tokens, payloads, keys in chunks:
            conn.execute(statement, (tokens, payloads, keys))
        return n / (time.monotonic() - begin)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "api":
        print(round(api(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))))
    else:
        print(round(sql(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))
