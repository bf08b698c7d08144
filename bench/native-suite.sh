# The native suite: the native executable beside the JVM build of the same commit, each started on
# the same throwaway PostgreSQL in one run. Sourced by bench/run.sh, whose helpers ($out, $work,
# start_app, stop_pid, psql_, print_results, ...) it uses; bench/run.sh then calls suite_native.
# The executable must exist (bench/native.sh builds it, about 10 minutes); the jar is built here
# unless BENCH_SKIP_BUILD=1. See docs/benchmarks.md, "Native suite".
#
# Per build: the time from launch to a ready answer, resident memory once idle, then a drain of
# BENCH_NATIVE_JOBS noop jobs (10,000 by default, enqueued in batches of 1,000 while the kind is
# paused, then resumed at once) timed from the resume to the last finished job, with the highest
# resident memory seen during it.

suite_native() {
  local jobs=${BENCH_NATIVE_JOBS:-10000}
  apt_need curl curl
  apt_need openssl openssl
  rm -f "$out/native.jsonl"
  local rows="$work/native.rows"
  : >"$rows"

  local build
  for build in jvm native; do
    psql_ -c "DROP SCHEMA public CASCADE; CREATE SCHEMA public" >/dev/null
    if [ "$build" = native ]; then
      BENCH_NATIVE=1 start_app native-native
    else
      BENCH_JAVA_OPTS="${BENCH_JAVA_OPTS:-}" start_app native-jvm
    fi
    echo "$build ready_ms $app_ready_ms" >>"$rows"
    sleep 5
    echo "$build idle_rss_mib $(awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$app_pid/status")" >>"$rows"

    local admin
    admin=$(cat "$keys/admin-token")
    curl -fsS -X POST -H "Authorization: Bearer $admin" "$base/api/admin/services/noop/pause" >/dev/null
    python3 - "$work/batch.json" <<'PY'
import json, sys
json.dump({"jobs": [{"payload": {}} for _ in range(1000)]}, open(sys.argv[1], "w"))
PY
    local i
    for ((i = 0; i < jobs / 1000; i++)); do
      curl -fsS -X POST -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
        --data-binary @"$work/batch.json" "$base/api/noop/batch" >/dev/null
    done
    echo "bench: $build, draining $jobs noop jobs" >&2
    local start end left peak=0 now_rss
    start=$(date +%s%N)
    curl -fsS -X POST -H "Authorization: Bearer $admin" "$base/api/admin/services/noop/resume" >/dev/null
    while :; do
      now_rss=$(awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$app_pid/status")
      [ "$now_rss" -gt "$peak" ] && peak=$now_rss
      left=$(psql_ -tA -c "SELECT count(*) FROM jobs WHERE status IN ('pending', 'running')")
      [ "$left" = 0 ] && break
      if [ $(($(date +%s%N) - start)) -gt 600000000000 ]; then
        echo "bench: $build did not drain within 10 minutes ($left left)" >&2
        exit 1
      fi
      sleep 0.05
    done
    end=$(date +%s%N)
    local done_count
    done_count=$(psql_ -tA -c "SELECT count(*) FROM jobs WHERE status = 'done'")
    [ "$done_count" = "$jobs" ] || { echo "bench: $build finished $done_count of $jobs" >&2; exit 1; }
    echo "$build drain_jobs_per_s $(python3 -c "print($jobs / (($end - $start) / 1e9))")" >>"$rows"
    echo "$build drain_peak_rss_mib $peak" >>"$rows"
    stop_pid "$app_pid"
  done
  echo "jvm size_mib $(du -sm target/quarkus-app | cut -f1)" >>"$rows"
  echo "native size_mib $(du -sm "$(native_runner)" | cut -f1)" >>"$rows"

  python3 - "$out/native.jsonl" "$rows" <<'PY'
import json, sys
path, rows = sys.argv[1], sys.argv[2]
values = {}
for line in open(rows):
    build, measure, value = line.split()
    values[(build, measure)] = float(value)
units = {"ready_ms": "ms", "idle_rss_mib": "MiB", "drain_jobs_per_s": "jobs/s",
         "drain_peak_rss_mib": "MiB", "size_mib": "MiB"}
with open(path, "w") as f:
    for measure, unit in units.items():
        jvm, native = values[("jvm", measure)], values[("native", measure)]
        f.write(json.dumps({"measure": "jvm_" + measure, "value": jvm, "unit": unit}) + "\n")
        f.write(json.dumps({"measure": "native_" + measure, "value": native, "unit": unit,
                            "ratio": native / jvm}) + "\n")
PY
  echo "Machine: $(nproc) cores. ratio = native / JVM. The JVM's size is target/quarkus-app (its image"
  echo "adds a JRE); the native size is the executable, which its image holds alone."
  echo
  print_results "$out/native.jsonl"
}
