"""Applies the migrations after V1, one at a time, under a probe that does what the service does.

Run by bench/migrations.sh (the `migrations` suite of bench/run.sh) once V1 is applied and `jobs`
is filled. Each later script is applied as Flyway applies it: in one transaction, or, when it holds
CONCURRENTLY statements (which cannot run in one), statement by statement outside a transaction.
Meanwhile, on connections of their own and in autocommit as the service's are:

  * enqueue: a single-row INSERT that sets V1's columns only, the rest from the defaults, as the
    release before a migration does;
  * claim: the engine's shape, an UPDATE of the uids a SELECT ... FOR UPDATE SKIP LOCKED picked,
    reduced to V1's columns so that it is valid on every schema version;
  * locks: every ~10 ms, the locks the migrating session (application_name bench-migration) holds
    or waits for on `jobs`.

The enqueue and claim loops each run one statement at a time with a 5 ms pause between, recording
each statement's start and end. A transactional script also reports the locks it holds on `jobs`
just before it commits (psql wraps the extra -c in the same transaction), which catches a lock
held for less than a poll. The reference is the probes' p99 latency with no migration running:
five seconds before the first migration and five after the last. Prints one JSON object per
migration to --rows.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
import uuid

import psycopg2

# Relation lock modes, weakest first. Enqueues (INSERT) and claims (SELECT ... FOR UPDATE, then
# UPDATE) take RowExclusiveLock; the modes from ShareLock up conflict with it.
MODES = ["AccessShareLock", "RowShareLock", "RowExclusiveLock", "ShareUpdateExclusiveLock",
         "ShareLock", "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"]
BLOCKING = set(MODES[MODES.index("ShareLock"):])
APP_NAME = "bench-migration"
PAUSE_S = 0.005
POLL_S = 0.010

ENQUEUE = """
INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, created_at, updated_at, expires_at)
VALUES (%s, 'probe', 'pending', 'user', 'probe-owner', '{"sleep_ms": 0}', now(), now(),
        now() + interval '7 days')
"""
CLAIM = """
UPDATE jobs SET status = 'running', started_at = now(), updated_at = now()
 WHERE uid = ANY (ARRAY(SELECT uid FROM jobs WHERE kind = 'probe' AND status = 'pending'
                         ORDER BY uid LIMIT 1 FOR UPDATE SKIP LOCKED))
RETURNING uid
"""
LOCKS = """
SELECT l.mode, l.granted,
       CASE WHEN NOT l.granted THEN
         (SELECT string_agg(DISTINCT b.backend_type || ' ' || coalesce(nullif(b.application_name, ''), '-')
                            || ': ' || left(regexp_replace(b.query, '\\s+', ' ', 'g'), 60), '; ')
            FROM pg_stat_activity b WHERE b.pid = ANY (pg_blocking_pids(l.pid))) END
  FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
 WHERE a.application_name = %s AND l.locktype = 'relation' AND l.relation = %s
"""


def connect(port):
    conn = psycopg2.connect(host="127.0.0.1", port=port, user="postgres", dbname="postgres",
                            application_name="bench-probe")
    conn.autocommit = True
    return conn


def uuid7():
    """A time-ordered uid, as the engine makes them (random ones would scatter every index insert)."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms << 80) | (0x7 << 76) | ((rand >> 62) & 0xFFF) << 64 | (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


class Probe(threading.Thread):
    """One statement at a time in a loop, recording (start, end) of each, until stopped."""

    def __init__(self, port, name, sql, params):
        super().__init__(daemon=True)
        self.conn = connect(port)
        self.name, self.sql, self.params = name, sql, params
        self.samples = []
        self.errors = []
        self.stop = threading.Event()

    def run(self):
        cur = self.conn.cursor()
        while not self.stop.is_set():
            start = time.monotonic()
            try:
                cur.execute(self.sql, self.params())
                if cur.description:
                    cur.fetchall()
            except psycopg2.Error as e:
                self.errors.append((start, str(e).strip()))
            self.samples.append((start, time.monotonic()))
            time.sleep(PAUSE_S)


class LockPoller(threading.Thread):
    """The migrating session's locks on jobs, every POLL_S: (time, [(mode, granted, blockers)])."""

    def __init__(self, port, jobs_oid):
        super().__init__(daemon=True)
        self.conn = connect(port)
        self.jobs_oid = jobs_oid
        self.polls = []
        self.stop = threading.Event()

    def run(self):
        cur = self.conn.cursor()
        while not self.stop.is_set():
            cur.execute(LOCKS, (APP_NAME, self.jobs_oid))
            self.polls.append((time.monotonic(), cur.fetchall()))
            time.sleep(POLL_S)


def strongest(modes):
    return max(modes, key=MODES.index) if modes else None


def p99(values):
    values = sorted(values)
    return values[min(len(values) - 1, int(0.99 * len(values)))] if values else 0.0


def stall(samples, start, end):
    """The longest statement that overlapped [start, end], in ms, and how many overlapped it."""
    lat = [(e - s) * 1000 for s, e in samples if e >= start and s <= end]
    return (max(lat) if lat else 0.0), len(lat)


