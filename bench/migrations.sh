# shellcheck shell=bash disable=SC2154 # $out, $work, $pg_port, $PG_BIN come from bench/run.sh
# The migrations suite: how long each migration after V1 holds a lock on `jobs` that stops
# enqueues and claims, on a table of BENCH_MIGRATION_ROWS rows (10^6 by default) shaped like a busy
# production one. Sourced by bench/run.sh, whose helpers ($out, $work, psql_, print_results, ...)
# it uses; bench/run.sh then calls suite_migrations. See docs/benchmarks.md, "Migration locks", and
# docs/operations.md, "Upgrades and rollbacks".
#
# V1 is applied to the empty database and `jobs` filled with SQL, then bench/migrations.py applies
# V2 onwards one at a time as Flyway would (one transaction per script, or statement by statement
# outside a transaction for a script of CONCURRENTLY statements) while a probe enqueues and claims
# one statement at a time and polls pg_locks. Per migration: wall time, the strongest lock mode the
# migrating session held or waited for on `jobs`, how long it held or waited for one that blocks
# enqueues and claims (ShareLock or stronger), and the longest enqueue and claim during it. The
# reference is the probe's p99 latency with no migration running, measured in the same run; a
# stall's ratio is stall / reference. BENCH_MIGRATION_TIMEOUT (300 s) bounds each migration.

