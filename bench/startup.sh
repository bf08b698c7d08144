# The start-up suite: how long the packaged JVM app takes from launch to a ready answer, on a new
# database (every migration to apply) and on an existing one (the common case of a rollout), for
# HEAD against a base build of an earlier commit made in the same run. Sourced by bench/run.sh,
# whose helpers ($work, $out, start_app, stop_pid, psql_, print_results, ...) it uses.
#
# The base is BENCH_STARTUP_BASE (a commit, tag or branch; the last v* tag by default), built from
# `git archive` in a temporary folder. Three variants are started: the base as `java -jar`, HEAD as
# `java -jar` (how the README runs it), and HEAD as its JVM image starts it, with the class-data
# archive that src/main/docker/app-cds.sh makes (the same script Dockerfile.jvm runs). Starts
# alternate between the variants, BENCH_STARTUP_ROUNDS rounds (3 by default); each figure is the
# median of its rounds, with the CPU time the process used until it was ready (all its threads:
# the JIT compilers compete with start-up for the cores). ratio = variant / base. See
# docs/benchmarks.md, "Start-up".

suite_startup() {
  local rounds=${BENCH_STARTUP_ROUNDS:-3}
  local base_ref=${BENCH_STARTUP_BASE:-$(git describe --tags --abbrev=0 --match 'v*' 2>/dev/null || true)}
  if [ -z "$base_ref" ]; then
    echo "bench: no v* tag to compare with; set BENCH_STARTUP_BASE=<commit>" >&2
    exit 2
  fi
  local base_commit
  base_commit=$(git rev-parse --verify --quiet "$base_ref^{commit}") \
    || { echo "bench: $base_ref names no commit" >&2; exit 2; }

  # HEAD is built by start_app, which also makes the token keys and migrates the database once.
  start_app startup-warmup
  stop_pid "$app_pid"
  echo "bench: building the base, $base_ref ($base_commit)" >&2
  local base_src="$work/base-src"
  mkdir -p "$base_src"
  git archive "$base_commit" | tar -x -C "$base_src"
  (cd "$base_src" && bash ./mvnw -B -q package -DskipTests -Dspotless.check.skip=true) \
    >"$out/startup-base-build.log" 2>&1 || { tail -n 60 "$out/startup-base-build.log" >&2; exit 1; }

  bash src/main/docker/app-cds.sh target/quarkus-app

  local rows="$work/startup.rows" ticks round build db
  ticks=$(getconf CLK_TCK)
  : >"$rows"
  for ((round = 1; round <= rounds; round++)); do
    for db in new existing; do
      for build in base head head_cds; do
        if [ "$db" = new ]; then
          psql_ -c "DROP SCHEMA public CASCADE; CREATE SCHEMA public" >/dev/null
        fi
        local dir=$PWD/target/quarkus-app cds=0
        [ "$build" = base ] && dir=$base_src/target/quarkus-app
        [ "$build" = head_cds ] && cds=1
        startup_once "$dir" "$cds" "startup-$build-$db-$round"
        echo "$build $db ready_ms $startup_ready_ms" >>"$rows"
        echo "$build $db cpu_ms $((startup_cpu_ticks * 1000 / ticks))" >>"$rows"
        echo "bench: round $round, $build on a $db database: ready in $startup_ready_ms ms" >&2
      done
    done
  done

  python3 - "$rows" "$out/startup.jsonl" "$base_ref" <<'PY'
import json, statistics, sys
rows, path, base_ref = sys.argv[1], sys.argv[2], sys.argv[3]
values = {}
for line in open(rows):
    build, db, measure, value = line.split()
    values.setdefault((build, db, measure), []).append(float(value))
with open(path, "w") as f:
    for db in ("existing", "new"):
        for measure, unit in (("ready_ms", "ms"), ("cpu_ms", "ms")):
            base = statistics.median(values[("base", db, measure)])
            name = f"{'time_to_ready' if measure == 'ready_ms' else 'cpu_to_ready'}_{db}_database"
            f.write(json.dumps({"measure": f"{name}_base", "value": base, "unit": unit}) + "\n")
            for build, suffix in (("head", ""), ("head_cds", "_with_archive")):
                head = statistics.median(values[(build, db, measure)])
                f.write(json.dumps({"measure": name + suffix, "value": head, "unit": unit,
                                    "ratio": round(head / base, 2)}) + "\n")
print(f"Base: {base_ref}, as java -jar. HEAD as java -jar, then with the class-data archive as its")
print("JVM image starts it. Medians of the rounds; ratio = HEAD / base (the target is 0.5 or less).")
PY
  echo "Machine: $(nproc) cores shared by the app and PostgreSQL; $rounds rounds."
  echo
  print_results "$out/startup.jsonl"
}

# Starts the packaged app in folder $1 (with its class-data archive when $2 is 1) and waits until it
# is ready; sets startup_ready_ms and startup_cpu_ticks (user + system time of the process until
# then), then stops it. $3 names the log file.
startup_once() {
  local dir=$1 name=$3 cds=()
  if [ "$2" = 1 ]; then cds=(-XX:SharedArchiveFile="$dir/app-cds.jsa" -Xshare:auto); fi
  local port t0 pid
  port=$(free_port)
  t0=$(date +%s%N)
  (
    exec env QUARKUS_HTTP_HOST=127.0.0.1 QUARKUS_HTTP_PORT="$port" \
      QUARKUS_DATASOURCE_JDBC_URL="$url" QUARKUS_DATASOURCE_USERNAME=postgres QUARKUS_DATASOURCE_PASSWORD= \
      MP_JWT_VERIFY_PUBLICKEY_LOCATION="$keys/public.pem" MP_JWT_VERIFY_ISSUER=async-jobs-bench \
      JOBS_DATA_DIR="$data" JOBS_LOCK_MODE=postgres JOBS_LOCK_HANDOVER_GRACE=5s \
      JOBS_API_SIGNING_KEY="$(openssl rand -base64 32)" \
      java ${cds[@]+"${cds[@]}"} -jar "$dir/quarkus-run.jar"
  ) >"$out/$name.log" 2>&1 &
  pid=$!
  started+=("$pid")
  until curl -fsS "http://127.0.0.1:$port/q/health/ready" 2>/dev/null | grep -q '"UP"'; do
    if ! kill -0 "$pid" 2>/dev/null || [ $(($(date +%s%N) - t0)) -gt 120000000000 ]; then
      echo "bench: $dir did not become ready; last lines of $out/$name.log:" >&2
      tail -n 40 "$out/$name.log" >&2
      exit 1
    fi
    sleep 0.02
  done
  startup_ready_ms=$((($(date +%s%N) - t0) / 1000000))
  startup_cpu_ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  stop_pid "$pid"
}