def migrations(folder):
    found = []
    for name in os.listdir(folder):
        m = re.match(r"V(\d+)__(.+)\.sql$", name)
        if m:
            found.append((int(m.group(1)), m.group(2).replace("_", " "), os.path.join(folder, name)))
    return sorted(found)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--psql", required=True)
    ap.add_argument("--migrations", required=True)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per migration")
    ap.add_argument("--reference-seconds", type=float, default=5.0)
    ap.add_argument("--rows", required=True, help="file for one JSON object per migration")
    args = ap.parse_args()
    sys.setswitchinterval(0.0005)  # the probes' timings should not wait on the poller's GIL slices

    admin = connect(args.port)
    cur = admin.cursor()
    cur.execute("SELECT 'jobs'::regclass::oid")
    jobs_oid = cur.fetchone()[0]

    enqueue = Probe(args.port, "enqueue", ENQUEUE, lambda: (uuid7(),))
    claim = Probe(args.port, "claim", CLAIM, lambda: ())
    poller = LockPoller(args.port, jobs_oid)
    for t in (enqueue, claim, poller):
        t.start()

    reference = []
    start = time.monotonic()
    time.sleep(args.reference_seconds)
    reference.append((start, time.monotonic()))

    env = dict(os.environ, PGAPPNAME=APP_NAME,
               PGOPTIONS=f"-c statement_timeout={args.timeout * 1000}")
    rows = []
    failed = None
    for version, description, path in migrations(args.migrations):
        if version == 1:
            continue
        text = open(path).read()
        concurrent = re.search(r"\bCONCURRENTLY\b", re.sub(r"--[^\n]*", "", text), re.I) is not None
        cmd = [args.psql, "-X", "-q", "-At", "-h", "127.0.0.1", "-p", str(args.port), "-U", "postgres",
               "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-f", path]
        if not concurrent:
            # In the same transaction as the script (psql wraps every -f and -c in one): the locks
            # it holds on jobs just before it commits.
            cmd += ["--single-transaction", "-c",
                    f"SELECT mode FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'relation'"
                    f" AND relation = {jobs_oid}"]
        print(f"bench: V{version} {description}", file=sys.stderr, flush=True)
        begin = time.monotonic()
        try:
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout + 30)
        except subprocess.TimeoutExpired:
            failed = f"V{version} did not finish within {args.timeout + 30} s"
            break
        end = time.monotonic()
        if done.returncode != 0:
            failed = f"V{version} failed: {done.stderr.strip()}"
            break
        time.sleep(0.3)  # statements that waited on the migration finish and are counted
        held_at_commit = [line.strip() for line in done.stdout.splitlines() if line.strip() in MODES]
        polls = [(t, locks) for t, locks in poller.polls if begin <= t <= end]
        seen = [mode for _, locks in polls for mode, _, _ in locks]
        waited = any(not granted for _, locks in polls for _, granted, _ in locks)
        # Whom the migration waited behind: a lock it queues for stops every statement after it.
        behind = sorted({b for _, locks in polls for _, _, b in locks if b})
        blocking = [t for t, locks in polls if any(mode in BLOCKING for mode, _, _ in locks)]
        if blocking:
            blocking_ms = (blocking[-1] - blocking[0]) * 1000 + POLL_S * 1000
        elif any(mode in BLOCKING for mode in held_at_commit):
            blocking_ms = POLL_S * 1000  # held, but for less than a poll
        else:
            blocking_ms = 0.0
        enq_ms, enq_n = stall(enqueue.samples, begin, end)
        claim_ms, claim_n = stall(claim.samples, begin, end)
        rows.append({
            "version": version, "description": description,
            "transaction": "none (CONCURRENTLY)" if concurrent else "one",
            "wall_ms": round((end - begin) * 1000, 1),
            "lock": strongest(seen + held_at_commit) or "none",
            "lock_waited": waited, "waited_behind": behind,
            "blocking_ms": round(blocking_ms, 1),
            "enqueue_stall_ms": round(enq_ms, 1), "enqueues": enq_n,
            "claim_stall_ms": round(claim_ms, 1), "claims": claim_n,
        })

    start = time.monotonic()
    time.sleep(args.reference_seconds)
    reference.append((start, time.monotonic()))
    for t in (enqueue, claim, poller):
        t.stop.set()
    for t in (enqueue, claim, poller):
        t.join(timeout=args.timeout)

    def ref(samples):
        return p99([(e - s) * 1000 for s, e in samples if any(a <= s and e <= b for a, b in reference)])

    errors = enqueue.errors + claim.errors
    with open(args.rows, "w") as f:
        f.write(json.dumps({"reference": True, "enqueue_p99_ms": round(ref(enqueue.samples), 3),
                            "claim_p99_ms": round(ref(claim.samples), 3),
                            "enqueues": len(enqueue.samples), "claims": len(claim.samples),
                            "probe_errors": len(errors),
                            "first_error": errors[0][1] if errors else None}) + "\n")
        for row in rows:
            f.write(json.dumps(row) + "\n")
    if failed:
        print(f"bench: {failed}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
