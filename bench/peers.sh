# The peers suite: our engine beside the PostgreSQL job queues people know (graphile-worker,
# pg-boss polling and with NOTIFY, db-scheduler), on the same throwaway PostgreSQL, in one run.
# Sourced by bench/run.sh, whose helpers ($out, $work, $url, psql_, pgbench_tps, print_results,
# started, ...) it uses; bench/run.sh then calls suite_peers. See docs/benchmarks.md, "Peers suite".
#
# Every system runs as one long-lived process that serves rounds on command through files in a
# control folder (bench/peers/harness.mjs and src/test/java/io/asyncjobs/bench/peers/PeerHarness.java
# hold the measures and the protocol). Each system has a database of its own and starts every
# measure from a fresh schema; rounds rotate the order of the systems so that drift on the machine
# falls on each in turn.

peers_systems=(ours graphile-worker pg-boss pg-boss+notify db-scheduler)

# The database of a system: ours uses the server's own database (its migrations run at start),
# each peer one made for it.
peers_db() {
  case "$1" in
    ours) echo postgres ;;
    *) echo "peers_$(tr -c 'a-z\n' '_' <<<"$1")" ;;
  esac
}

# Fails the suite with the last lines of a system's log.
peers_fail() {
  echo "bench: $1; last lines of $out/peers-$2.log:" >&2
  tail -n 40 "$out/peers-$2.log" >&2
  exit 1
}

# Waits until the control file $2 of system $1 appears, at most $3 seconds, failing early when
# the system reports a failure or its process has gone.
peers_await() {
  local system=$1 file=$2 limit=$3 waited=0
  while [ ! -e "$file" ]; do
    local failed
    failed=$(ls "$peers_control/$system.failed-"* 2>/dev/null | head -n 1 || true)
    [ -z "$failed" ] || { cat "$failed" >&2; peers_fail "$system failed" "$system"; }
    kill -0 "${peers_pid[$system]}" 2>/dev/null || peers_fail "$system exited" "$system"
    [ "$waited" -lt $((limit * 10)) ] || peers_fail "$system took over $limit s" "$system"
    sleep 0.1
    waited=$((waited + 1))
  done
}

# Node 22 from the npm package `node`, pinned in bench/peers/node, cached under $out/node; puts it
# first on the PATH (npm then runs under it too).
peers_node() {
  local home="$PWD/$out/node" want
  want=$(python3 -c 'import json; print(json.load(open("bench/peers/node/package.json"))["dependencies"]["node"])')
  local bin="$home/node_modules/node/bin/node"
  if [ ! -x "$bin" ] || [ "$("$bin" --version)" != "v$want" ]; then
    echo "bench: installing Node $want (npm package node)" >&2
    rm -rf "$home" && mkdir -p "$home"
    cp bench/peers/node/package.json bench/peers/node/package-lock.json bench/peers/node/.npmrc "$home/"
    (cd "$home" && npm ci --no-audit --no-fund) >>"$out/peers-install.log" 2>&1 \
      || { tail -n 40 "$out/peers-install.log" >&2; exit 1; }
    [ -x "$bin" ] || { echo "bench: the node package left no $bin" >&2; exit 1; }
  fi
  PATH="$home/node_modules/node/bin:$PATH"
}

