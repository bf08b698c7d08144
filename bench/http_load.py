#!/usr/bin/env python3
"""Load for `bench/run.sh http`: pollers following noop jobs plus paced enqueues.

Standard library only: asyncio with raw HTTP/1.1 keep-alive connections, one event loop, so the
generator costs little CPU on a machine it shares with the app and PostgreSQL.

- Each poller owns one connection and sends GET /api/jobs/<uid> once a second on a fixed
  schedule (start times spread over the first second). It follows one job until the job is done
  or failed, then takes the newest job no poller follows yet (or, when there is none, the newest
  job enqueued).
- The enqueuer sends POST /api/noop at a fixed rate from a pool of connections, open loop: a
  request whose turn comes while every connection is busy waits for one, and that wait counts.

Latencies run from the moment a request was due, not from when it was sent, so a stalled server
or generator shows up in them instead of silently lowering the rate (no coordinated omission).
The lag between due and sent is reported apart, to show whether the generator kept up.

Prints one JSON object with the counts and percentiles.
"""

import argparse
import asyncio
import collections
import json
import random
import resource
import sys
import time


class Connection:
    """One keep-alive HTTP/1.1 connection; reopened on the next request after any failure."""

    def __init__(self, host, port):
        self.host = host
        self.port = port
        self.reader = None
        self.writer = None

    async def open(self):
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    def close(self):
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def request(self, raw):
        if self.writer is None:
            await self.open()
        self.writer.write(raw)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")
                    break
                parts.append(await self.reader.readexactly(size))
                await self.reader.readexactly(2)
            body = b"".join(parts)
        else:
            body = b""
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, body


