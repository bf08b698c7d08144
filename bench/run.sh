#!/usr/bin/env bash
# Benchmarks. Usage: bench/run.sh engine
#
# Starts its own PostgreSQL on loopback (Debian's postgresql-15 binaries; installed with apt when
# missing), measures a reference with pgbench on that same server, then runs the benchmark and
# prints a table followed by one JSON object per line: measure, value, unit, and ratio where the
# target is a multiple of the reference.
set -euo pipefail
cd "$(dirname "$0")/.."

suite=${1:-engine}
case "$suite" in
  engine) ;;
  *) echo "usage: bench/run.sh engine" >&2; exit 2 ;;
esac

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
if [ ! -x "$PG_BIN/pgbench" ]; then
  echo "bench: installing postgresql-15 (needs root and apt)" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null
fi

work=$(mktemp -d /tmp/async-jobs-bench.XXXXXX)
chmod 755 "$work"
pgdata="$work/pgdata"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
as_pg() {
  if [ "$(id -u)" = 0 ]; then (cd "$work" && runuser -u postgres -- "$@"); else (cd "$work" && "$@"); fi
}
if [ "$(id -u)" = 0 ]; then chown postgres "$work"; fi

cleanup() {
  as_pg "$PG_BIN/pg_ctl" -D "$pgdata" -m fast stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

as_pg "$PG_BIN/initdb" -A trust -U postgres -D "$pgdata" -E UTF8 >/dev/null
# Durable defaults (fsync and synchronous_commit on), as a production server would run.
as_pg "$PG_BIN/pg_ctl" -D "$pgdata" -l "$work/pg.log" -w start \
  -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$work -c max_connections=100" >/dev/null
url="jdbc:postgresql://127.0.0.1:$port/postgres"

# Reference: one client, one INSERT of a ~200-byte row into a uuid-keyed table per transaction.
psql_() { "$PG_BIN/psql" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres "$@"; }
psql_ -c "CREATE TABLE bench_ref (id uuid PRIMARY KEY, body text NOT NULL)"
echo "INSERT INTO bench_ref VALUES (gen_random_uuid(), repeat('x', 200));" >"$work/insert.sql"
ref_tps=$("$PG_BIN/pgbench" -n -c 1 -T 10 -f "$work/insert.sql" -h 127.0.0.1 -p "$port" -U postgres postgres 2>/dev/null \
  | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -n 1)
psql_ -c "DROP TABLE bench_ref"

out=target/bench
mkdir -p "$out"
rm -f "$out/engine.jsonl"
./mvnw -q -B test -Dtest=EngineBenchmark -Dsurefire.failIfNoSpecifiedTests=false \
  -Djobs.embedded-db.enabled=false \
  -Dquarkus.datasource.jdbc.url="$url" -Dquarkus.datasource.username=postgres \
  -Dquarkus.datasource.password= \
  -Dbench.reference-tps="$ref_tps" -Dbench.output="$out/engine.jsonl" \
  >"$out/engine.log" 2>&1 || { tail -n 80 "$out/engine.log" >&2; exit 1; }

# What the database alone does with the engine's own statements, one client on the same server,
# prepared as the engine's are: where the engine's figures stand against their ceiling.
psql_ -c "TRUNCATE jobs" -c "CREATE SEQUENCE bench_uid_seq"
# Time-ordered uids, as the engine makes them (random ones would scatter every index insert).
cat >"$work/enqueue.sql" <<'SQL'
WITH inserted AS (INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, created_at, updated_at, expires_at) VALUES (('00000000-0000-7000-8000-' || lpad(to_hex(nextval('bench_uid_seq')), 12, '0'))::uuid, 'bench_sql', 'pending', 'user', 'bench', '{"i": 1}', now(), now(), now() + interval '7 days') RETURNING kind) SELECT pg_notify('jobs_enqueued', i.kind) FROM (SELECT DISTINCT kind FROM inserted) i WHERE NOT EXISTS (SELECT 1 FROM jobs p WHERE p.kind = i.kind AND p.status = 'pending');
SQL
sql_enqueue=$("$PG_BIN/pgbench" -M prepared -n -c 1 -T 10 -f "$work/enqueue.sql" -h 127.0.0.1 -p "$port" -U postgres postgres 2>/dev/null \
  | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -n 1)
psql_ -c "TRUNCATE jobs" -c "DROP SEQUENCE bench_uid_seq"
psql_ -c "INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, created_at, updated_at, expires_at)
          SELECT ('00000000-0000-7000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, 'bench_sql', 'pending', 'user', 'bench',
                 '{}', now(), now(), now() FROM generate_series(1, 40000) g"
psql_ -c "VACUUM ANALYZE jobs"
# One drain cycle: write the outcomes of the last 10 claimed jobs and claim the next 10.
cat >"$work/cycle.sql" <<'SQL'
WITH completed AS (UPDATE jobs SET status = 'done', completed_at = now(), updated_at = now(), result = '{}', duration_ms = 1, expires_at = now() + interval '7 days' WHERE uid = ANY (:prev::uuid[]) AND status = 'running' AND epoch = 1 RETURNING uid), claimed AS (UPDATE jobs SET status = 'running', started_at = now(), updated_at = now(), epoch = 1 WHERE uid = ANY (ARRAY(SELECT uid FROM jobs WHERE kind = 'bench_sql' AND status = 'pending' AND uid > :cursor::uuid ORDER BY uid LIMIT 10 FOR UPDATE SKIP LOCKED)) RETURNING uid, payload::text) SELECT array_agg(uid)::text AS prev, max(uid::text) AS cursor, (SELECT count(*) FROM completed) AS n FROM claimed \gset
SQL
cycles=$("$PG_BIN/pgbench" -M prepared -n -c 1 -t 3500 -D prev='{}' -D cursor=00000000-0000-0000-0000-000000000000 \
  -f "$work/cycle.sql" -h 127.0.0.1 -p "$port" -U postgres postgres 2>/dev/null \
  | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -n 1)
python3 - "$out/engine.jsonl" "$ref_tps" "$sql_enqueue" "$cycles" <<'PY'
import json, sys
path, ref, enq, cycles = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
with open(path, "a") as f:
    f.write(json.dumps({"measure": "pgbench_engine_enqueue_statement", "value": round(enq, 2), "unit": "tps", "ratio": round(enq / ref, 2)}) + "\n")
    f.write(json.dumps({"measure": "pgbench_engine_drain_cycles_of_10", "value": round(cycles * 10, 2), "unit": "jobs/s", "ratio": round(cycles * 10 / ref, 2)}) + "\n")
PY

python3 - "$out/engine.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"{'measure':<34} {'value':>12} {'unit':<8} {'ratio':>7}")
for r in rows:
    ratio = f"{r['ratio']:.2f}" if 'ratio' in r else ''
    print(f"{r['measure']:<34} {r['value']:>12.2f} {r['unit']:<8} {ratio:>7}")
print()
for r in rows:
    print(json.dumps(r))
PY
