#!/usr/bin/env python3
"""Pickup over HTTP for `bench/run.sh http`: one caller enqueues noop jobs one at a time.

Each POST /api/noop goes out on one keep-alive connection, `--gap-ms` after the one before, with a
payload that asks the noop kind to record its execution. The script prints `uid,sent` per
measured job (`sent` in seconds since the epoch, read just before the request is written); the
suite joins it with `noop_executions.started_at`, the moment `process` began on the replica, which
shares this machine's clock. The first `--warmup` jobs are not printed.

Standard library only.
"""

import argparse
import http.client
import json
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token-file", required=True)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--gap-ms", type=float, default=20)
    args = parser.parse_args()
    token = open(args.token_file).read().strip()
    headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
    body = json.dumps({"sleep_ms": 0, "record": True})
    conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=10)
    for i in range(args.warmup + args.count):
        sent = time.time()
        conn.request("POST", "/api/noop", body=body, headers=headers)
        response = conn.getresponse()
        answer = response.read()
        if response.status != 202:
            raise SystemExit(f"POST /api/noop answered {response.status}: {answer[:200]!r}")
        if i >= args.warmup:
            print(f"{json.loads(answer)['uid']},{sent:.6f}")
        time.sleep(max(0.0, sent + args.gap_ms / 1000 - time.time()))


if __name__ == "__main__":
    main()