# The Node drivers' packages, installed from their lock files when those changed.
peers_npm() {
  local dir
  for dir in bench/peers/graphile-worker bench/peers/pg-boss; do
    if [ ! "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
      echo "bench: npm ci in $dir" >&2
      (cd "$dir" && npm ci --no-audit --no-fund) >>"$out/peers-install.log" 2>&1 \
        || { tail -n 40 "$out/peers-install.log" >&2; exit 1; }
    fi
  done
}

# Starts system $1 in the background, logging to $out/peers-$1.log.
peers_start() {
  local system=$1 db log="$out/peers-$1.log"
  db=$(peers_db "$system")
  local node_url="postgres://postgres@127.0.0.1:$pg_port/$db"
  case "$system" in
    ours)
      # Our engine in-process, as the engine suite runs it (EngineBenchmark), in its peers mode.
      ./mvnw -q -B test -Dtest=EngineBenchmark -Dsurefire.failIfNoSpecifiedTests=false \
        -Djobs.embedded-db.enabled=false \
        -Dquarkus.datasource.jdbc.url="$url" -Dquarkus.datasource.username=postgres \
        -Dquarkus.datasource.password= \
        -Dbench.mode=peers -Dbench.control="$peers_control" -Dbench.output="$peers_raw" \
        >"$log" 2>&1 &
      ;;
    graphile-worker)
      (cd bench/peers/graphile-worker && BENCH_PEERS_DATABASE_URL="$node_url" exec node driver.mjs) >"$log" 2>&1 &
      ;;
    pg-boss)
      (cd bench/peers/pg-boss && BENCH_PEERS_DATABASE_URL="$node_url" exec node driver.mjs) >"$log" 2>&1 &
      ;;
    pg-boss+notify)
      (cd bench/peers/pg-boss && BENCH_PEERS_DATABASE_URL="$node_url" exec node driver.mjs --notify) >"$log" 2>&1 &
      ;;
    db-scheduler)
      BENCH_PEERS_JDBC_URL="jdbc:postgresql://127.0.0.1:$pg_port/$db" \
        java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
        -cp "bench/peers/db-scheduler/target/classes:$(cat bench/peers/db-scheduler/target/classpath.txt)" \
        io.asyncjobs.bench.peers.DbSchedulerDriver >"$log" 2>&1 &
      ;;
  esac
  peers_pid[$system]=$!
  started+=("$!")
}

# Ours over HTTP: the packaged app on the suite's database, one caller on a keep-alive connection
# (wrk, after BENCH_PEERS_HTTP_WARMUP seconds unmeasured): one job per POST /api/noop and 1,000 per
# POST /api/noop/batch, each for BENCH_PEERS_ENQUEUE_SECONDS, with lock mode none, so that nothing
# is processed meanwhile (as the in-process enqueues, which no worker runs beside); then, with the
# app owning the queue (restarted, and warmed up as long again with the jobs processed), pickup
# from the HTTP request (bench/http_pickup.py, BENCH_PEERS_PICKUPS enqueues 20 ms apart). Appends
# its figures to the raw file as system ours-http, round 1.
peers_http() {
  local seconds=${BENCH_PEERS_ENQUEUE_SECONDS:-15} warmup=${BENCH_PEERS_HTTP_WARMUP:-10}
  local pickups=${BENCH_PEERS_PICKUPS:-200} label body path
  apt_need wrk wrk
  apt_need curl curl
  apt_need openssl openssl
  echo "bench: ours over HTTP, ${seconds}s one at a time and ${seconds}s in batches of 1,000" >&2
  printf '{"sleep_ms": 0}' >"$work/peers-one.json"
  python3 -c 'import json; print(json.dumps({"jobs": [{"payload": {"sleep_ms": 0}} for i in range(1000)]}))' \
    >"$work/peers-batch.json"
  BENCH_APP_ENV="JOBS_LOCK_MODE=none ${BENCH_APP_ENV:-}" start_app peers-http
  for label in one batch; do
    body="$work/peers-$label.json"
    path=/api/noop
    [ "$label" = one ] || path=/api/noop/batch
    psql_ -c "TRUNCATE jobs, job_finished_minutes"
    wrk -t 1 -c 1 -d "${warmup}s" -H "Authorization: Bearer $token" -s bench/http_enqueue.lua \
      "$base" -- "$body" "$path" >/dev/null
    psql_ -c "TRUNCATE jobs, job_finished_minutes"
    wrk -t 1 -c 1 -d "${seconds}s" --latency -H "Authorization: Bearer $token" -s bench/http_enqueue.lua \
      "$base" -- "$body" "$path" >"$out/peers-http-$label.txt"
  done
  stop_pid "$app_pid"

  echo "bench: ours over HTTP, pickup from the request" >&2
  psql_ -c "TRUNCATE jobs, job_finished_minutes, noop_executions"
  BENCH_SKIP_BUILD=1 start_app peers-http-pickup
  # A fresh JVM: the same warm-up as the enqueues, with the jobs processed this time.
  wrk -t 1 -c 1 -d "${warmup}s" -H "Authorization: Bearer $token" -s bench/http_enqueue.lua \
    "$base" -- "$work/peers-one.json" /api/noop >/dev/null
  await_drained 60
  python3 bench/http_pickup.py --port "$app_port" --token-file "$keys/token" --count "$pickups" \
    >"$work/peers-pickup.csv"
  await_drained 30
  local pickup
  pickup=$(pickup_figures "$work/peers-pickup.csv")
  stop_pid "$app_pid"

  # shellcheck disable=SC2086 # pickup_figures' fields: p50, p99, samples, then the two parts
  python3 - "$out" "$peers_raw" $pickup <<'PY'
import json, sys
sys.path.insert(0, "bench")
from wrk_figures import read
out, raw, p50, p99, samples = sys.argv[1:6]

def wrk(label):
    return read(f"{out}/peers-http-{label}.txt", f"ours over HTTP ({label})")[0]

line = lambda measure, value, unit, **more: json.dumps(
    {"system": "ours-http", "round": 1, "measure": measure, "value": round(value, 2), "unit": unit, **more})
with open(raw, "a") as f:
    f.write(line("enqueue_one_at_a_time", wrk("one"), "jobs/s") + "\n")
    f.write(line("enqueue_batches_of_1000", wrk("batch") * 1000, "jobs/s") + "\n")
    f.write(line("pickup_p50", float(p50), "ms", samples=int(samples)) + "\n")
    f.write(line("pickup_p99", float(p99), "ms", samples=int(samples)) + "\n")
PY
}