suite_migrations() {
  local rows=${BENCH_MIGRATION_ROWS:-1000000}
  local timeout=${BENCH_MIGRATION_TIMEOUT:-300}
  local migrations=src/main/resources/db/migration
  local python
  python=$(migrations_python)
  rm -f "$out/migrations.jsonl"

  # Flyway's placeholders (${...}) are not used by our scripts; fail loudly if one appears, since
  # psql would apply it literally.
  # shellcheck disable=SC2016 # a literal ${
  if grep -l '\${' "$migrations"/V*.sql >/dev/null 2>&1; then
    echo "bench: a migration uses a Flyway placeholder, which this suite does not replace" >&2
    exit 1
  fi

  psql_ -X -v ON_ERROR_STOP=1 --single-transaction -f "$migrations/V1__create_jobs.sql" >/dev/null
  echo "bench: filling jobs with $rows rows" >&2
  local fill_start=$SECONDS
  migrations_fill "$rows"
  psql_ -c "VACUUM ANALYZE jobs" >/dev/null
  local shape
  shape=$(psql_ -At -F ' ' -c "SELECT pg_size_pretty(pg_total_relation_size('jobs')),
                                      round(avg(pg_column_size(payload))),
                                      count(*) FILTER (WHERE status = 'pending'),
                                      count(*) FILTER (WHERE status = 'running'),
                                      count(*) FILTER (WHERE status = 'failed') FROM jobs")
  echo "bench: filled and vacuumed in $((SECONDS - fill_start)) s (table and indexes, payload bytes," \
    "pending, running, failed: $shape)" >&2

  local run_start=$SECONDS
  "$python" bench/migrations.py --port "$pg_port" --psql "$PG_BIN/psql" --migrations "$migrations" \
    --timeout "$timeout" --rows "$work/migrations-rows.jsonl"
  local migrate_s=$((SECONDS - run_start))

  python3 - "$work/migrations-rows.jsonl" "$out/migrations.jsonl" "$out/migrations-table.txt" <<'PY'
import json, sys
src, jsonl, table = sys.argv[1:]
lines = [json.loads(l) for l in open(src) if l.strip()]
ref, rows = lines[0], lines[1:]
out = [
    {"measure": "reference_enqueue_p99", "value": ref["enqueue_p99_ms"], "unit": "ms"},
    {"measure": "reference_claim_p99", "value": ref["claim_p99_ms"], "unit": "ms"},
    {"measure": "probe_errors", "value": ref["probe_errors"], "unit": "count"},
]
text = [f"{'version':<8} {'description':<28} {'transaction':<19} {'wall ms':>9} {'lock on jobs':<29} "
        f"{'blocking ms':>11} {'enqueue ms':>10} {'claim ms':>9}"]
for r in rows:
    v = f"v{r['version']}"
    lock = r["lock"] + (" (waited)" if r["lock_waited"] else "")
    out.append({"measure": f"{v}_wall", "value": r["wall_ms"], "unit": "ms",
                "description": r["description"], "lock": r["lock"], "lock_waited": r["lock_waited"],
                "waited_behind": r["waited_behind"]})
    out.append({"measure": f"{v}_blocking_lock_held", "value": r["blocking_ms"], "unit": "ms",
                "lock": r["lock"]})
    out.append({"measure": f"{v}_longest_enqueue", "value": r["enqueue_stall_ms"], "unit": "ms",
                "ratio": round(r["enqueue_stall_ms"] / ref["enqueue_p99_ms"], 2)})
    out.append({"measure": f"{v}_longest_claim", "value": r["claim_stall_ms"], "unit": "ms",
                "ratio": round(r["claim_stall_ms"] / ref["claim_p99_ms"], 2)})
    text.append(f"{'V' + str(r['version']):<8} {r['description'][:28]:<28} {r['transaction']:<19} "
                f"{r['wall_ms']:>9.0f} {lock:<29} {r['blocking_ms']:>11.0f} "
                f"{r['enqueue_stall_ms']:>10.1f} {r['claim_stall_ms']:>9.1f}")
for r in rows:
    for b in r["waited_behind"]:
        text.append(f"V{r['version']} waited for its lock behind {b}")
if ref["first_error"]:
    text.append(f"first probe error: {ref['first_error']}")
with open(jsonl, "w") as f:
    for r in out:
        f.write(json.dumps(r) + "\n")
with open(table, "w") as f:
    f.write("\n".join(text) + "\n")
PY

  echo
  echo "Machine: $(nproc) cores shared by PostgreSQL, the probe and the migrations. jobs: $rows rows"
  echo "($shape: table and indexes, average payload bytes, pending, running, failed). V2 onwards applied"
  echo "one at a time in ${migrate_s} s, as Flyway would. Lock: the strongest mode the migrating session held"
  echo "or waited for on jobs; blocking ms: how long it held or waited for ShareLock or stronger (which"
  echo "stops enqueues and claims; 10 ms = less than one poll); enqueue/claim ms: the longest probe"
  echo "statement during the migration. Ratio = that stall / the probe's p99 with no migration running."
  echo
  cat "$out/migrations-table.txt"
  echo
  print_results "$out/migrations.jsonl"
}

# A python3 that has psycopg2: the one on the PATH, else Debian's, installed with apt when missing.
migrations_python() {
  if python3 -c 'import psycopg2' 2>/dev/null; then
    echo python3
    return
  fi
  if ! /usr/bin/python3 -c 'import psycopg2' 2>/dev/null; then
    echo "bench: installing python3-psycopg2 (needs root and apt)" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-psycopg2 >/dev/null
  fi
  echo /usr/bin/python3
}

# Fills the V1 jobs table with $1 rows shaped like a busy production table: created over the last
# seven days in uid (time) order; the newest 2 % still pending (60 %) or running (20 %); 2 % of the
# rest failed, the others done; six kinds, 1,000 owners (a tenth of them services); payloads of
# about 100-300 bytes, results on done jobs; kept seven days after they finish, one kind a day, so
# some are already expired. In chunks of 250,000 rows, each its own transaction.
migrations_fill() {
  local total=$1 from=0 chunk
  while [ "$from" -lt "$total" ]; do
    chunk=$((total - from < 250000 ? total - from : 250000))
    psql_ -v ON_ERROR_STOP=1 -c "
      INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, result, error, retry_count,
                        created_at, started_at, completed_at, updated_at, duration_ms, expires_at,
                        bytes_in, bytes_out, item_count)
      SELECT (lpad(to_hex((extract(epoch FROM t) * 1000)::bigint), 12, '0')
              || substr(md5(i::text), 1, 20))::uuid,
             k, s,
             CASE WHEN i % 10 = 0 THEN 'service' ELSE 'user' END, 'owner-' || (i * 7919::bigint % 1000),
             jsonb_build_object('paths', jsonb_build_array('/data/files/user/owner-' || (i * 7919::bigint % 1000)
                                                          || '/projects/' || (i % 5000)),
                                'name', 'archive-' || i, 'level', i % 9,
                                'note', repeat('n', (i * 37) % 170)),
             CASE WHEN s = 'done' THEN jsonb_build_object('file', 'artifacts/' || k || '/' || i || '/out.zip',
                                                          'files', i % 4000, 'bytes_out', (i % 100000) * 37) END,
             CASE WHEN s = 'failed' THEN 'IOException: No space left on device' END,
             CASE WHEN i % 97 = 0 THEN 1 ELSE 0 END,
             t,
             CASE WHEN s <> 'pending' THEN t + interval '1 second' END,
             CASE WHEN s IN ('done', 'failed') THEN t + interval '3 seconds' END,
             t + CASE WHEN s IN ('done', 'failed') THEN interval '3 seconds' ELSE interval '0' END,
             CASE WHEN s IN ('done', 'failed') THEN 2000 + i % 500 END,
             t + CASE WHEN k = 'seo' THEN interval '1 day' ELSE interval '7 days' END,
             CASE WHEN s IN ('done', 'failed') THEN 1000 + i % 7000 END,
             CASE WHEN s = 'done' THEN 2000 + i % 11000 END,
             CASE WHEN s IN ('done', 'failed') THEN i % 400 END
        FROM generate_series($from + 1, $from + $chunk) AS i,
             LATERAL (SELECT now() - interval '7 days' + i * (interval '7 days' / $total),
                             (ARRAY['zip', 'fork', 'seo', 'deepsearch', 'seo_meta', 'noop'])[1 + i % 6]) AS g(t, k),
             LATERAL (SELECT CASE WHEN i > $total - $total / 50
                                  THEN (ARRAY['pending', 'pending', 'pending', 'running', 'done'])[1 + i % 5]
                                  WHEN i % 50 = 7 THEN 'failed' ELSE 'done' END) AS st(s)" >/dev/null
    from=$((from + chunk))
  done
}
