#!/usr/bin/env bash
# Benchmarks. Usage: bench/run.sh engine|http|enqueue|zip|memory|scale|kinds|peers|shards|fairness|native|migrations|startup
#
# Each suite starts its own PostgreSQL on loopback (Debian's postgresql-15 binaries; installed with
# apt when missing), measures a reference on that same machine, then runs the benchmark and prints
# a table followed by one JSON object per line: measure, value, unit, and ratio where the target is
# a multiple of the reference. The lines also land in target/bench/<suite>.jsonl.
#
#   engine  the job engine in-process (EngineBenchmark) against pgbench inserts.
#   http    the packaged app over HTTP: a polling/enqueue load, status GET throughput against a
#           pgbench primary-key select, and a 1 GiB download against nginx. See docs/benchmarks.md.
#   enqueue POST /api/noop one at a time and POST /api/noop/batch against the same enqueues made
#           in-process through JobQueue (bench/enqueue.sh).
#   zip     the zip kind on a mixed 1 GiB tree against `zip -r -6` on the same tree.
#   scale   the packaged app beside 10^4 and then 10^7 finished jobs (built with SQL): queue gauges,
#           service cards, status GET, an owner's listing, a drain of 5,000 noop jobs, the idle
#           database's CPU and the sweep of 10^6 expired jobs, with the large/small ratio of each.
#   memory  the packaged app's resident memory, idle, under the HTTP load, zipping and searching a
#           512 MiB tree, against the memory limit in k8s/base/deployment.yaml.
#   kinds   each kind against the everyday tool a user would run instead (bench/kinds.sh).
#   peers   the engine beside other PostgreSQL job queues (bench/peers.sh).
#   shards  waiting and CPU-bound jobs drained by 1, 2 and 3 replicas sharing shards (bench/shards.sh).
#   fairness one owner's single job behind another owner's backlog, claim order fifo against fair,
#           and the pending quota under concurrent enqueues (bench/fairness.sh).
#   native  the native executable against the JVM build of the same commit: time to ready, resident
#           memory idle and under a drain, drain rate, size (bench/native-suite.sh; the executable
#           comes from bench/native.sh).
#   migrations each migration after V1 applied as Flyway would to a jobs table of 10^6 rows while a
#           probe enqueues and claims: wall time, the lock each holds on jobs, the longest enqueue
#           and claim during it (bench/migrations.sh; no app build).
#   startup the packaged app's time and CPU from launch to ready, on a new and on an existing database,
#           against a base build of an earlier commit (BENCH_STARTUP_BASE, the last v* tag by default)
#           made in the same run (bench/startup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

suite=${1:-engine}
case "$suite" in
  engine | http | enqueue | zip | memory | scale | kinds | peers | shards | fairness | native | migrations | startup) ;;
  *) echo "usage: bench/run.sh engine|http|enqueue|zip|memory|scale|kinds|peers|shards|fairness|native|migrations|startup" >&2; exit 2 ;;
esac

# Installs Debian package $1 with apt when the executable $2 is missing.
apt_need() {
  local package=$1 executable=$2
  if [ ! -x "$executable" ] && ! command -v "$executable" >/dev/null 2>&1; then
    echo "bench: installing $package (needs root and apt)" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null
  fi
}

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
apt_need postgresql-15 "$PG_BIN/pgbench"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

work=$(mktemp -d /tmp/async-jobs-bench.XXXXXX)
chmod 755 "$work"
pgdata="$work/pgdata"
pg_port=$(free_port)
as_pg() {
  if [ "$(id -u)" = 0 ]; then (cd "$work" && runuser -u postgres -- "$@"); else (cd "$work" && "$@"); fi
}
if [ "$(id -u)" = 0 ]; then chown postgres "$work"; fi