suite_peers() {
  local rounds=${BENCH_PEERS_ROUNDS:-3}
  local round_limit=${BENCH_PEERS_ROUND_TIMEOUT:-300} # seconds one system may take for one round
  apt_need npm npm
  local load_before suite_start=$SECONDS
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  declare -gA peers_pid=()
  peers_control="$work/peers"
  peers_raw="$PWD/$out/peers-raw.jsonl" # absolute: the Node drivers run in their own folders
  mkdir -p "$peers_control"
  rm -f "$peers_raw" "$out/peers.jsonl" "$out/peers-install.log"
  # Read by every driver: where the control files are and where the figures go.
  export BENCH_PEERS_CONTROL="$peers_control" BENCH_PEERS_OUTPUT="$peers_raw"

  local system
  for system in "${peers_systems[@]}"; do
    [ "$system" = ours ] || psql_ -c "CREATE DATABASE \"$(peers_db "$system")\""
  done
  # Ours first, since the Quarkus test start is the slowest; the peers install meanwhile.
  peers_start ours
  peers_node
  peers_npm
  echo "bench: building bench/peers/db-scheduler" >&2
  ./mvnw -q -B -f bench/peers/db-scheduler/pom.xml package dependency:build-classpath \
    -Dmdep.outputFile=target/classpath.txt >>"$out/peers-install.log" 2>&1 \
    || { tail -n 40 "$out/peers-install.log" >&2; exit 1; }
  for system in "${peers_systems[@]}"; do
    [ "$system" = ours ] || peers_start "$system"
  done
  for system in "${peers_systems[@]}"; do
    peers_await "$system" "$peers_control/$system.ready" 900
  done
  echo "bench: every system is up after $((SECONDS - suite_start)) s" >&2

  local round k n=${#peers_systems[@]}
  for round in $(seq 1 "$rounds"); do
    for k in $(seq 0 $((n - 1))); do
      system=${peers_systems[$(((round - 1 + k) % n))]}
      echo "bench: round $round/$rounds, $system" >&2
      echo "$round" >"$peers_control/$system.run"
      # A system's first round holds its warm-up drains too (BENCH_PEERS_WARMUP_DRAINS, 20 by
      # default, each bounded by BENCH_PEERS_DRAIN_SECONDS): as long again for them.
      peers_await "$system" "$peers_control/$system.done-$round" \
        "$((round == 1 ? 2 * round_limit : round_limit))"
    done
  done
  for system in "${peers_systems[@]}"; do
    echo quit >"$peers_control/$system.run"
  done
  for system in "${peers_systems[@]}"; do
    local waited=0
    while kill -0 "${peers_pid[$system]}" 2>/dev/null && [ "$waited" -lt 600 ]; do
      sleep 0.1
      waited=$((waited + 1))
    done
  done

  # Ours over HTTP, once, after the rounds (BENCH_PEERS_HTTP=0 leaves it out).
  local summary_systems=("${peers_systems[@]}")
  if [ "${BENCH_PEERS_HTTP:-1}" = 1 ]; then
    peers_http
    summary_systems=(ours ours-http "${peers_systems[@]:1}")
  fi

  # The database's own ceiling, with nothing else running: pgbench's one-client INSERT and our
  # claim-and-complete cycle, in ours' database, where the engine's migrations made the tables.
  echo "bench: database ceiling (pgbench)" >&2
  local ref_tps cycles
  ref_tps=$(reference_insert_tps)
  cycles=$(engine_cycle_tps)
  cycles500=$(engine_cycle_tps 500 200)
  # Our drain's own two statements one after the other (JobCompleteMany, then JobClaimMany, at
  # claim-ahead-max, from one caller; EngineBenchmark's serial mode, the median of three after
  # fifteen unmeasured): the database work of our statements with no overlap, a reference beside
  # the pgbench cycle's simpler statements. The engine overlaps the two on two sessions, so its
  # drain may pass it: not a ceiling.
  echo "bench: our drain's statements one after the other (EngineBenchmark, serial mode)" >&2
  psql_ -c "TRUNCATE jobs, job_finished_minutes"
  ./mvnw -q -B test -Dtest=EngineBenchmark -Dsurefire.failIfNoSpecifiedTests=false \
    -Djobs.embedded-db.enabled=false \
    -Dquarkus.datasource.jdbc.url="$url" -Dquarkus.datasource.username=postgres \
    -Dquarkus.datasource.password= \
    -Dbench.mode=serial -Dbench.output="$work/peers-serial.jsonl" \
    >"$out/peers-serial.log" 2>&1 || { tail -n 80 "$out/peers-serial.log" >&2; exit 1; }

  python3 - "$peers_raw" "$out/peers.jsonl" "$ref_tps" "$cycles" "$cycles500" "$work/peers-serial.jsonl" "$rounds" "${summary_systems[@]}" <<'PY'
import json, statistics, sys
raw, out, ref, cycles, cycles500, serial_path, rounds = (sys.argv[1], sys.argv[2], float(sys.argv[3]),
                                                         float(sys.argv[4]), float(sys.argv[5]), sys.argv[6],
                                                         int(sys.argv[7]))
systems = sys.argv[8:]
serial = json.loads(open(serial_path).readline())
ours_sides = ("ours", "ours-http")
peers = [s for s in systems if s not in ours_sides]
rows = [json.loads(l) for l in open(raw) if l.strip()]
measures = list(dict.fromkeys(r["measure"] for r in rows))
by = {}
for r in rows:
    by.setdefault((r["measure"], r["system"]), []).append(r)
lines, table = [], []
for m in measures:
    unit = next(r["unit"] for r in rows if r["measure"] == m)
    lower_is_better = unit == "ms"
    median = {s: statistics.median(r["value"] for r in by[(m, s)]) for s in systems if (m, s) in by}
    present = [p for p in peers if p in median]
    best = (min if lower_is_better else max)(present, key=lambda p: median[p])
    ratio = median["ours"] / median[best] if median[best] else float("nan")
    http_ratio = median["ours-http"] / median[best] if "ours-http" in median and median[best] else None
    for s in systems:
        if s not in median:
            continue
        line = {"measure": f"{m}.{s}", "value": round(median[s], 2), "unit": unit,
                "rounds": [r["value"] for r in by[(m, s)]]}
        incomplete = [r["round"] for r in by[(m, s)] if r.get("complete") is False]
        if incomplete:
            line["incomplete_rounds"] = incomplete
        if "samples" in by[(m, s)][0]:
            line["samples"] = [r["samples"] for r in by[(m, s)]]
        if s == "ours":
            line["ratio"] = round(ratio, 2)
            line["best_peer"] = best
        if s == "ours-http":
            line["ratio"] = round(http_ratio, 2)
            line["best_peer"] = best
        lines.append(line)
    table.append((m, unit, median, best, ratio, http_ratio))
lines.append({"measure": "pgbench_insert_1_client", "value": round(ref, 2), "unit": "tps"})
lines.append({"measure": "pgbench_engine_drain_cycles_of_10", "value": round(cycles * 10, 2),
              "unit": "jobs/s", "ratio": round(cycles * 10 / ref, 2)})
drain = [t for t in table if t[0].startswith("drain")]  # ours is in-process only
ceiling = {"measure": "pgbench_engine_drain_cycles_of_500", "value": round(cycles500 * 500, 2), "unit": "jobs/s"}
if drain and "ours" in drain[0][2]:
    ceiling["ratio"] = round(drain[0][2]["ours"] / (cycles500 * 500), 2)
    serial["ratio"] = round(drain[0][2]["ours"] / serial["value"], 2)
lines.append(ceiling)
lines.append(serial)
with open(out, "w") as f:
    for line in lines:
        f.write(json.dumps(line) + "\n")

cell = lambda v: f"{v:,.2f}" if v < 100 else f"{v:,.0f}"
head = ["measure", "unit"] + systems + ["best peer", "ours/best"]
if "ours-http" in systems:
    head.append("http/best")
body = [[m, unit] + [cell(median[s]) if s in median else "-" for s in systems] + [best, f"{ratio:.2f}"]
        + (([f"{hr:.2f}" if hr is not None else "-"]) if "ours-http" in systems else [])
        for m, unit, median, best, ratio, hr in table]
widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]
print(f"Medians of {rounds} round(s); ours/best compares ours with the best peer (for jobs/s higher is")
print("better for ours, for ms lower is). ours-http: the packaged app over HTTP, one run after the")
print("rounds (enqueues through POST /api/noop and /api/noop/batch, pickup from the HTTP request);")
print("http/best compares it with the same best peer.")
for r in [head] + body:
    print("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
print()
print(f"Database ceiling: pgbench one-client INSERT {ref:,.0f} tps; our claim-and-complete cycle of 10 under")
print(f"pgbench {cycles * 10:,.0f} jobs/s ({cycles * 10 / ref:.2f} x the INSERT); at 500 jobs a cycle, the size")
print(f"claims ahead reach, {cycles500 * 500:,.0f} jobs/s. Our drain's own two statements one after the other")
print(f"({serial['measure']}, a reference, not a ceiling): {serial['value']:,.0f} jobs/s.")
print()
PY
  echo "Machine: $(nproc) cores shared by PostgreSQL, every system's process and whatever else runs here. Load average"
  echo "         before the run: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg). Suite took $((SECONDS - suite_start)) s."
  echo
  print_results "$out/peers.jsonl"
}
