#!/usr/bin/env python3
"""Runs one job of a kind through the packaged app and times it from the POST until it is done.

Sends POST /api/<kind> with the JSON body, then polls the status URL every 5 ms on the same
keep-alive connection until the job is done (or failed, or the time limit passes). Prints the
final status view as JSON, with "seconds" added: from just before the POST to the answer that
said done. With --download, also saves the job's file through its signed link (not timed).

usage: kind_job.py --port P --token-file F --kind K --body JSON [--download FILE] [--limit S]
"""
import argparse
import http.client
import json
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--kind", required=True)
    ap.add_argument("--body", required=True)
    ap.add_argument("--download")
    ap.add_argument("--limit", type=float, default=1800)
    args = ap.parse_args()
    token = open(args.token_file).read().strip()
    auth = {"Authorization": "Bearer " + token}
    conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=60)

    def call(method, path, body=None, headers=None):
        conn.request(method, path, body=body, headers={**auth, **(headers or {})})
        answer = conn.getresponse()
        return answer.status, answer.read()

    start = time.monotonic()
    status, raw = call("POST", "/api/" + args.kind, args.body, {"Content-Type": "application/json"})
    if status != 202:
        sys.exit("bench: POST /api/%s answered %d: %s" % (args.kind, status, raw.decode(errors="replace")))
    status_url = json.loads(raw)["status_url"]
    while True:
        status, raw = call("GET", status_url)
        if status != 200:
            sys.exit("bench: GET %s answered %d: %s" % (status_url, status, raw.decode(errors="replace")))
        view = json.loads(raw)
        if view["status"] == "done":
            seconds = time.monotonic() - start
            break
        if view["status"] == "failed":
            sys.exit("bench: the %s job failed: %s" % (args.kind, json.dumps(view)))
        if time.monotonic() - start > args.limit:
            sys.exit("bench: the %s job was not done after %.0f s: %s" % (args.kind, args.limit, json.dumps(view)))
        time.sleep(0.005)
    if args.download:
        status, raw = call("GET", view["download_url"])
        if status != 200:
            sys.exit("bench: the download of the %s job answered %d" % (args.kind, status))
        with open(args.download, "wb") as f:
            f.write(raw)
    view["seconds"] = round(seconds, 4)
    print(json.dumps(view))


if __name__ == "__main__":
    main()
