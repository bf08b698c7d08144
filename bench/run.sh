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
