# The fairness suite: how long one owner's single job waits behind another owner's backlog, with
# claim-order fifo (the reference, measured in the same run) and fair, and how the pending quota
# holds under concurrent enqueues. Sourced by bench/run.sh, whose helpers ($out, $work, start_app,
# psql_, print_results, ...) it uses; bench/run.sh then calls suite_fairness. See
# docs/benchmarks.md, "Fairness suite".
#
# The packaged app runs noop with max-concurrent 2. Owner A enqueues BENCH_FAIR_BACKLOG jobs of
# BENCH_FAIR_SLEEP_MS each in one batch, then owner B enqueues one job of the same length; the
# measure is B's job from its enqueue to its end, as the status view reports (created_at to
# completed_at, the server's clock), and A's whole backlog likewise.

suite_fairness() {
  local backlog=${BENCH_FAIR_BACKLOG:-60}
  local sleep_ms=${BENCH_FAIR_SLEEP_MS:-500}
  local concurrent=2
  apt_need curl curl
  apt_need openssl openssl
  rm -f "$out/fairness.jsonl"
  BENCH_APP_ENV="JOBS_SERVICES_NOOP_MAX_CONCURRENT=$concurrent ${BENCH_APP_ENV:-}" start_app fairness
  local admin
  admin=$(cat "$keys/admin-token")
  local alice bob
  alice=$(fair_token alice)
  bob=$(fair_token bob)

  # One run in claim order $1: prints B's latency and A's drain, in seconds.
  fair_run() {
    psql_ -c "TRUNCATE jobs, job_finished_minutes"
    curl -fsS -X PUT -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
      -d "{\"claim_order\": \"$1\"}" "$base/api/admin/services/noop/settings" >/dev/null
    sleep 2 # the owner's next tick reads the order
    python3 -c "import json; print(json.dumps({'jobs': [{'payload': {'sleep_ms': $sleep_ms}} for i in range($backlog)]}))" \
      >"$work/backlog.json"
    curl -fsS -H "Authorization: Bearer $alice" -H 'Content-Type: application/json' \
      --data-binary @"$work/backlog.json" "$base/api/noop/batch" >/dev/null
    local uid
    uid=$(curl -fsS -H "Authorization: Bearer $bob" -H 'Content-Type: application/json' \
      -d "{\"sleep_ms\": $sleep_ms}" "$base/api/noop" | python3 -c 'import json,sys; print(json.load(sys.stdin)["uid"])')
    local waited=0
    until [ "$(psql_ -Atc "SELECT count(*) FROM jobs WHERE status IN ('pending', 'running')")" = 0 ]; do
      sleep 0.2
      waited=$((waited + 1))
      [ "$waited" -lt 1500 ] || { echo "bench: the backlog did not drain" >&2; exit 1; }
    done
    psql_ -Atc "SELECT round(extract(epoch FROM completed_at - created_at)::numeric, 3) FROM jobs WHERE uid = '$uid'"
    psql_ -Atc "SELECT round(extract(epoch FROM max(completed_at) - min(created_at))::numeric, 3) FROM jobs WHERE owner_id = 'alice'"
  }

  echo "bench: owner A enqueues $backlog jobs of ${sleep_ms} ms, then owner B one; max-concurrent $concurrent" >&2
  local fifo fair
  mapfile -t fifo < <(fair_run fifo)
  mapfile -t fair < <(fair_run fair)
  local run_s
  run_s=$(python3 -c "print($sleep_ms / 1000)")
  python3 - "$out/fairness.jsonl" "${fifo[0]}" "${fair[0]}" "${fifo[1]}" "${fair[1]}" "$run_s" <<'PY'
import json, sys
path, fifo_b, fair_b, fifo_a, fair_a, run = sys.argv[1], *map(float, sys.argv[2:])
rows = [
    {"measure": "b_single_job_fifo_s", "value": fifo_b, "unit": "s"},
    {"measure": "b_single_job_fair_s", "value": fair_b, "unit": "s", "ratio": fair_b / fifo_b},
    {"measure": "b_single_job_fair_over_run_time", "value": fair_b / run, "unit": "x"},
    {"measure": "a_backlog_drain_fifo_s", "value": fifo_a, "unit": "s"},
    {"measure": "a_backlog_drain_fair_s", "value": fair_a, "unit": "s", "ratio": fair_a / fifo_a},
]
with open(path, "a") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
PY

  # The pending quota: the kind paused so nothing leaves pending, a quota of 5, and 20 enqueues
  # of one owner at once.
  psql_ -c "TRUNCATE jobs, job_finished_minutes"
  curl -fsS -X PUT -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
    -d '{"max_pending_per_owner": 5}' "$base/api/admin/services/noop/settings" >/dev/null
  curl -fsS -X POST -H "Authorization: Bearer $admin" "$base/api/admin/services/noop/pause" >/dev/null
  sleep 1.2 # the quota is read at most once a second per kind
  printf '{}' >"$work/empty.json" # a file: xargs would put the number in place of a literal {}
  seq 20 | xargs -P 20 -I{} curl -s -o /dev/null -D "$work/quota-{}.headers" -w '%{http_code}\n' \
    -H "Authorization: Bearer $alice" -H 'Content-Type: application/json' --data-binary @"$work/empty.json" "$base/api/noop" \
    >"$work/quota-codes.txt" || true
  cp "$work/quota-codes.txt" "$out/fairness-quota-codes.txt" # kept for a look after the run
  local accepted refused pending retry_after
  accepted=$(grep -c '^202$' "$work/quota-codes.txt" || true)
  refused=$(grep -c '^429$' "$work/quota-codes.txt" || true)
  retry_after=$( (grep -il "^retry-after:" "$work"/quota-*.headers || true) | wc -l)
  pending=$(psql_ -Atc "SELECT count(*) FROM jobs WHERE owner_id = 'alice' AND status = 'pending'")
  curl -fsS -X POST -H "Authorization: Bearer $admin" "$base/api/admin/services/noop/resume" >/dev/null
  cat >>"$out/fairness.jsonl" <<JSON
{"measure": "quota_5_of_20_accepted", "value": $accepted, "unit": "jobs"}
{"measure": "quota_5_of_20_refused_429", "value": $refused, "unit": "jobs"}
{"measure": "quota_429_with_retry_after", "value": $retry_after, "unit": "answers"}
{"measure": "quota_5_of_20_pending_after", "value": $pending, "unit": "jobs"}
JSON

  echo
  echo "Machine: $(nproc) cores shared by the app and PostgreSQL. Owner A: $backlog jobs of $sleep_ms ms in one"
  echo "batch, then owner B: one job; noop at max-concurrent $concurrent. The fifo run is the reference:"
  echo "ratio = fair / fifo. Targets: B's job done within about two run times with fair (it starts within"
  echo "the next $concurrent claims); A's backlog no slower; the quota admits exactly 5 of 20 concurrent enqueues."
  echo
  print_results "$out/fairness.jsonl"
}

# An RS256 token for user $1, signed with the key start_app made.
fair_token() {
  local now header payload signature
  b64u() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
  now=$(date +%s)
  header=$(printf '{"alg":"RS256","typ":"JWT"}' | b64u)
  payload=$(printf '{"iss":"async-jobs-bench","sub":"%s","groups":["user"],"iat":%d,"exp":%d}' \
    "$1" "$now" "$((now + 7200))" | b64u)
  signature=$(printf '%s.%s' "$header" "$payload" | openssl dgst -sha256 -sign "$keys/private.pem" -binary | b64u)
  printf '%s.%s.%s' "$header" "$payload" "$signature"
}
