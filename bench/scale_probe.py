#!/usr/bin/env python3
"""HTTP timings for `bench/run.sh scale`: one keep-alive connection, requests one after another.

- status: GET /api/jobs/<uid> over the uids in --uids (one per line), --status-requests of them.
- cards: GET /api/admin/services with the admin token, --cards-requests times.
- listing: an owner's GET /api/jobs?limit=50, then the next page through its cursor, --list-pages
  pairs.

Each measure runs --rounds times (2) and the last round counts. Prints one JSON object with each
measure's p50 and p99 in milliseconds. Standard library only.
"""

import argparse
import http.client
import json
import time


def percentile(values, p):
    ordered = sorted(values)
    if not ordered:
        return 0.0
    k = max(0, min(len(ordered) - 1, int(round(p / 100.0 * len(ordered) + 0.5)) - 1))
    return ordered[k]


class Client:
    def __init__(self, port, token):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {"Authorization": "Bearer " + token}

    def get(self, path):
        start = time.perf_counter()
        self.conn.request("GET", path, headers=self.headers)
        response = self.conn.getresponse()
        body = response.read()
        elapsed = (time.perf_counter() - start) * 1000
        if response.status != 200:
            raise SystemExit(f"GET {path} answered {response.status}: {body[:300]!r}")
        return elapsed, body


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--admin-token-file", required=True)
    ap.add_argument("--uids", required=True)
    ap.add_argument("--status-requests", type=int, default=2000)
    ap.add_argument("--cards-requests", type=int, default=100)
    ap.add_argument("--list-pages", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()

    user = Client(args.port, open(args.token_file).read().strip())
    admin = Client(args.port, open(args.admin_token_file).read().strip())
    uids = [l.strip() for l in open(args.uids) if l.strip()]

    for uid in uids[:200]:  # warm-up
        user.get("/api/jobs/" + uid)
    for _ in range(3):
        admin.get("/api/admin/services")
        user.get("/api/jobs?limit=50")

    # Every measure --rounds times; the last round is reported, the ones before warm the caches
    # (the table's pages, the plans, the JIT) that a table filled a moment ago has not warmed yet.
    for _ in range(args.rounds):
        status = [user.get("/api/jobs/" + uids[i % len(uids)])[0] for i in range(args.status_requests)]
        cards = [admin.get("/api/admin/services")[0] for _ in range(args.cards_requests)]
        listing = []
        for _ in range(args.list_pages):
            elapsed, body = user.get("/api/jobs?limit=50")
            listing.append(elapsed)
            page = json.loads(body)
            if len(page["jobs"]) != 50 or not page.get("next"):
                raise SystemExit("the owner's first page did not hold 50 jobs and a cursor")
            elapsed, _ = user.get("/api/jobs?limit=50&before=" + page["next"])
            listing.append(elapsed)

    print(
        json.dumps(
            {
                "status_p50_ms": round(percentile(status, 50), 3),
                "status_p99_ms": round(percentile(status, 99), 3),
                "cards_p50_ms": round(percentile(cards, 50), 3),
                "cards_p99_ms": round(percentile(cards, 99), 3),
                "listing_p50_ms": round(percentile(listing, 50), 3),
                "listing_p99_ms": round(percentile(listing, 99), 3),
            }
        )
    )


if __name__ == "__main__":
    main()
