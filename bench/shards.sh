# The shards suite: work spread over replicas by shards (issue 17). Sourced by bench/run.sh, whose
# helpers ($out, $work, $url, start_app, psql_, print_results, ...) it uses; bench/run.sh then
# calls suite_shards. See docs/benchmarks.md, "Shards suite".
#
# Jobs that mostly wait: noop jobs sleeping 50 ms at max-concurrent 4 per shard, drained by 1, 2
# and 3 replicas with as many shards as replicas (a deployment whose shards grow with it), and by
# one replica holding three shards (the same concurrency on one pod). The reference is one replica
# with one shard in the same run: the ratio is jobs/s over that.
#
# The CPU-bound case: zip jobs of one tree, the zip kind over three shards at max-concurrent 1,
# drained by one replica (which owns all three shards) and by three. On this machine every
# replica shares the same cores, so the figure says what the cores allow, not what three pods on
# three nodes would.

suite_shards() {
  local jobs=${BENCH_SHARDS_JOBS:-3600}   # noop jobs per drain
  local zips=${BENCH_SHARDS_ZIPS:-6}      # zip jobs per drain
  local mib=${BENCH_SHARDS_ZIP_MIB:-96}   # size of the zip tree

  apt_need curl curl
  apt_need openssl openssl
  rm -f "$out/shards.jsonl" "$work/shards.rows"
  local common="JOBS_LOCK_SHARDING=per-kind JOBS_LOCK_RETRY_PERIOD=1s JOBS_LOCK_HANDOVER_GRACE=2s"
  common="$common JOBS_SERVICES_NOOP_MAX_CONCURRENT=4 JOBS_SERVICES_ZIP_MAX_CONCURRENT=1"

  # Starts replica 1 through start_app (it builds, makes the keys and the token), then replicas
  # 2..$1 with the same settings; $2 the noop shards, $3 the zip shards. Waits until every shard
  # is owned once.
  replicas_up() {
    local n=$1 settings="$common JOBS_SERVICES_NOOP_SHARDS=$2 JOBS_SERVICES_ZIP_SHARDS=$3"
    replica_pids=()
    BENCH_APP_ENV="$settings JOBS_LOCK_IDENTITY=bench-1 ${BENCH_APP_ENV:-}" start_app "shards-$n-1"
    replica_pids+=("$app_pid")
    BENCH_SKIP_BUILD=1
    local i
    for i in $(seq 2 "$n"); do
      local port
      port=$(free_port)
      env QUARKUS_HTTP_HOST=127.0.0.1 QUARKUS_HTTP_PORT="$port" \
        QUARKUS_DATASOURCE_JDBC_URL="$url" QUARKUS_DATASOURCE_USERNAME=postgres QUARKUS_DATASOURCE_PASSWORD= \
        MP_JWT_VERIFY_PUBLICKEY_LOCATION="$keys/public.pem" MP_JWT_VERIFY_ISSUER=async-jobs-bench \
        JOBS_DATA_DIR="$data" JOBS_LOCK_MODE=postgres JOBS_SERVICES_NOOP_ENABLED=true \
        JOBS_LOCK_IDENTITY="bench-$i" $settings \
        java -jar target/quarkus-app/quarkus-run.jar >"$out/shards-$n-$i-app.log" 2>&1 &
      replica_pids+=("$!")
      started+=("$!")
      local waited=0
      until curl -fsS "http://127.0.0.1:$port/q/health/ready" 2>/dev/null | grep -q '"UP"'; do
        [ "$waited" -ge 240 ] && { tail -n 40 "$out/shards-$n-$i-app.log" >&2; exit 1; }
        sleep 0.5
        waited=$((waited + 1))
      done
    done
    # Every shard owned, and no replica over its share: the locks of the application's sessions.
    local want=$(($2 + $3)) waited=0
    until [ "$(psql_ -At -c "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted")" -ge "$((want + 4))" ]; do
      [ "$waited" -ge 120 ] && { echo "bench: the shards were not all owned" >&2; exit 1; }
      sleep 0.5
      waited=$((waited + 1))
    done
    sleep 3 # a few balance rounds: the spread settles
  }
  replicas_down() {
    local pid
    for pid in "${replica_pids[@]}"; do stop_pid "$pid"; done
  }
  # Enqueues $2 jobs of kind $1 with payload $3 through replica 1 in batches of up to 1,000, then
  # waits until none is pending or running; prints the seconds from the first enqueue.
  drain() {
    local kind=$1 count=$2 payload=$3
    psql_ -c "TRUNCATE jobs, job_finished_minutes"
    python3 - "$base" "$token" "$kind" "$count" "$payload" "$pg_port" "$PG_BIN/psql" <<'PY'
import json, subprocess, sys, time, urllib.request
base, token, kind, count, payload, port, psql = sys.argv[1:]
count, payload = int(count), json.loads(payload)
start = time.monotonic()
left = count
while left > 0:
    n = min(1000, left)
    body = json.dumps({"jobs": [{"payload": payload} for _ in range(n)]}).encode()
    req = urllib.request.Request(f"{base}/api/{kind}/batch", data=body, method="POST",
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    urllib.request.urlopen(req).read()
    left -= n
while True:
    out = subprocess.run([psql, "-At", "-h", "127.0.0.1", "-p", port, "-U", "postgres", "-d", "postgres", "-c",
                          "SELECT count(*) FILTER (WHERE status IN ('pending', 'running')),"
                          " count(*) FILTER (WHERE status = 'failed') FROM jobs"],
                         capture_output=True, text=True, check=True).stdout.strip()
    active, failed = (int(x) for x in out.split("|"))
    if failed:
        sys.exit(f"{failed} job(s) failed")
    if active == 0:
        break
    time.sleep(0.02)
print(f"{time.monotonic() - start:.3f}")
PY
  }
  # The owners of the noop shards: how many replicas took part.
  owners() {
    psql_ -At -c "SELECT count(DISTINCT holder) FROM job_owner_epochs WHERE lock_name LIKE 'async-jobs-owner-$1%'"
  }

  local setup seconds
  for setup in "1 1" "2 2" "3 3" "1 3"; do
    set -- $setup
    replicas_up "$1" "$2" 3
    seconds=$(drain noop "$jobs" '{"sleep_ms": 50}')
    echo "noop $1 $2 $seconds $(owners noop)" >>"$work/shards.rows"
    echo "bench: noop, $1 replica(s), $2 shard(s): $jobs jobs in $seconds s" >&2
    if [ "$1" = 1 ] && [ "$2" = 3 ] || [ "$1" = 3 ]; then
      if [ ! -d "$data/files/user/bench-user/tree" ]; then
        mkdir -p "$data/files/user/bench-user"
        python3 bench/make_tree.py "$data/files/user/bench-user/tree" --mib "$mib" >"$out/shards-tree.txt"
      fi
      seconds=$(drain zip "$zips" '{"paths": ["tree"]}')
      echo "zip $1 3 $seconds $(owners zip)" >>"$work/shards.rows"
      echo "bench: zip, $1 replica(s), 3 shards: $zips jobs in $seconds s" >&2
    fi
    replicas_down
  done

  python3 - "$out/shards.jsonl" "$work/shards.rows" "$jobs" "$zips" <<'PY'
import json, sys
path, rows_file, jobs, zips = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rows = [l.split() for l in open(rows_file) if l.strip()]
runs = {(k, int(r), int(s)): (float(t), int(o)) for k, r, s, t, o in rows}
base = jobs / runs[("noop", 1, 1)][0]
zip1 = zips / runs[("zip", 1, 3)][0]
with open(path, "w") as f:
    for (kind, r, s), (t, owners) in runs.items():
        rate = (jobs if kind == "noop" else zips) / t
        ref = base if kind == "noop" else zip1
        f.write(json.dumps({"measure": f"{kind}_{r}_replicas_{s}_shards_jobs_per_s", "value": round(rate, 2),
                            "unit": "jobs/s", "ratio": round(rate / ref, 2), "owners": owners}) + "\n")
PY
  echo "Machine: $(nproc) cores shared by every replica and PostgreSQL."
  echo "noop: $jobs jobs sleeping 50 ms, max-concurrent 4 per shard; ratio = jobs/s over 1 replica with 1 shard (target >= 2.7 with 3 replicas, 3 shards)."
  echo "zip: $zips jobs of a $mib MiB tree ($(cat "$out/shards-tree.txt" 2>/dev/null)), 3 shards at max-concurrent 1; ratio = jobs/s over 1 replica owning all 3."
  echo
  print_results "$out/shards.jsonl"
}