def percentile(values, p):
    """Nearest-rank percentile in milliseconds of a list of seconds; 0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, int(round(p / 100.0 * len(ordered) + 0.5)))
    return ordered[min(rank, len(ordered)) - 1] * 1000.0


class Load:
    def __init__(self, args):
        self.args = args
        self.auth = "Bearer " + args.token
        self.get_latency = []
        self.post_latency = []
        self.lag = []
        self.errors = collections.Counter()
        self.requests = 0
        self.enqueued = 0
        self.unfollowed = collections.deque(maxlen=10000)
        self.newest = None
        self.seen_done = set()
        self.seen_failed = set()
        self.end = 0.0

    def get_request(self, uid):
        return (
            f"GET /api/jobs/{uid} HTTP/1.1\r\nHost: {self.args.host}:{self.args.port}\r\n"
            f"Authorization: {self.auth}\r\nAccept: application/json\r\n\r\n"
        ).encode()

    def post_request(self):
        body = json.dumps({"sleep_ms": self.args.sleep_ms}).encode()
        return (
            f"POST /api/noop HTTP/1.1\r\nHost: {self.args.host}:{self.args.port}\r\n"
            f"Authorization: {self.auth}\r\nAccept: application/json\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode() + body

    async def call(self, conn, raw, due):
        """Sends one request; returns (status, body) or None after counting the error."""
        loop = asyncio.get_running_loop()
        self.requests += 1
        self.lag.append(max(0.0, loop.time() - due))
        try:
            status, body = await asyncio.wait_for(conn.request(raw), self.args.timeout)
        except asyncio.TimeoutError:
            conn.close()
            self.errors["timeout"] += 1
            return None
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as e:
            conn.close()
            self.errors[type(e).__name__] += 1
            return None
        if not 200 <= status < 300:
            self.errors[f"http_{status}"] += 1
            return None
        return status, body, loop.time() - due

    def take_job(self):
        if self.unfollowed:
            return self.unfollowed.pop()
        return self.newest

    async def poller(self, conn, start):
        loop = asyncio.get_running_loop()
        due = start
        uid = None
        while due < self.end:
            if uid is None:
                uid = self.take_job()
            if uid is None:  # nothing enqueued yet: try again next second
                due += 1.0
                await asyncio.sleep(max(0.0, due - loop.time()))
                continue
            await asyncio.sleep(max(0.0, due - loop.time()))
            answer = await self.call(conn, self.get_request(uid), due)
            if answer is not None:
                self.get_latency.append(answer[2])
                try:
                    status = json.loads(answer[1])["status"]
                except (ValueError, KeyError, TypeError):
                    self.errors["bad_body"] += 1
                    status = None
                if status == "done":
                    self.seen_done.add(uid)
                    uid = None
                elif status == "failed":
                    self.seen_failed.add(uid)
                    uid = None
            due += 1.0

    async def enqueue_one(self, pool, due):
        conn = await pool.get()
        try:
            answer = await self.call(conn, self.post_request(), due)
        finally:
            pool.put_nowait(conn)
        if answer is None:
            return
        self.post_latency.append(answer[2])
        try:
            uid = json.loads(answer[1])["uid"]
        except (ValueError, KeyError, TypeError):
            self.errors["bad_body"] += 1
            return
        self.enqueued += 1
        self.unfollowed.append(uid)
        self.newest = uid

    async def enqueuer(self, pool, start):
        loop = asyncio.get_running_loop()
        total = int(round(self.args.rate * self.args.seconds))
        tasks = []
        for k in range(total):
            due = start + k / self.args.rate
            await asyncio.sleep(max(0.0, due - loop.time()))
            tasks.append(asyncio.create_task(self.enqueue_one(pool, due)))
        await asyncio.gather(*tasks)

    async def run(self):
        a = self.args
        loop = asyncio.get_running_loop()
        conns = [Connection(a.host, a.port) for _ in range(a.pollers + a.enqueue_connections)]
        for i in range(0, len(conns), 50):  # connect before the clock starts, 50 at a time
            await asyncio.gather(*(c.open() for c in conns[i : i + 50]))
        pool = asyncio.Queue()
        for c in conns[a.pollers :]:
            pool.put_nowait(c)
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        start = loop.time() + 0.2
        self.end = start + a.seconds
        rng = random.Random(1)
        wall0 = time.monotonic()
        await asyncio.gather(
            self.enqueuer(pool, start),
            *(self.poller(conns[i], start + rng.random()) for i in range(a.pollers)),
        )
        wall = time.monotonic() - wall0
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        for c in conns:
            c.close()
        cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
        return {
            "seconds": round(wall, 2),
            "requests": self.requests,
            "errors": sum(self.errors.values()),
            "error_kinds": dict(self.errors),
            "status_gets": len(self.get_latency),
            "enqueues": len(self.post_latency),
            "request_rate": round(self.requests / wall, 1),
            "get_p50_ms": round(percentile(self.get_latency, 50), 2),
            "get_p99_ms": round(percentile(self.get_latency, 99), 2),
            "get_max_ms": round(percentile(self.get_latency, 100), 2),
            "enqueue_p50_ms": round(percentile(self.post_latency, 50), 2),
            "enqueue_p99_ms": round(percentile(self.post_latency, 99), 2),
            "enqueue_max_ms": round(percentile(self.post_latency, 100), 2),
            "send_lag_p99_ms": round(percentile(self.lag, 99), 2),
            "jobs_enqueued": self.enqueued,
            "jobs_seen_done": len(self.seen_done),
            "jobs_seen_failed": len(self.seen_failed),
            "generator_cpu_percent_of_one_core": round(100.0 * cpu / wall, 1),
        }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--token-file", required=True)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--pollers", type=int, default=200)
    p.add_argument("--rate", type=float, default=50, help="enqueues per second")
    p.add_argument("--enqueue-connections", type=int, default=16)
    p.add_argument("--sleep-ms", type=int, default=2000, help="sleep_ms of each noop job")
    p.add_argument("--timeout", type=float, default=10, help="seconds before a request fails")
    args = p.parse_args()
    with open(args.token_file) as f:
        args.token = f.read().strip()
    if args.seconds <= 0 or args.seconds > 600 or args.rate <= 0 or args.pollers < 0:
        sys.exit("http_load: seconds must be in (0, 600], rate > 0, pollers >= 0")
    print(json.dumps(asyncio.run(Load(args).run())))


if __name__ == "__main__":
    main()