# Processes this script started in the background; each is stopped by its own id on exit.
started=()
stop_pid() {
  local pid=$1 waited=0
  kill -TERM "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 300 ]; do sleep 0.1; waited=$((waited + 1)); done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  local pid
  for pid in ${started[@]+"${started[@]}"}; do stop_pid "$pid"; done
  as_pg "$PG_BIN/pg_ctl" -D "$pgdata" -m fast stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A throwaway PostgreSQL 15 on loopback, durable defaults (fsync and synchronous_commit on), as a
# production server would run.
as_pg "$PG_BIN/initdb" -A trust -U postgres -D "$pgdata" -E UTF8 >/dev/null
as_pg "$PG_BIN/pg_ctl" -D "$pgdata" -l "$work/pg.log" -w start \
  -o "-p $pg_port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$work -c max_connections=100" >/dev/null
url="jdbc:postgresql://127.0.0.1:$pg_port/postgres"
psql_() { "$PG_BIN/psql" -q -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres "$@"; }
# pgbench's tps, excluding connection setup.
pgbench_tps() {
  "$PG_BIN/pgbench" "$@" -h 127.0.0.1 -p "$pg_port" -U postgres postgres 2>/dev/null \
    | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -n 1
}

out=target/bench
mkdir -p "$out"

# Prints the table of a suite's JSON lines, then the lines themselves.
print_results() {
  python3 - "$1" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
width = max([34] + [len(r["measure"]) for r in rows])
print(f"{'measure':<{width}} {'value':>12} {'unit':<8} {'ratio':>7}")
for r in rows:
    ratio = f"{r['ratio']:.2f}" if 'ratio' in r else ''
    print(f"{r['measure']:<{width}} {r['value']:>12.2f} {r['unit']:<8} {ratio:>7}")
print()
for r in rows:
    print(json.dumps(r))
PY
}

# Builds the app unless BENCH_SKIP_BUILD=1 and a jar exists, makes a key pair and one RS256
# token ("$keys/token", "$token") with plain openssl, starts the packaged app (prod profile) on
# loopback against the bench PostgreSQL with its data in "$data", and waits until it is ready.
# Sets app_port, app_pid, base, token, keys and data; $1 names the log files. BENCH_APP_ENV adds
# environment settings (VAR=value ...). BENCH_APP_DIR starts the quarkus-app folder of another
# build (never built here). BENCH_NATIVE=1 starts the native executable (target/*-runner, which
# bench/native.sh builds) instead of the JVM build; it is never rebuilt here.
start_app() {
  if [ "${BENCH_NATIVE:-0}" = 1 ]; then
    native_runner >/dev/null
  elif [ -z "${BENCH_APP_DIR:-}" ] && { [ "${BENCH_SKIP_BUILD:-0}" != 1 ] || [ ! -f target/quarkus-app/quarkus-run.jar ]; }; then
    ./mvnw -q -B package -DskipTests >"$out/$1-build.log" 2>&1 \
      || { tail -n 80 "$out/$1-build.log" >&2; exit 1; }
  fi

  # A key pair for the app to verify tokens with, and one token signed here with plain openssl.
  keys="$work/jwt"
  local issuer=async-jobs-bench
  mkdir -p "$keys"
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$keys/private.pem" 2>/dev/null
  openssl pkey -in "$keys/private.pem" -pubout -out "$keys/public.pem"
  b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
  local now header payload signature
  now=$(date +%s)
  header=$(printf '{"alg":"RS256","typ":"JWT"}' | b64url)
  payload=$(printf '{"iss":"%s","sub":"bench-user","groups":["user"],"iat":%d,"exp":%d}' \
    "$issuer" "$now" "$((now + 7200))" | b64url)
  signature=$(printf '%s.%s' "$header" "$payload" | openssl dgst -sha256 -sign "$keys/private.pem" -binary | b64url)
  printf '%s.%s.%s' "$header" "$payload" "$signature" >"$keys/token"
  token=$(cat "$keys/token")
  payload=$(printf '{"iss":"%s","sub":"bench-admin","groups":["admin"],"iat":%d,"exp":%d}' \
    "$issuer" "$now" "$((now + 7200))" | b64url)
  signature=$(printf '%s.%s' "$header" "$payload" | openssl dgst -sha256 -sign "$keys/private.pem" -binary | b64url)
  printf '%s.%s.%s' "$header" "$payload" "$signature" >"$keys/admin-token"

  # The packaged app, prod profile, on loopback. BENCH_JAVA_OPTS adds JVM options (for example
  # -XX:StartFlightRecording=filename=/tmp/app.jfr,settings=profile to profile it).
  data="$work/data"
  app_port=$(free_port)
  mkdir -p "$data"
  local launch=(java ${BENCH_JAVA_OPTS:-} -jar "${BENCH_APP_DIR:-target/quarkus-app}/quarkus-run.jar")
  if [ "${BENCH_NATIVE:-0}" = 1 ]; then launch=("$(native_runner)"); fi
  app_started_ns=$(date +%s%N)
  env QUARKUS_HTTP_HOST=127.0.0.1 QUARKUS_HTTP_PORT="$app_port" \
    QUARKUS_DATASOURCE_JDBC_URL="$url" QUARKUS_DATASOURCE_USERNAME=postgres QUARKUS_DATASOURCE_PASSWORD= \
    MP_JWT_VERIFY_PUBLICKEY_LOCATION="$keys/public.pem" MP_JWT_VERIFY_ISSUER="$issuer" \
    JOBS_DATA_DIR="$data" JOBS_LOCK_MODE=postgres JOBS_LOCK_HANDOVER_GRACE=5s \
    JOBS_SERVICES_NOOP_ENABLED=true JOBS_SERVICES_NOOP_MAX_CONCURRENT=128 \
    JOBS_API_SIGNING_KEY="$(openssl rand -base64 32)" ${BENCH_APP_ENV:-} \
    "${launch[@]}" >"$out/$1-app.log" 2>&1 &
  app_pid=$!
  started+=("$app_pid")
  base="http://127.0.0.1:$app_port"
  # Polled every 20 ms, so that the time to ready (app_ready_ms) is exact to about that.
  local deadline=$((app_started_ns + 60000000000))
  until curl -fsS "$base/q/health/ready" 2>/dev/null | grep -q '"UP"'; do
    if ! kill -0 "$app_pid" 2>/dev/null || [ "$(date +%s%N)" -ge "$deadline" ]; then
      echo "bench: the app did not become ready; last lines of $out/$1-app.log:" >&2
      tail -n 40 "$out/$1-app.log" >&2
      exit 1
    fi
    sleep 0.02
  done
  app_ready_ms=$((($(date +%s%N) - app_started_ns) / 1000000))
}

# The native executable of this checkout (bench/native.sh builds it); fails when there is none.
native_runner() {
  local runner
  runner=$(ls target/*-runner 2>/dev/null | head -n 1)
  if [ -z "$runner" ] || [ ! -x "$runner" ]; then
    echo "bench: no native executable in target/; build one with bench/native.sh" >&2
    exit 1
  fi
  echo "$runner"
}

# Waits until no job is pending or running, at most $1 seconds.
await_drained() {
  local left=$(($1 * 10))
  while [ "$left" -gt 0 ] \
    && [ "$(psql_ -At -c "SELECT count(*) FROM jobs WHERE status IN ('pending', 'running')")" != 0 ]; do
    sleep 0.1
    left=$((left - 1))
  done
}

# Pickup from the HTTP request: bench/http_pickup.py's lines (uid,sent) in the CSV file $1, joined
# with the noop kind's executions. Prints, in ms: p50, p99, the jobs joined, then the p50 of each
# part, split at jobs.created_at (which the app reads from its clock when the enqueue reaches the
# queue): the HTTP request up to there, then the insert, its commit, the wake-up, the claim and the
# hand-over to a thread.
pickup_figures() {
  psql_ -At -F ' ' -c "CREATE TEMPORARY TABLE pickup_sent (uid uuid, sent double precision)" \
    -c "\\copy pickup_sent FROM '$1' CSV" \
    -c "SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2),
               round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 2), count(*),
               round(percentile_cont(0.5) WITHIN GROUP (ORDER BY to_insert)::numeric, 2),
               round(percentile_cont(0.5) WITHIN GROUP (ORDER BY to_process)::numeric, 2)
          FROM (SELECT extract(epoch FROM e.started_at) * 1000 - s.sent * 1000 AS ms,
                       extract(epoch FROM j.created_at) * 1000 - s.sent * 1000 AS to_insert,
                       extract(epoch FROM e.started_at - j.created_at) * 1000 AS to_process
                  FROM pickup_sent s JOIN noop_executions e ON e.uid = s.uid
                  JOIN jobs j ON j.uid = s.uid) t"
}

# The reference: pgbench, one client, one INSERT of a ~200-byte row into a uuid-keyed table per
# transaction, for 10 s. Prints its tps.
reference_insert_tps() {
  psql_ -c "CREATE TABLE bench_ref (id uuid PRIMARY KEY, body text NOT NULL)"
  echo "INSERT INTO bench_ref VALUES (gen_random_uuid(), repeat('x', 200));" >"$work/insert.sql"
  pgbench_tps -n -c 1 -T 10 -f "$work/insert.sql"
  psql_ -c "DROP TABLE bench_ref"
}

# The engine's drain cycle as the database alone runs it: pgbench, one client, prepared, $2 cycles
# (3,500) that each write the outcomes of the last $1 (10) claimed jobs and claim the next $1,
# over enough pending rows in the jobs table (which the engine's migrations must have made; it is
# emptied first). Prints cycles per second.
engine_cycle_tps() {
  local batch=${1:-10} count=${2:-3500}
  local rows=$((batch * count + 500 > 40000 ? batch * count + 500 : 40000))
  psql_ -c "TRUNCATE jobs"
  psql_ -c "INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, created_at, updated_at, expires_at)
            SELECT ('00000000-0000-7000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, 'bench_sql', 'pending', 'user', 'bench',
                   '{}', now(), now(), now() FROM generate_series(1, $rows) g"
  psql_ -c "VACUUM ANALYZE jobs"
  cat >"$work/cycle.sql" <<'SQL'
WITH completed AS (UPDATE jobs SET status = 'done', completed_at = now(), updated_at = now(), result = '{}', duration_ms = 1, expires_at = now() + interval '7 days' WHERE uid = ANY (:prev::uuid[]) AND status = 'running' AND epoch = 1 RETURNING uid), claimed AS (UPDATE jobs SET status = 'running', started_at = now(), updated_at = now(), epoch = 1 WHERE uid = ANY (ARRAY(SELECT uid FROM jobs WHERE kind = 'bench_sql' AND status = 'pending' AND uid > :cursor::uuid ORDER BY uid LIMIT BATCH FOR UPDATE SKIP LOCKED)) RETURNING uid, payload::text) SELECT array_agg(uid)::text AS prev, max(uid::text) AS cursor, (SELECT count(*) FROM completed) AS n FROM claimed \gset
SQL
  sed -i "s/LIMIT BATCH/LIMIT $batch/" "$work/cycle.sql"
  pgbench_tps -M prepared -n -c 1 -t "$count" -D prev='{}' -D cursor=00000000-0000-0000-0000-000000000000 \
    -f "$work/cycle.sql"
}

suite_engine() {
  ref_tps=$(reference_insert_tps)

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
  # JobInsertOne as the engine sends it for a job of the default priority, with time-ordered
  # uids as the engine makes them (random ones would scatter every index insert). pgbench reads
  # ":head" as a variable, so the wake-up's suffix is spelled with chr(58).
  cat >"$work/enqueue.sql" <<'SQL'
INSERT INTO jobs AS j (uid, kind, status, owner_kind, owner_id, preferred_name, payload, created_at, updated_at, expires_at, shard, priority, run_after, delayed_until, callback_url, traceparent) VALUES (('00000000-0000-7000-8000-' || lpad(to_hex(nextval('bench_uid_seq')), 12, '0'))::uuid, 'bench_sql', 'pending', 'user', 'bench', NULL, '{"i": 1}'::jsonb, now(), now(), (now() + make_interval(secs => COALESCE((SELECT s.retention_seconds FROM service_settings s WHERE s.service = 'bench_sql'), 604800)::double precision)), 'all', 0, NULL, NULL, NULL, NULL) RETURNING CASE WHEN j.priority > 0 OR CASE WHEN COALESCE((SELECT s.max_running_per_owner FROM service_settings s WHERE s.service = j.kind), 0) = 0 THEN (SELECT true FROM jobs p WHERE p.kind = j.kind AND p.shard = j.shard AND p.status = 'pending' AND p.delayed_until IS NULL LIMIT 1) IS NULL ELSE (SELECT true FROM jobs p WHERE p.kind = j.kind AND p.shard = j.shard AND p.status = 'pending' AND p.delayed_until IS NULL AND p.owner_kind = j.owner_kind AND p.owner_id = j.owner_id LIMIT 1) IS NULL END THEN pg_notify('jobs_enqueued', j.kind || CASE WHEN j.shard = 'all' THEN '' ELSE '/' || j.shard END || CASE WHEN j.priority > 0 THEN chr(58) || 'head' ELSE '' END) END;
SQL
  sql_enqueue=$(pgbench_tps -M prepared -n -c 1 -T 10 -f "$work/enqueue.sql")
  psql_ -c "DROP SEQUENCE bench_uid_seq"
  cycles=$(engine_cycle_tps)
  # The same cycle at the size claims ahead reach (jobs.claim-ahead-max, 500): the ceiling the
  # drain with claims ahead is held to (ratio = that drain / this ceiling).
  cycles500=$(engine_cycle_tps 500 200)
  # The same cycle at 500 on a row with two index entries: every index of jobs dropped but the
  # primary key and (kind, status, uid), which the cycle's claim walks. What the database does
  # for a leaner row, beside what it does for ours (a pending row of ours carries eight index
  # entries, and each status change writes new ones). Last: it changes the schema.
  local index
  for index in $(psql_ -At -c "SELECT indexname FROM pg_indexes WHERE tablename = 'jobs'
                                  AND indexname NOT IN ('jobs_pkey', 'jobs_kind_status_idx')"); do
    psql_ -c "DROP INDEX $index"
  done
  cycles500lean=$(engine_cycle_tps 500 200)
  python3 - "$out/engine.jsonl" "$ref_tps" "$sql_enqueue" "$cycles" "$cycles500" "$cycles500lean" <<'PY'
import json, sys
path, ref, enq, cycles, cycles500, lean = sys.argv[1], *map(float, sys.argv[2:7])
ahead = next((json.loads(l)["value"] for l in open(path)
              if json.loads(l)["measure"] == "drain_noop_max_concurrent_10"), None)
with open(path, "a") as f:
    f.write(json.dumps({"measure": "pgbench_engine_enqueue_statement", "value": round(enq, 2), "unit": "tps", "ratio": round(enq / ref, 2)}) + "\n")
    f.write(json.dumps({"measure": "pgbench_engine_drain_cycles_of_10", "value": round(cycles * 10, 2), "unit": "jobs/s", "ratio": round(cycles * 10 / ref, 2)}) + "\n")
    line = {"measure": "pgbench_engine_drain_cycles_of_500", "value": round(cycles500 * 500, 2), "unit": "jobs/s"}
    if ahead:
        line["ratio"] = round(ahead / (cycles500 * 500), 2)
    f.write(json.dumps(line) + "\n")
    # The ratio here is this cycle over ours: what two index entries a row would buy.
    f.write(json.dumps({"measure": "pgbench_engine_drain_cycles_of_500_two_indexes", "value": round(lean * 500, 2),
                        "unit": "jobs/s", "ratio": round(lean / cycles500, 2)}) + "\n")
PY

  print_results "$out/engine.jsonl"
}

suite_http() {
  # Durations and sizes; the defaults are the documented run, smaller values suit development.
  local seconds=${BENCH_SECONDS:-60}             # load phase
  local pollers=${BENCH_POLLERS:-200}
  local rate=${BENCH_ENQUEUE_RATE:-50}           # enqueues per second during the load phase
  local job_sleep_ms=${BENCH_JOB_SLEEP_MS:-2000} # how long each enqueued noop job runs
  local tput_seconds=${BENCH_THROUGHPUT_SECONDS:-15}
  local artifact_bytes=${BENCH_ARTIFACT_BYTES:-1073741824}
  local downloads=${BENCH_DOWNLOADS:-5}

  apt_need wrk wrk
  apt_need nginx-light /usr/sbin/nginx
  apt_need curl curl
  apt_need openssl openssl

  local load_before
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  rm -f "$out/http.jsonl"
  start_app http
  # CPU time the app has used so far, in clock ticks (utime + stime).
  app_ticks() { awk '{print $14 + $15}' "/proc/$app_pid/stat"; }
  local tick
  tick=$(getconf CLK_TCK)
  api() { curl -fsS -H "Authorization: Bearer $token" "$@"; }
  json_field() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]] or "")' "$1"; }
  # A short unmeasured warm-up, so the load phase does not time the JIT compiler.
  python3 bench/http_load.py --port "$app_port" --token-file "$keys/token" --seconds 5 \
    --pollers 20 --rate 20 --sleep-ms 100 >"$out/http-warmup.json"
  await_drained 30

  # 1. Load: pollers following jobs plus paced enqueues.
  echo "bench: load, $pollers pollers + $rate enqueues/s for ${seconds}s" >&2
  local done_before load_ticks
  done_before=$(psql_ -At -c "SELECT count(*) FROM jobs WHERE status = 'done'")
  load_ticks=$(app_ticks)
  python3 bench/http_load.py --port "$app_port" --token-file "$keys/token" --seconds "$seconds" \
    --pollers "$pollers" --rate "$rate" --sleep-ms "$job_sleep_ms" >"$out/http-load.json"
  load_ticks=$(($(app_ticks) - load_ticks))
  local done_in_window
  done_in_window=$(($(psql_ -At -c "SELECT count(*) FROM jobs WHERE status = 'done'") - done_before))
  await_drained 60

  # 1b. Pickup from the HTTP request: 200 single enqueues 20 ms apart on one connection (after 20
  # unmeasured), from the moment each request is sent to the start of its job's process.
  echo "bench: pickup over HTTP, 200 enqueues 20 ms apart" >&2
  python3 bench/http_pickup.py --port "$app_port" --token-file "$keys/token" >"$work/pickup.csv"
  await_drained 30
  local pickup
  pickup=$(pickup_figures "$work/pickup.csv")

  # 2. Status GET throughput: 8 keep-alive connections over done jobs, against PostgreSQL alone
  # selecting the same rows by primary key with 8 clients.
  echo "bench: status GET throughput, ${tput_seconds}s each for the app and pgbench" >&2
  psql_ -c "CREATE TABLE bench_uids AS SELECT row_number() OVER (ORDER BY uid)::int AS i, uid FROM jobs WHERE status = 'done'" \
    -c "ALTER TABLE bench_uids ADD PRIMARY KEY (i)" -c "VACUUM ANALYZE bench_uids" -c "VACUUM ANALYZE jobs"
  psql_ -At -c "SELECT uid FROM bench_uids ORDER BY i" >"$work/uids.txt"
  local uid_count
  uid_count=$(wc -l <"$work/uids.txt")
  wrk -t 2 -c 8 -d 3s -H "Authorization: Bearer $token" -s bench/http_status.lua "$base" -- "$work/uids.txt" >/dev/null
  local tput_ticks
  tput_ticks=$(app_ticks)
  wrk -t 2 -c 8 -d "${tput_seconds}s" --latency -H "Authorization: Bearer $token" \
    -s bench/http_status.lua "$base" -- "$work/uids.txt" >"$out/http-wrk.txt"
  tput_ticks=$(($(app_ticks) - tput_ticks))
  printf '\\set k random(1, %d)\nSELECT * FROM jobs WHERE uid = (SELECT uid FROM bench_uids WHERE i = :k);\n' \
    "$uid_count" >"$work/select.sql"
  local select_tps
  select_tps=$(pgbench_tps -M prepared -n -c 8 -j 2 -T "$tput_seconds" -f "$work/select.sql")

  # 3. Download: one artifact through the app (signed link, sendfile) and through nginx.
  echo "bench: download of $artifact_bytes bytes, $downloads times each from the app and nginx" >&2
  local uid status_json download_url="" waited=0
  uid=$(api -H 'Content-Type: application/json' -d "{\"artifact_bytes\": $artifact_bytes}" "$base/api/noop" | json_field uid)
  while [ -z "$download_url" ]; do
    status_json=$(api "$base/api/jobs/$uid")
    case "$(json_field status <<<"$status_json")" in
      done) download_url=$(json_field download_url <<<"$status_json") ;;
      failed) echo "bench: the artifact job failed: $status_json" >&2; exit 1 ;;
      *) [ "$waited" -lt 600 ] || { echo "bench: the artifact job took over 300 s" >&2; exit 1; }
         sleep 0.5; waited=$((waited + 1)) ;;
    esac
  done
  local folder="$data/artifacts/noop/$uid" nginx_port
  [ -f "$folder/noop.txt" ] || { echo "bench: no artifact at $folder/noop.txt" >&2; exit 1; }
  nginx_port=$(free_port)
  mkdir -p "$work/nginx"
  cat >"$work/nginx/nginx.conf" <<CONF
user $(id -un);
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 64; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  default_type application/octet-stream;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fastcgi;
  uwsgi_temp_path $work/nginx/uwsgi;
  scgi_temp_path $work/nginx/scgi;
  server {
    listen 127.0.0.1:$nginx_port;
    root $folder;
  }
}
CONF
  /usr/sbin/nginx -p "$work/nginx" -e "$work/nginx/error.log" -c "$work/nginx/nginx.conf" &
  started+=("$!")
  waited=0
  until curl -fsS -o /dev/null -r 0-0 "http://127.0.0.1:$nginx_port/noop.txt" 2>/dev/null; do
    [ "$waited" -lt 100 ] || { echo "bench: nginx did not start:" >&2; cat "$work/nginx/error.log" >&2; exit 1; }
    sleep 0.1; waited=$((waited + 1))
  done
  # Prints bytes per second of one download of $1, failing unless it is a 200 of the whole file.
  fetch() {
    local result
    result=$(curl -sS -o /dev/null --max-time 120 -w '%{http_code} %{size_download} %{speed_download}' "$1")
    set -- $result
    if [ "$1" != 200 ] || [ "$2" != "$artifact_bytes" ]; then
      echo "bench: download answered $1 with $2 bytes" >&2
      return 1
    fi
    echo "$3"
  }
  : >"$work/app-speeds" && : >"$work/nginx-speeds"
  fetch "$base$download_url" >/dev/null # warm-up, unmeasured
  fetch "http://127.0.0.1:$nginx_port/noop.txt" >/dev/null
  local n
  for n in $(seq "$downloads"); do # interleaved, so drift hits both alike
    fetch "$base$download_url" >>"$work/app-speeds"
    fetch "http://127.0.0.1:$nginx_port/noop.txt" >>"$work/nginx-speeds"
  done
  paste "$work/app-speeds" "$work/nginx-speeds" | awk '{printf "app %.1f MB/s  nginx %.1f MB/s\n", $1 / 1e6, $2 / 1e6}' \
    >"$out/http-downloads.txt"

  python3 - "$out/http.jsonl" "$out/http-load.json" "$done_in_window" "$out/http-wrk.txt" "$select_tps" \
    "$work/app-speeds" "$work/nginx-speeds" "$load_ticks" "$tput_ticks" "$tick" <<'PY'
import json, re, statistics, sys
path, load_path, done_in_window, wrk_path, select_tps, app_speeds, nginx_speeds = sys.argv[1:8]
load_cpu_s, tput_cpu_s = (int(t) / int(sys.argv[10]) for t in sys.argv[8:10])
load = json.load(open(load_path))
wrk = open(wrk_path).read()

def wrk_ms(label):
    m = re.search(r"^\s*" + label + r"%\s+([\d.]+)(us|ms|s)\s*$", wrk, re.M)
    return float(m.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[m.group(2)]

app_rps = float(re.search(r"Requests/sec:\s+([\d.]+)", wrk).group(1))
app_requests = int(re.search(r"(\d+) requests in", wrk).group(1))
non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", wrk)
sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", wrk)
wrk_errors = (int(non2xx.group(1)) if non2xx else 0) + (sum(map(int, sock.groups())) if sock else 0)
select_tps = float(select_tps)
app_mb = statistics.median(float(l) for l in open(app_speeds) if l.strip()) / 1e6
nginx_mb = statistics.median(float(l) for l in open(nginx_speeds) if l.strip()) / 1e6

rows = [
    ("load_requests", load["requests"], "count"),
    ("load_errors", load["errors"], "count"),
    ("load_status_get_p50", load["get_p50_ms"], "ms"),
    ("load_status_get_p99", load["get_p99_ms"], "ms"),
    ("load_enqueue_p50", load["enqueue_p50_ms"], "ms"),
    ("load_enqueue_p99", load["enqueue_p99_ms"], "ms"),
    ("load_jobs_enqueued", load["jobs_enqueued"], "count"),
    ("load_jobs_completed", int(done_in_window), "count"),
    ("load_request_rate", load["request_rate"], "req/s"),
    ("load_generator_send_lag_p99", load["send_lag_p99_ms"], "ms"),
    ("load_generator_cpu", load["generator_cpu_percent_of_one_core"], "%core"),
    ("load_app_cpu", round(100 * load_cpu_s / load["seconds"], 1), "%core"),
    ("pgbench_select_jobs_by_uid", round(select_tps, 2), "tps"),
    ("status_get_throughput", round(app_rps, 2), "req/s", round(app_rps / select_tps, 2)),
    ("status_get_throughput_errors", wrk_errors, "count"),
    ("status_get_p50", round(wrk_ms("50"), 2), "ms"),
    ("status_get_p99", round(wrk_ms("99"), 2), "ms"),
    ("status_get_app_cpu_per_request", round(tput_cpu_s / app_requests * 1e6, 1), "us"),
    ("nginx_download_1gib", round(nginx_mb, 1), "MB/s"),
    ("app_download_1gib", round(app_mb, 1), "MB/s", round(app_mb / nginx_mb, 2)),
]
with open(path, "w") as f:
    for row in rows:
        r = {"measure": row[0], "value": row[1], "unit": row[2]}
        if len(row) > 3:
            r["ratio"] = row[3]
        f.write(json.dumps(r) + "\n")
if load["error_kinds"]:
    print("load errors by kind:", json.dumps(load["error_kinds"]), file=sys.stderr)
PY
  # shellcheck disable=SC2086 # five fields: p50, p99, samples, and the p50 of the two parts
  python3 - "$out/http.jsonl" $pickup <<'PY'
import json, sys
path, p50, p99, samples, to_insert, to_process = sys.argv[1:7]
with open(path, "a") as f:
    f.write(json.dumps({"measure": "pickup_p50_from_http_request", "value": float(p50), "unit": "ms", "samples": int(samples)}) + "\n")
    f.write(json.dumps({"measure": "pickup_p99_from_http_request", "value": float(p99), "unit": "ms", "samples": int(samples)}) + "\n")
    # The two parts (see pickup_figures).
    f.write(json.dumps({"measure": "pickup_p50_http_request_to_insert", "value": float(to_insert), "unit": "ms"}) + "\n")
    f.write(json.dumps({"measure": "pickup_p50_insert_to_process", "value": float(to_process), "unit": "ms"}) + "\n")
PY

  echo "Machine: $(nproc) cores shared by the load generators (python3, wrk, pgbench, curl), the app and PostgreSQL."
  echo "         Load average before the run: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews every figure)."
  echo "Load: $pollers pollers at 1 GET/s each + $rate POST /api/noop/s (sleep_ms $job_sleep_ms) for ${seconds}s;"
  echo "      latencies from when each request was due; ratio of status GET = app / pgbench; of download = app / nginx."
  echo
  print_results "$out/http.jsonl"
}

suite_zip() {
  local mib=${BENCH_ZIP_MIB:-1024}      # size of the generated tree
  local rounds=${BENCH_ZIP_ROUNDS:-3}   # timed runs of each archiver, alternating; the median counts

  apt_need zip zip
  apt_need unzip unzip
  apt_need curl curl
  apt_need openssl openssl
  local load_before
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  rm -f "$out/zip.jsonl"
  BENCH_APP_ENV="${BENCH_APP_ENV:-} JOBS_SERVICES_ZIP_JOB_TIMEOUT_SECONDS=3600" start_app zip
  local home="$data/files/user/bench-user"
  mkdir -p "$home"
  python3 bench/make_tree.py "$home/tree" --mib "$mib" >"$out/zip-tree.txt"
  sync

  api() { curl -fsS -H "Authorization: Bearer $token" "$@"; }
  # One archive through the service: from the POST until the status says done, in seconds.
  ours() {
    local t0 uid status
    t0=$(date +%s.%N)
    uid=$(api -X POST "$base/api/zip" -H 'Content-Type: application/json' -d '{"paths": ["tree"]}' \
      | python3 -c 'import json, sys; print(json.load(sys.stdin)["uid"])')
    while :; do
      status=$(api "$base/api/jobs/$uid" | python3 -c 'import json, sys; print(json.load(sys.stdin)["status"])')
      [ "$status" = done ] && break
      [ "$status" = failed ] && { api "$base/api/jobs/$uid" >&2; exit 1; }
      sleep 0.05
    done
    echo "$(date +%s.%N) - $t0" | bc -l >>"$work/ours.times"
    echo "$data/artifacts/zip/$uid/archive.zip" >"$work/ours.path"
  }
  # The same tree with Info-ZIP's zip at level 6, from the same folder, so the entry names match.
  reference() {
    local t0
    rm -f "$work/ref.zip"
    t0=$(date +%s.%N)
    (cd "$home" && zip -q -r -6 "$work/ref.zip" tree)
    echo "$(date +%s.%N) - $t0" | bc -l >>"$work/ref.times"
  }
  apt_need bc bc
  : >"$work/ours.times"
  : >"$work/ref.times"
  for _ in $(seq 1 "$rounds"); do
    ours
    reference
  done
  unzip -tq "$(cat "$work/ours.path")" >"$out/zip-unzip-t.txt"
  unzip -tq "$work/ref.zip" >>"$out/zip-unzip-t.txt"

  python3 - "$out/zip.jsonl" "$work/ours.times" "$work/ref.times" "$(cat "$work/ours.path")" "$work/ref.zip" "$mib" <<'PY'
import json, os, statistics, sys
path, ours_t, ref_t, ours_zip, ref_zip, mib = sys.argv[1:]
ours = statistics.median(float(x) for x in open(ours_t).read().split())
ref = statistics.median(float(x) for x in open(ref_t).read().split())
ours_size, ref_size = os.path.getsize(ours_zip), os.path.getsize(ref_zip)
rows = [
    ("zip_r6_seconds", round(ref, 2), "s"),
    ("service_zip_seconds", round(ours, 2), "s", round(ref / ours, 2)),
    ("zip_r6_mib_per_s", round(int(mib) / ref, 1), "MiB/s"),
    ("service_zip_mib_per_s", round(int(mib) / ours, 1), "MiB/s"),
    ("zip_r6_archive_bytes", ref_size, "bytes"),
    ("service_archive_bytes", ours_size, "bytes", round(ours_size / ref_size, 4)),
]
with open(path, "w") as f:
    for row in rows:
        r = {"measure": row[0], "value": row[1], "unit": row[2]}
        if len(row) > 3:
            r["ratio"] = row[3]
        f.write(json.dumps(r) + "\n")
PY
  echo "Machine: $(nproc) cores shared by the app, PostgreSQL and zip. Load average before: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Tree: $(cat "$out/zip-tree.txt"); $rounds timed runs of each, alternating, medians."
  echo "Ratios: service_zip_seconds = zip time / service time (target >= 1.5); archive = service size / zip size (target within 2%)."
  echo
  print_results "$out/zip.jsonl"
}

suite_memory() {
  local mib=${BENCH_MEMORY_TREE_MIB:-512}  # size of the tree zipped and searched
  local seconds=${BENCH_SECONDS:-30}       # HTTP load phase
  # The heap the container image gives the JVM under the Deployment's limit (MaxRAMPercentage).
  local heap=${BENCH_MEMORY_HEAP:-512m}

  apt_need curl curl
  apt_need openssl openssl
  local limit_mib
  limit_mib=$(python3 - <<'PY'
import re
text = open("k8s/base/deployment.yaml").read()
limits = text[text.index("limits:"):]
value = re.search(r"memory:\s*(\d+)(Mi|Gi)", limits)
print(int(value.group(1)) * (1024 if value.group(2) == "Gi" else 1))
PY
)
  rm -f "$out/memory.jsonl"
  BENCH_JAVA_OPTS="-Xmx$heap ${BENCH_JAVA_OPTS:-}" \
    BENCH_APP_ENV="${BENCH_APP_ENV:-} JOBS_SERVICES_ZIP_JOB_TIMEOUT_SECONDS=3600" start_app memory
  # Resident and peak resident memory of the app, in MiB.
  rss() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$app_pid/status"; }
  peak() { awk '/^VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$app_pid/status"; }
  api() { curl -fsS -H "Authorization: Bearer $token" "$@"; }
  # Runs one job from its JSON body until done, at most 30 minutes.
  job() {
    local uid status waited=0
    uid=$(api -X POST "$base/api/$1" -H 'Content-Type: application/json' -d "$2" \
      | python3 -c 'import json, sys; print(json.load(sys.stdin)["uid"])')
    while :; do
      status=$(api "$base/api/jobs/$uid" | python3 -c 'import json, sys; print(json.load(sys.stdin)["status"])')
      [ "$status" = done ] && break
      if [ "$status" = failed ] || [ "$waited" -ge 18000 ]; then api "$base/api/jobs/$uid" >&2; exit 1; fi
      sleep 0.1
      waited=$((waited + 1))
    done
  }
  local rows="$work/memory.rows"
  : >"$rows"
  row() { echo "$1 $2" >>"$rows"; }

  row idle_rss_mib "$(rss)"
  echo "bench: memory under load, 200 pollers + 50 enqueues/s for ${seconds}s" >&2
  python3 bench/http_load.py --port "$app_port" --token-file "$keys/token" --seconds "$seconds" \
    --pollers 200 --rate 50 --sleep-ms 500 >"$out/memory-load.json"
  row load_peak_rss_mib "$(peak)"

  local home="$data/files/user/bench-user"
  mkdir -p "$home"
  python3 bench/make_tree.py "$home/tree" --mib "$mib" >"$out/memory-tree.txt"
  echo "bench: memory zipping and searching $(cat "$out/memory-tree.txt")" >&2
  job zip '{"paths": ["tree"]}'
  row zip_peak_rss_mib "$(peak)"
  job deepsearch '{"root": "tree", "query": "archive OR (lease AND replica) OR snippet"}'
  row deepsearch_peak_rss_mib "$(peak)"
  row after_rss_mib "$(rss)"

  python3 - "$out/memory.jsonl" "$rows" "$limit_mib" <<'PY'
import json, sys
path, rows, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
with open(path, "w") as f:
    f.write(json.dumps({"measure": "deployment_memory_limit_mib", "value": limit, "unit": "MiB"}) + "\n")
    for line in open(rows):
        measure, value = line.split()
        r = {"measure": measure, "value": float(value), "unit": "MiB"}
        if "peak" in measure:
            r["ratio"] = round(float(value) / limit, 2)
        f.write(json.dumps(r) + "\n")
PY
  echo "Machine: $(nproc) cores. JVM heap -Xmx$heap; peaks are the process's VmHWM, so each includes the phases before it."
  echo "Ratios: peak resident memory / the Deployment's memory limit (must stay below 1; aim for at most 0.75)."
  echo
  print_results "$out/memory.jsonl"
}

suite_scale() {
  local small=${BENCH_SCALE_SMALL:-10000} large=${BENCH_SCALE_LARGE:-10000000}
  local sweep_rows=${BENCH_SCALE_SWEEP:-1000000} drain_jobs=${BENCH_SCALE_DRAIN:-5000}
  apt_need curl curl
  apt_need openssl openssl
  rm -f "$out/scale.jsonl" "$out/scale-sizes.jsonl" "$out/scale-partition.jsonl"
  BENCH_APP_ENV="JOBS_SERVICES_NOOP_MAX_CONCURRENT=64 ${BENCH_APP_ENV:-}" start_app scale
  local tick
  tick=$(getconf CLK_TCK)
  # CPU ticks (utime + stime) of every PostgreSQL process.
  pg_ticks() {
    local total=0 pid
    for pid in $(pgrep -f "postgres" || true); do
      [ -r "/proc/$pid/stat" ] && total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
    done
    echo "$total"
  }
  # Waits until $1 (a count query) reads 0, at most $2 seconds; prints the seconds it took.
  wait_zero() {
    python3 - "$1" "$2" "$pg_port" "$PG_BIN/psql" <<'PY'
import subprocess, sys, time
query, limit, port, psql = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
start = time.monotonic()
while True:
    n = subprocess.run([psql, "-At", "-h", "127.0.0.1", "-p", port, "-U", "postgres", "-d", "postgres",
                        "-c", query], capture_output=True, text=True, check=True).stdout.strip()
    if n == "0":
        print(round(time.monotonic() - start, 3))
        break
    if time.monotonic() - start > limit:
        sys.exit(f"bench: {query} still reads {n} after {limit} s")
    time.sleep(0.2)
PY
  }
  # Adds $2 finished jobs starting at number $1: six kinds, a thousand owners (bench-user among
  # them), a payload and a result of some 200 bytes each, time-ordered uids; the last
  # BENCH_SCALE_LAST_HOUR (6,000) finished within the last hour at both sizes, the rest over the
  # week before it, so the sizes differ in history only. Written in chunks of a million.
  fill() {
    local from=$1 count=$2 chunk total=$(($1 + $2)) recent=${BENCH_SCALE_LAST_HOUR:-6000}
    [ "$recent" -le "$count" ] || recent=$count
    while [ "$count" -gt 0 ]; do
      chunk=$((count < 1000000 ? count : 1000000))
      psql_ -c "INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, result, error,
                  created_at, started_at, completed_at, updated_at, duration_ms, expires_at,
                  bytes_in, bytes_out, item_count, epoch)
                SELECT (lpad(to_hex((extract(epoch FROM t) * 1000)::bigint), 12, '0')
                        || substr(md5(i::text), 1, 20))::uuid,
                       (ARRAY['zip', 'fork', 'seo', 'deepsearch', 'seo_meta', 'noop'])[1 + i % 6],
                       CASE WHEN i % 50 = 0 THEN 'failed' ELSE 'done' END,
                       'user', CASE WHEN i % 100 = 0 THEN 'bench-user' ELSE 'owner-' || (i % 1000) END,
                       jsonb_build_object('paths', jsonb_build_array('/data/files/user/owner/projects/' || i,
                         '/data/files/user/owner/assets/' || (i % 977)), 'name', 'archive-' || i,
                         'exclude', jsonb_build_array('*.tmp', '*.log', 'node_modules')),
                       CASE WHEN i % 50 = 0 THEN NULL ELSE jsonb_build_object('file',
                         'artifacts/zip/' || i || '/archive.zip', 'files', i % 4000, 'bytes_out',
                         (i % 100000) * 37) END,
                       CASE WHEN i % 50 = 0 THEN 'IOException: No space left on device' END,
                       t, t, t + interval '2 seconds', t + interval '2 seconds', 2000 + i % 500,
                       t + interval '14 days', 1000 + i % 7, 2000 + i % 11, 10, 1
                  FROM generate_series($from + 1, $from + $chunk) AS i,
                       LATERAL (SELECT CASE WHEN i > $total - $recent
                                            THEN now() - interval '1 hour'
                                                 + (i - ($total - $recent)) * (interval '1 hour' / $recent)
                                            ELSE now() - interval '7 days' - interval '1 hour'
                                                 + (i - $from) * (interval '7 days' / $chunk) END) AS g(t)" >/dev/null
      from=$((from + chunk))
      count=$((count - chunk))
    done
  }
  local gauges_sql
  gauges_sql=$(python3 - <<'PY'
import re
src = open("src/main/java/io/asyncjobs/queue/QueueDepths.java").read()
m = re.search(r'JOB_COUNT_BY_KIND_AND_STATUS =\s*"""(.*?)"""', src, re.S)
print(" ".join(m.group(1).split()) + ";")
PY
)
  echo "$gauges_sql" >"$work/gauges.sql"

  # Warm-up, unmeasured: a drain and the probes on a small table, so the first size measured does
  # not time the JIT compiler.
  fill 0 2000
  psql_ -At -c "SELECT uid FROM jobs WHERE owner_id = 'bench-user'" >"$work/uids.txt"
  psql_ -c "INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, created_at, updated_at, expires_at)
            SELECT (lpad(to_hex((extract(epoch FROM now()) * 1000)::bigint), 12, '0')
                    || substr(md5('warm' || i), 1, 20))::uuid, 'noop', 'pending', 'user', 'bench-user',
                   '{}', now(), now(), now() + interval '7 days' FROM generate_series(1, $drain_jobs) AS i;
            NOTIFY jobs_enqueued, 'noop'" >/dev/null
  wait_zero "SELECT count(*) FROM jobs WHERE status IN ('pending', 'running')" 600 >/dev/null
  python3 bench/scale_probe.py --port "$app_port" --token-file "$keys/token" \
    --admin-token-file "$keys/admin-token" --uids "$work/uids.txt" >/dev/null

  local size label
  for label in small large; do
    size=$([ "$label" = small ] && echo "$small" || echo "$large")
    echo "bench: $label table, $size finished jobs" >&2
    psql_ -c "TRUNCATE jobs" >/dev/null
    local fill_start=$SECONDS
    fill 0 "$size"
    psql_ -c "VACUUM ANALYZE jobs" >/dev/null
    echo "bench: filled and vacuumed in $((SECONDS - fill_start)) s" >&2
    psql_ -At -c "SELECT uid FROM jobs WHERE owner_id = 'bench-user' ORDER BY md5(uid::text) LIMIT 5000" >"$work/uids.txt"
    sleep 3 # let the app's next ticks see the new table

    # The queue gauges' statement as the app prepares it, one client.
    local gauges_tps
    gauges_tps=$(pgbench_tps -M prepared -n -c 1 -T 5 -f "$work/gauges.sql")
    # HTTP: status GET, service cards, an owner's listing.
    python3 bench/scale_probe.py --port "$app_port" --token-file "$keys/token" \
      --admin-token-file "$keys/admin-token" --uids "$work/uids.txt" >"$work/probe-$label.json"
    # The idle database: the app ticking with nothing to do, 20 s.
    local before_ticks idle_ticks
    before_ticks=$(pg_ticks)
    sleep 20
    idle_ticks=$(($(pg_ticks) - before_ticks))
    # Drain, BENCH_SCALE_DRAIN_ROUNDS (5) times: pending noop jobs inserted at once, timed until
    # none is pending or running. Each drain steps over what the ones before left for autovacuum.
    # The median round and the slowest one are reported.
    local drain_s="" drain_one round
    for round in $(seq 1 "${BENCH_SCALE_DRAIN_ROUNDS:-5}"); do
    psql_ -c "INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, created_at, updated_at, expires_at)
              SELECT (lpad(to_hex((extract(epoch FROM now()) * 1000)::bigint), 12, '0')
                      || substr(md5('drain$round-' || i), 1, 20))::uuid, 'noop', 'pending', 'user', 'bench-user',
                     '{}', now(), now(), now() + interval '7 days'
                FROM generate_series(1, $drain_jobs) AS i;
              NOTIFY jobs_enqueued, 'noop'" >/dev/null
    drain_one=$(wait_zero "SELECT count(*) FROM jobs WHERE status IN ('pending', 'running')" 600)
    drain_s="$drain_s${drain_s:+,}$drain_one"
    done
    local vacuum_stats
    vacuum_stats=$(psql_ -At -F ' ' -c "SELECT n_dead_tup, autovacuum_count FROM pg_stat_user_tables WHERE relname = 'jobs'")
    # Sweep: expired noop jobs added at once, timed until none is left.
    local swept
    swept=$([ "$label" = small ] && echo $((sweep_rows < size ? sweep_rows : size)) || echo "$sweep_rows")
    psql_ -c "INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, result, created_at,
                started_at, completed_at, updated_at, duration_ms, expires_at, epoch)
              SELECT (lpad(to_hex((extract(epoch FROM now() - interval '8 days') * 1000)::bigint), 12, '0')
                      || substr(md5('sweep' || i), 1, 20))::uuid, 'noop', 'done', 'user', 'owner-' || (i % 1000),
                     '{}', '{\"slept_ms\": 0}', now() - interval '8 days', now() - interval '8 days',
                     now() - interval '8 days', now() - interval '8 days', 1, now() - interval '1 day', 1
                FROM generate_series(1, $swept) AS i" >/dev/null
    local sweep_s
    sweep_s=$(wait_zero "SELECT count(*) FROM jobs WHERE kind = 'noop' AND status IN ('done', 'failed') AND expires_at <= now()" 3600)
    # Sweep with files: expired noop jobs whose artifact folders hold a 4 KiB file each, as a kind
    # whose cleanup deletes files finds them.
    local file_jobs=${BENCH_SCALE_SWEEP_FILES:-20000}
    psql_ -At -c "INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, result, created_at,
                started_at, completed_at, updated_at, duration_ms, expires_at, epoch)
              SELECT gen_random_uuid(), 'noop', 'done', 'user', 'bench-files', '{}', '{}',
                     now() - interval '8 days', now() - interval '8 days', now() - interval '8 days',
                     now() - interval '8 days', 1, now() + interval '1 hour', 1
                FROM generate_series(1, $file_jobs) RETURNING uid" >"$work/file-uids.txt"
    python3 - "$data" "$work/file-uids.txt" <<'PY'
import os, sys
root, uids = sys.argv[1], sys.argv[2]
block = b"x" * 4096
for uid in open(uids):
    uid = uid.strip()
    if uid:
        folder = os.path.join(root, "artifacts", "noop", uid)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "noop.txt"), "wb") as f:
            f.write(block)
PY
    sync
    psql_ -c "UPDATE jobs SET expires_at = now() - interval '1 day' WHERE owner_kind = 'user' AND owner_id = 'bench-files'" >/dev/null
    local files_s files_left
    files_s=$(wait_zero "SELECT count(*) FROM jobs WHERE kind = 'noop' AND status IN ('done', 'failed') AND expires_at <= now()" 3600)
    files_left=$(find "$data/artifacts/noop" -name noop.txt 2>/dev/null | wc -l)
    [ "$files_left" -le 0 ] || { echo "bench: $files_left artifact files left after the sweep" >&2; exit 1; }
    echo "$file_jobs $files_s" >"$work/files-$label.txt"
    python3 - "$out/scale-sizes.jsonl" "$label" "$size" "$gauges_tps" "$work/probe-$label.json" \
      "$idle_ticks" "$tick" "$drain_jobs" "$drain_s" "$swept" "$sweep_s" "$vacuum_stats" <<'PY'
import json, statistics, sys
(path, label, size, gauges_tps, probe, idle_ticks, tick, drain_jobs, drain_s, swept, sweep_s,
 vacuum_stats) = sys.argv[1:]
drains = [int(drain_jobs) / max(float(s), 0.001) for s in drain_s.split(",")]
dead, autovacuums = (int(v) for v in vacuum_stats.split())
file_jobs, files_s = open(probe.replace("probe-", "files-").replace(".json", ".txt")).read().split()
row = json.load(open(probe))
row.update({
    "label": label, "rows": int(size),
    "gauges_ms": round(1000.0 / float(gauges_tps), 3),
    "idle_db_cpu_percent": round(100.0 * int(idle_ticks) / int(tick) / 20.0, 2),
    "drain_jobs_per_s": round(statistics.median(drains), 1),
    "drain_slowest_jobs_per_s": round(min(drains), 1),
    "dead_rows": dead, "autovacuums": autovacuums,
    "sweep_files_rows_per_s": round(int(file_jobs) / max(float(files_s), 0.001), 1),
    "sweep_rows": int(swept),
    "sweep_rows_per_s": round(int(swept) / max(float(sweep_s), 0.001), 1),
})
with open(path, "a") as f:
    f.write(json.dumps(row) + "\n")
PY
  done

  # Partitioning by expiry, tried on a copy of the large table: what a dropped partition saves
  # against the sweep, and what every status GET by uid would pay. BENCH_SCALE_PARTITION=0 skips.
  if [ "${BENCH_SCALE_PARTITION:-1}" = 1 ]; then
    echo "bench: partitioning experiment on a copy of the large table" >&2
    psql_ -c "CREATE TABLE jobs_part (LIKE jobs INCLUDING DEFAULTS) PARTITION BY RANGE (expires_at)" \
      -c "DO \$\$ DECLARE d date; BEGIN
            FOR d IN SELECT generate_series(date_trunc('day', min(expires_at)), max(expires_at), interval '1 day')::date FROM jobs LOOP
              EXECUTE format('CREATE TABLE jobs_part_%s PARTITION OF jobs_part FOR VALUES FROM (%L) TO (%L)',
                             to_char(d, 'YYYYMMDD'), d, d + 1);
            END LOOP; END \$\$" \
      -c "INSERT INTO jobs_part SELECT * FROM jobs" \
      -c "CREATE INDEX ON jobs_part (uid)" -c "VACUUM ANALYZE jobs_part" >/dev/null
    local partitions part_rows
    partitions=$(psql_ -At -c "SELECT count(*) FROM pg_inherits WHERE inhparent = 'jobs_part'::regclass")
    psql_ -c "CREATE TABLE bench_uids AS SELECT row_number() OVER ()::int AS i, uid FROM (SELECT uid FROM jobs ORDER BY md5(uid::text) LIMIT 20000) u" \
      -c "ALTER TABLE bench_uids ADD PRIMARY KEY (i)" >/dev/null
    printf '\\set k random(1, 20000)\nSELECT * FROM jobs WHERE uid = (SELECT uid FROM bench_uids WHERE i = :k);\n' >"$work/get-plain.sql"
    printf '\\set k random(1, 20000)\nSELECT * FROM jobs_part WHERE uid = (SELECT uid FROM bench_uids WHERE i = :k);\n' >"$work/get-part.sql"
    local plain_tps part_tps
    plain_tps=$(pgbench_tps -M prepared -n -c 1 -T 10 -f "$work/get-plain.sql")
    part_tps=$(pgbench_tps -M prepared -n -c 1 -T 10 -f "$work/get-part.sql")
    local oldest drop_ms
    oldest=$(psql_ -At -c "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'jobs_part'::regclass ORDER BY c.relname LIMIT 1")
    part_rows=$(psql_ -At -c "SELECT count(*) FROM $oldest")
    drop_ms=$(python3 - "$pg_port" "$PG_BIN/psql" "$oldest" <<'PY'
import subprocess, sys, time
port, psql, part = sys.argv[1:]
start = time.monotonic()
subprocess.run([psql, "-q", "-h", "127.0.0.1", "-p", port, "-U", "postgres", "-d", "postgres",
                "-c", f"ALTER TABLE jobs_part DETACH PARTITION {part}", "-c", f"DROP TABLE {part}"], check=True)
print(round((time.monotonic() - start) * 1000, 1))
PY
)
    psql_ -c "DROP TABLE jobs_part" -c "DROP TABLE bench_uids" >/dev/null
    python3 - "$out/scale-partition.jsonl" "$partitions" "$plain_tps" "$part_tps" "$part_rows" "$drop_ms" <<'PY'
import json, sys
path, partitions, plain, part, rows, drop_ms = sys.argv[1:]
with open(path, "w") as f:
    for r in [
        {"measure": "partitions_by_expiry_day", "value": int(partitions), "unit": "count"},
        {"measure": "get_by_uid_plain_table", "value": float(plain), "unit": "tps"},
        {"measure": "get_by_uid_partitioned", "value": float(part), "unit": "tps",
         "ratio": round(float(part) / float(plain), 2)},
        {"measure": "oldest_partition_rows", "value": int(rows), "unit": "rows"},
        {"measure": "oldest_partition_detach_and_drop", "value": float(drop_ms), "unit": "ms"},
    ]:
        f.write(json.dumps(r) + "\n")
PY
  fi

  python3 - "$out/scale-sizes.jsonl" "$out/scale.jsonl" <<'PY'
import json, sys
small, large = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rows = []
def both(name, key, unit):
    rows.append({"measure": f"{name}_small", "value": small[key], "unit": unit})
    ratio = large[key] / small[key] if small[key] else 0.0
    rows.append({"measure": f"{name}_large", "value": large[key], "unit": unit, "ratio": round(ratio, 2)})
both("queue_gauges_refresh", "gauges_ms", "ms")
both("service_cards_p50", "cards_p50_ms", "ms")
both("status_get_p50", "status_p50_ms", "ms")
both("status_get_p99", "status_p99_ms", "ms")
both("owner_listing_p50", "listing_p50_ms", "ms")
both("owner_listing_p99", "listing_p99_ms", "ms")
both("drain_noop_median", "drain_jobs_per_s", "jobs/s")
both("drain_noop_slowest_round", "drain_slowest_jobs_per_s", "jobs/s")
both("jobs_dead_rows_after_drains", "dead_rows", "rows")
both("jobs_autovacuums_by_then", "autovacuums", "count")
both("idle_database_cpu", "idle_db_cpu_percent", "%core")
both("sweep", "sweep_rows_per_s", "rows/s")
both("sweep_deleting_files", "sweep_files_rows_per_s", "rows/s")
with open(sys.argv[2], "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
PY
  echo "Machine: $(nproc) cores shared by the app, PostgreSQL and the probes. Rows: $small then $large finished jobs;"
  echo "ratio = large / small. Targets: latency ratios <= 1.5, drain ratio >= 0.8, service cards < 100 ms at the"
  echo "large size, idle database < 5 %core, sweep >= 5,000 rows/s. Sweep rows: $sweep_rows at the large size."
  echo
  print_results "$out/scale.jsonl"
  if [ -f "$out/scale-partition.jsonl" ]; then
    echo "Partitioning by expiry day, on a copy of the large table (ratio = partitioned / plain):"
    print_results "$out/scale-partition.jsonl"
  fi
}

# The larger suites live in files of their own, with the helpers above in scope.
case "$suite" in
  kinds) . bench/kinds.sh ;;
  peers) . bench/peers.sh ;;
  enqueue) . bench/enqueue.sh ;;
  shards) . bench/shards.sh ;;
  fairness) . bench/fairness.sh ;;
  native) . bench/native-suite.sh ;;
  migrations) . bench/migrations.sh ;;
  startup) . bench/startup.sh ;;
esac

"suite_$suite"
