#!/usr/bin/env python3
"""The checks and figures of scripts/bench's parts `quiet`, `caps` and `tenants` (issue 48).

Each reads the mock's records (GET /_mock/requests, the mock run with --record) and the rows as
the database ended them (a tab-separated \\copy), exits 1 naming the first broken rule (a row
lost, a row sent twice, a row sent that the rule holds back), and prints its figures on one line.

  quiet REQUESTS ROWS OPENS
      ROWS: apns_id, status, attempts. Every row sent, attempts 1 (waiting took none), one
      request each; with OPENS (epoch seconds, "-" for the plain lane), no request before it.
      Prints "rate first_ms": rows / seconds from the first request to the last, and how long
      after OPENS the first request came (0 for the plain lane).
  caps REQUESTS ROWS CAP
      ROWS: apns_id, status, attempts, last_reason, user_ref. A sent row was requested once, a
      row `cancelled` with last_reason FrequencyCapped and attempts 0 never; no other ending. With
      CAP > 0 (every row in one window, over_cap skip): each recipient got min(CAP, its rows)
      requests, never more than CAP; with CAP 0 (the uncapped lane) every row was sent.
      Prints "sent capped".
  tenants REQUESTS ROWS TRICKLE REMAIN
      ROWS: apns_id, status, tenant. Every row sent, one request each. TRICKLE: queue-bench
      latency's "APNS_ID WALL_NS" lines (tenant B's INSERTs). The latency INSERT -> request of
      B's rows inserted while at least REMAIN of the other tenant's rows had not reached the
      mock yet. Prints "p50_ms p99_ms n" ("nan nan 0" without a trickle).
"""
import collections
import json
import sys


def fail(message):
    print("bench: " + message, file=sys.stderr)
    sys.exit(1)


def load_requests(path):
    reqs = json.load(open(path))
    return reqs.get("requests", reqs) if isinstance(reqs, dict) else reqs


def load_rows(path):
    return [line.rstrip("\n").split("\t") for line in open(path) if line.strip()]


def once_each(reqs, ids, what):
    """Requests per apns-id; fails on a request for a row not in ids, or a second one for a row."""
    count = collections.Counter(r["apnsID"] for r in reqs)
    unknown = [k for k in count if k not in ids]
    if unknown:
        fail("%s: %d request(s) for rows the database does not have as sent, e.g. %s" % (what, len(unknown), unknown[0]))
    twice = [k for k, n in count.items() if n > 1]
    if twice:
        fail("%s: %d row(s) sent more than once, e.g. %s (%d requests)" % (what, len(twice), twice[0], count[twice[0]]))
    return count


def quiet(requests, rows_path, opens):
    reqs, rows = load_requests(requests), load_rows(rows_path)
    notsent = [r for r in rows if r[1] != "sent"]
    if notsent:
        fail("quiet: %d of %d rows not sent (e.g. %s)" % (len(notsent), len(rows), notsent[0]))
    retried = [r for r in rows if r[2] != "1"]
    if retried:
        fail("quiet: %d rows sent with attempts other than 1 (e.g. %s): waiting must take none" % (len(retried), retried[0]))
    count = once_each(reqs, {r[0] for r in rows}, "quiet")
    if len(count) != len(rows):
        fail("quiet: %d rows sent, the mock received %d of them" % (len(rows), len(count)))
    t = sorted(r["receivedWallNanoseconds"] for r in reqs)
    first_ms = 0.0
    if opens != "-":
        first_ms = (t[0] - float(opens) * 1e9) / 1e6
        if first_ms < 0:
            fail("quiet: the first request came %.1f ms before the window's end" % -first_ms)
    span = (t[-1] - t[0]) / 1e9
    print("%d %.1f" % (round(len(t) / span) if span > 0 else 0, first_ms))


def caps(requests, rows_path, cap):
    reqs, rows = load_requests(requests), load_rows(rows_path)
    sent = {r[0] for r in rows if r[1] == "sent"}
    capped = [r for r in rows if r[1] == "cancelled"]
    other = [r for r in rows if r[1] not in ("sent", "cancelled")]
    if other:
        fail("caps: %d rows ended neither sent nor cancelled (e.g. %s)" % (len(other), other[0]))
    bad = [r for r in capped if r[3] != "FrequencyCapped" or r[2] != "0"]
    if bad:
        fail("caps: %d cancelled rows without last_reason FrequencyCapped and attempts 0 (e.g. %s)" % (len(bad), bad[0]))
    count = once_each(reqs, sent, "caps")
    if len(count) != len(sent):
        fail("caps: %d rows sent, the mock received %d of them" % (len(sent), len(count)))
    if cap == 0 and capped:
        fail("caps: %d rows of the uncapped lane were capped" % len(capped))
    if cap > 0:
        rows_of, requested = collections.Counter(r[4] for r in rows), collections.Counter()
        user_of = {r[0]: r[4] for r in rows}
        for k in count:
            requested[user_of[k]] += 1
        over = [u for u, n in requested.items() if n > cap]
        if over:
            fail("caps: %d recipients got more than %d requests, e.g. %s (%d)" % (len(over), cap, over[0], requested[over[0]]))
        short = [u for u, n in rows_of.items() if requested[u] != min(cap, n)]
        if short:
            u = short[0]
            fail("caps: %d recipients got fewer than min(cap, their rows) requests, e.g. %s (%d of %d rows)" % (len(short), u, requested[u], rows_of[u]))
    print("%d %d" % (len(sent), len(capped)))


def tenants(requests, rows_path, trickle_path, remain):
    reqs, rows = load_requests(requests), load_rows(rows_path)
    notsent = [r for r in rows if r[1] != "sent"]
    if notsent:
        fail("tenants: %d of %d rows not sent (e.g. %s)" % (len(notsent), len(rows), notsent[0]))
    count = once_each(reqs, {r[0] for r in rows}, "tenants")
    if len(count) != len(rows):
        fail("tenants: %d rows sent, the mock received %d of them" % (len(rows), len(count)))
    inserted = {}
    if trickle_path != "-":
        inserted = {k: int(v) for k, v in (line.split() for line in open(trickle_path) if line.strip())}
    # The campaign's requests in time order: before the (n - remain)-th, at least `remain` of its
    # rows had not reached the mock.
    campaign = sorted(r["receivedWallNanoseconds"] for r in reqs if r["apnsID"] not in inserted)
    if not inserted:
        print("nan nan 0")
        return
    cutoff = campaign[len(campaign) - remain] if len(campaign) > remain else 0
    at = {r["apnsID"]: r["receivedWallNanoseconds"] for r in reqs}
    lat = sorted((at[k] - v) / 1e6 for k, v in inserted.items() if v < cutoff)
    if not lat:
        print("nan nan 0")
        return
    p = lambda q: lat[min(len(lat) - 1, int(round(q * (len(lat) - 1))))]
    print("%.2f %.2f %d" % (p(0.5), p(0.99), len(lat)))


if __name__ == "__main__":
    part, args = sys.argv[1], sys.argv[2:]
    if part == "quiet":
        quiet(args[0], args[1], args[2])
    elif part == "caps":
        caps(args[0], args[1], int(args[2]))
    elif part == "tenants":
        tenants(args[0], args[1], args[2], int(args[3]))
    else:
        fail("considerate-check: unknown part " + part)
