# The enqueue suite: jobs added through the HTTP API of the packaged app, one request at a time over
# a keep-alive connection and in batches of 1,000 through POST /api/noop/batch, against the same
# enqueues made in-process through JobQueue, on the same throwaway PostgreSQL in one run. Sourced
# by bench/run.sh, whose helpers ($out, $work, $url, start_app, psql_, print_results, ...) it uses;
# bench/run.sh then calls suite_enqueue. See docs/benchmarks.md, "Enqueue suite".
#
# The app runs with lock mode none, so it processes nothing: like the in-process side, where no
# service of the kind is registered, the measure is the enqueue alone. The HTTP side is measured
# twice, before and after the in-process side, and each of its figures is the mean of the two, so
# that drift on the machine falls on both sides alike.

suite_enqueue() {
  local seconds=${BENCH_ENQUEUE_SECONDS:-15} # each measured phase
  local warmup=${BENCH_ENQUEUE_WARMUP:-20}   # each unmeasured warm-up phase

  apt_need wrk wrk
  apt_need curl curl
  apt_need openssl openssl
  rm -f "$out/enqueue.jsonl" "$out"/enqueue-wrk-*.txt
  BENCH_APP_ENV="JOBS_LOCK_MODE=none ${BENCH_APP_ENV:-}" start_app enqueue
  printf '{"sleep_ms": 0}' >"$work/one.json"
  python3 -c 'import json; print(json.dumps({"jobs": [{"payload": {"sleep_ms": 0}} for i in range(1000)]}))' \
    >"$work/batch.json"

  # One phase of wrk: $1 the label, $2 the body file, $3 the path, $4 seconds. The table is
  # emptied first, as on the in-process side.
  # $5, when given, is the number of concurrent callers (connections; two wrk threads), else one.
  enqueue_wrk() {
    local callers=${5:-1}
    psql_ -c "TRUNCATE jobs, job_finished_minutes"
    wrk -t "$((callers > 1 ? 2 : 1))" -c "$callers" -d "${4}s" --latency -H "Authorization: Bearer $token" \
      -s bench/http_enqueue.lua "$base" -- "$2" "$3" >"$out/enqueue-wrk-$1.txt"
  }
  # The reference the concurrent callers are held to: pgbench's one-client INSERT of this run.
  echo "bench: reference, pgbench one-client INSERT" >&2
  local ref_tps
  ref_tps=$(reference_insert_tps)
  echo "bench: HTTP warm-up, ${warmup}s one at a time and ${warmup}s in batches" >&2
  enqueue_wrk warmup-one "$work/one.json" /api/noop "$warmup"
  enqueue_wrk warmup-batch "$work/batch.json" /api/noop/batch "$warmup"
  echo "bench: HTTP, ${seconds}s one at a time and ${seconds}s in batches of 1,000" >&2
  enqueue_wrk one-a "$work/one.json" /api/noop "$seconds"
  enqueue_wrk batch-a "$work/batch.json" /api/noop/batch "$seconds"
  enqueue_wrk callers16-a "$work/one.json" /api/noop "$seconds" 16

  echo "bench: in-process, the same after a warm-up" >&2
  psql_ -c "TRUNCATE jobs, job_finished_minutes"
  ./mvnw -q -B test -Dtest=EngineBenchmark -Dsurefire.failIfNoSpecifiedTests=false \
    -Djobs.embedded-db.enabled=false -Dbench.mode=enqueue \
    -Dbench.seconds="$seconds" -Dbench.warmup-seconds="$warmup" \
    -Dquarkus.datasource.jdbc.url="$url" -Dquarkus.datasource.username=postgres \
    -Dquarkus.datasource.password= -Dbench.output="$out/enqueue-inprocess.jsonl" \
    >"$out/enqueue-inprocess.log" 2>&1 || { tail -n 80 "$out/enqueue-inprocess.log" >&2; exit 1; }

  echo "bench: HTTP again, ${seconds}s one at a time and ${seconds}s in batches" >&2
  enqueue_wrk one-b "$work/one.json" /api/noop "$seconds"
  enqueue_wrk batch-b "$work/batch.json" /api/noop/batch "$seconds"
  enqueue_wrk callers16-b "$work/one.json" /api/noop "$seconds" 16
  psql_ -c "TRUNCATE jobs, job_finished_minutes"

  python3 - "$out" "$ref_tps" <<'PY'
import json, sys
sys.path.insert(0, "bench")
from wrk_figures import read
out, ref_tps = sys.argv[1], float(sys.argv[2])
inproc = {r["measure"]: r for r in map(json.loads, open(out + "/enqueue-inprocess.jsonl"))}

def wrk(label):
    return read(f"{out}/enqueue-wrk-{label}.txt", label)

rows = []
for name, per, measure in (("one", 1, "enqueue_one_at_a_time"), ("batch", 1000, "enqueue_batches_of_1000")):
    a, b = wrk(name + "-a"), wrk(name + "-b")
    http = (a[0] + b[0]) / 2 * per
    ref = inproc["inprocess_" + measure]["value"]
    rows.append({"measure": "inprocess_" + measure, "value": round(ref, 2), "unit": "jobs/s"})
    rows.append({"measure": "http_" + measure, "value": round(http, 2), "unit": "jobs/s",
                 "ratio": round(http / ref, 2), "rounds": [round(a[0] * per, 2), round(b[0] * per, 2)]})
    rows.append({"measure": "http_" + measure + "_p50", "value": round((a[1] + b[1]) / 2, 2), "unit": "ms"})
    rows.append({"measure": "http_" + measure + "_p99", "value": round((a[2] + b[2]) / 2, 2), "unit": "ms"})
# Sixteen callers at once, each POSTing one job at a time, against pgbench's one-client INSERT.
a, b = wrk("callers16-a"), wrk("callers16-b")
rows.append({"measure": "http_enqueue_16_callers", "value": round((a[0] + b[0]) / 2, 2),
             "unit": "jobs/s", "ratio": round((a[0] + b[0]) / 2 / ref_tps, 2),
             "rounds": [round(a[0], 2), round(b[0], 2)]})
rows.append({"measure": "http_enqueue_16_callers_p50", "value": round((a[1] + b[1]) / 2, 2), "unit": "ms"})
rows.append({"measure": "http_enqueue_16_callers_p99", "value": round((a[2] + b[2]) / 2, 2), "unit": "ms"})
rows.append({"measure": "pgbench_insert_1_client", "value": round(ref_tps, 2), "unit": "tps"})
bare = inproc.get("inprocess_bare_insert_interleaved")
if bare:
    # The in-process enqueue against a bare one-row insert in alternating half-second slices.
    rows.insert(1, bare)
here = inproc.get("inprocess_enqueue_one_at_a_time_owner_here")
if here:
    # The same, for a kind this replica owns (its runner is woken in process, no NOTIFY asked for).
    rows.insert(2, here)
with open(out + "/enqueue.jsonl", "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
PY
  echo "HTTP through the packaged app (lock mode none, so nothing is processed), one wrk connection"
  echo "kept alive; in-process through JobQueue in a Quarkus test on the same database. ratio = HTTP /"
  echo "in-process (target >= 0.8); HTTP figures are the mean of the runs before and after the in-process"
  echo "one (rounds). p50/p99: wrk's request latency. inprocess_bare_insert_interleaved: one-row inserts"
  echo "(uid, 200 bytes) from the same JVM in half-second slices alternating with the one-at-a-time"
  echo "enqueues; its ratio = enqueue / bare insert, both measured over the same minutes."
  echo "inprocess_enqueue_one_at_a_time_owner_here: the same enqueues of a kind this replica owns (its"
  echo "service registered and paused), in slices of their own; its ratio = these / bare insert."
  echo "http_enqueue_16_callers: 16 wrk connections POSTing one job each at a time; its ratio = jobs/s"
  echo "/ pgbench_insert_1_client (one client, one row per transaction, this run; target >= 3)."
  echo
  print_results "$out/enqueue.jsonl"
}
