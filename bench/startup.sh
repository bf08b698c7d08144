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

# Starts the packaged app in folder $1 (with its class-data archive when $2 is 1) through
# start_app and waits until it is ready; sets startup_ready_ms and startup_cpu_ticks (user + system
# time of the process until then), then stops it. $3 names the log files.
startup_once() {
  local dir=$1 opts=
  if [ "$2" = 1 ]; then opts="-XX:SharedArchiveFile=$dir/app-cds.jsa -Xshare:auto"; fi
  BENCH_APP_DIR=$dir BENCH_JAVA_OPTS=$opts start_app "$3"
  startup_ready_ms=$app_ready_ms
  startup_cpu_ticks=$(awk '{print $14 + $15}' "/proc/$app_pid/stat")
  stop_pid "$app_pid"
}
