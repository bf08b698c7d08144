# The kinds suite: each kind of the packaged app against the everyday tool a user would run
# instead, on the same files. Sourced by bench/run.sh (`bench/run.sh kinds`), which has started
# the bench PostgreSQL and defined apt_need, start_app, stop_pid, print_results, $work and $out.
#
#   deepsearch  a two-word phrase query over a generated mixed tree  vs  rg -c (and rg -l)
#   fork        a copy of that tree                                   vs  cp -a, same volume
#   zip         an archive of that tree                               vs  zip -q -r -6
#   seo         an audit of generated HTML pages                      vs  an html.parser pass
#
# For each kind: one unmeasured run of each, then BENCH_KINDS_ROUNDS rounds (3) of three measured
# pairs (service, then tool), each pair followed by a check that the two outputs agree; a round
# reports its medians and the kind the median of its rounds. The app is started afresh for every
# kind and lives through its rounds, so the VmHWM read at the end of a kind is that kind's peak
# resident memory, and the first round's warm-up serves the later rounds as well.
# See docs/benchmarks.md, "Kinds suite".

# The phrase deepsearch looks for, and what rg is given to find exactly the same files. Lucene's
# StandardAnalyzer splits text into words the Unicode way (UAX #29) and lowercases them; the
# phrase "query page" matches where the word `query` is followed by the word `page`, whatever
# non-word characters lie between (spaces, punctuation, a line break: hence rg -U). The pattern is
# longer than the phrase because it spells out what a word is: letters, digits, marks and `_`
# belong to a word, so neither word may touch one on its outer side; and a single `.`, `:`, `'` or
# one of their look-alikes between two letters joins them into one word, so it is no separator
# (`query.page` is one word, `query. page` two) and joins no neighbour on (`x.query`, `page:x`).
# The lookarounds need PCRE2 (rg -P), which is also the faster of rg's engines on this pattern.
KINDS_PHRASE='query page'
kinds_rg_pattern() {
  local first second
  read -r first second <<<"$KINDS_PHRASE"
  local word='\p{L}\p{N}\p{M}_'
  local join=".:'\\x{00B7}\\x{0387}\\x{05F4}\\x{2018}\\x{2019}\\x{2024}\\x{2027}\\x{FE13}\\x{FE52}\\x{FE55}\\x{FF07}\\x{FF0E}\\x{FF1A}"
  printf '%s' "(?i)(?<![$word])(?<!\\p{L}[$join])$first(?:[^$word$join]|[^$word]{2,})$second(?![$word])(?![$join]\\p{L})"
}

suite_kinds() {
  local rounds=${BENCH_KINDS_ROUNDS:-3}       # rounds of 3 measured pairs per kind
  local mib=${BENCH_KINDS_MIB:-512}           # the generated tree
  local pages=${BENCH_KINDS_PAGES:-2000}      # the generated site for seo
  local heap=${BENCH_KINDS_HEAP:-512m}        # the JVM heap the container image gives the app
  # The collector options the JVM image's start script (ubi9 openjdk-17-runtime, run-java.sh)
  # passes: the parallel collector, told to give back memory it does not need. Left to itself on
  # this 24 GiB machine the JVM would take G1. BENCH_KINDS_GC= (empty) leaves the choice to it.
  local gc=${BENCH_KINDS_GC-"-XX:+UseParallelGC -XX:MinHeapFreeRatio=10 -XX:MaxHeapFreeRatio=20 -XX:GCTimeRatio=4 -XX:AdaptiveSizePolicyWeight=90"}
  local kinds=${BENCH_KINDS:-"deepsearch fork zip seo"}

  apt_need ripgrep rg
  apt_need zip zip
  apt_need unzip unzip
  apt_need curl curl
  apt_need openssl openssl
  local load_before suite_start=$SECONDS
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  local times="$work/kinds-times" checks="$out/kinds-checks.txt"
  rm -rf "$times" && mkdir -p "$times"
  rm -f "$out/kinds.jsonl" "$out/kinds-rss.txt" && : >"$checks"
  local pattern home
  pattern=$(kinds_rg_pattern)
  local globs=(--iglob '*.{txt,md,html,htm}')

  # One job through the app: its status view (with "seconds") goes to $work/job.json.
  kinds_job() {
    python3 bench/kind_job.py --port "$app_port" --token-file "$keys/token" --kind "$1" \
      --body "$2" ${3:+--download "$3"} >"$work/job.json"
  }
  # Appends "label seconds" to $times/$1 for the command after $2.
  kinds_timed() {
    local file=$1 label=$2 t0 t1
    shift 2
    t0=$EPOCHREALTIME
    "$@"
    t1=$EPOCHREALTIME
    echo "$label $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f", b - a}')" >>"$times/$file"
  }
  kinds_seconds() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["seconds"])' "$work/job.json"; }
  # A check that fails is reported at once and fails the suite at the end, after the figures.
  local failed_checks=0
  fail() { echo "bench: CHECK FAILED: $*" >&2; failed_checks=$((failed_checks + 1)); }

  # deepsearch: the phrase through the service (every hit listed, limit 1000) against rg.
  deepsearch_service() {
    kinds_job deepsearch "{\"root\": \"tree\", \"query\": \"\\\"$KINDS_PHRASE\\\"\", \"limit\": 1000}" \
      "$work/results.json"
    echo "$1 $(kinds_seconds)" >>"$times/deepsearch-service"
  }
  deepsearch_tool() {
    (cd "$home" && kinds_timed deepsearch-rg-c "$1" rg -P -U -c "${globs[@]}" -e "$pattern" tree >"$work/rg-c.txt")
    (cd "$home" && kinds_timed deepsearch-rg-l "$1" rg -P -U -l "${globs[@]}" -e "$pattern" tree >"$work/rg-l.txt")
  }
  deepsearch_check() {
    python3 - "$work/results.json" "$work/rg-c.txt" "$work/rg-l.txt" <<'PY' >>"$checks" || fail "deepsearch and rg disagree, see $checks"
import json, sys
results = json.load(open(sys.argv[1]))
ours = {h["path"] for h in results["hits"]}
counted = {line.rsplit(":", 1)[0] for line in open(sys.argv[2]) if line.strip()}
listed = {line.strip() for line in open(sys.argv[3]) if line.strip()}
ok = results["total_hits"] == len(ours) and ours == counted == listed and ours
print("deepsearch: %d files searched, %d hits (total %d), rg -c %d files, rg -l %d files: %s"
      % (results["documents_searched"], len(ours), results["total_hits"], len(counted), len(listed),
         "same set" if ok else "DIFFERENT"))
for p in sorted(ours ^ listed)[:20]:
    print("  only in", "the service" if p in ours else "rg", p)
sys.exit(0 if ok else 1)
PY
    echo "$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["hits"]))' "$work/results.json")" \
      >"$work/deepsearch-files"
  }

  # fork: the tree copied by the service and by cp -a, both inside the caller's folder.
  local copies=0
  fork_service() {
    copies=$((copies + 1))
    kinds_job fork "{\"source\": \"tree\", \"target\": \"forks/f$copies\"}"
    echo "$1 $(kinds_seconds)" >>"$times/fork-service"
  }
  fork_tool() {
    mkdir -p "$home/copies"
    kinds_timed fork-cp-a "$1" cp -a "$home/tree" "$home/copies/c$copies"
  }
  fork_check() {
    python3 - "$home/forks/f$copies" "$home/copies/c$copies" "$home/tree" <<'PY' >>"$checks" || fail "fork's copy differs from cp -a's, see $checks"
import filecmp, os, stat, sys
ours, theirs, source = sys.argv[1:]

def listing(root):
    entries = {}
    for folder, dirs, files in os.walk(root):
        for name in [""] + dirs + files if folder == root else dirs + files:
            path = os.path.join(folder, name) if name else folder
            st = os.lstat(path)
            entries[os.path.relpath(path, root)] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode),
                                                    st.st_mtime_ns, st.st_size if stat.S_ISREG(st.st_mode) else 0)
    return entries

a, b = listing(ours), listing(theirs)
diffs = [p for p in sorted(a.keys() | b.keys()) if a.get(p) != b.get(p)]
files = [p for p, e in a.items() if stat.S_ISREG(e[0])]
diffs += [p + " (content)" for p in files if p in b and not filecmp.cmp(os.path.join(ours, p), os.path.join(theirs, p), shallow=False)]
ok = not diffs and a == listing(source)
print("fork: %d entries, %d files, modes, mtimes and contents %s cp -a's copy" % (len(a), len(files), "equal to" if ok else "DIFFERENT from"))
for p in diffs[:20]:
    print("  differs:", p, a.get(p.replace(" (content)", "")), b.get(p.replace(" (content)", "")))
sys.exit(0 if ok else 1)
PY
    rm -rf "$home/forks/f$copies" "$home/copies/c$copies"
    sync
  }

  # zip: the tree archived by the service and by Info-ZIP from the caller's folder.
  zip_service() {
    kinds_job zip '{"paths": ["tree"]}'
    echo "$1 $(kinds_seconds)" >>"$times/zip-service"
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["uid"])' "$work/job.json" >"$work/zip.uid"
  }
  zip_tool() {
    rm -f "$work/ref.zip"
    (cd "$home" && kinds_timed zip-zip-r6 "$1" zip -q -r -6 "$work/ref.zip" tree)
  }
  zip_check() {
    local archive
    archive="$data/artifacts/zip/$(cat "$work/zip.uid")/archive.zip"
    python3 - "$archive" "$work/ref.zip" <<'PY' >>"$checks" || fail "the service's archive differs from zip's, see $checks"
import subprocess, sys

def entries(archive):
    # unzip -lv: Length Method Size Cmpr Date Time CRC-32 Name, between two rules of dashes.
    lines = subprocess.run(["unzip", "-lv", archive], capture_output=True, text=True, check=True).stdout.splitlines()
    rules = [i for i, l in enumerate(lines) if l.startswith("--------")]
    rows = {}
    for line in lines[rules[0] + 1:rules[1]]:
        length, _, _, _, _, _, crc, name = line.split(None, 7)
        rows[name] = (int(length), crc)
    return rows

ours, theirs = entries(sys.argv[1]), entries(sys.argv[2])
diffs = [n for n in sorted(ours.keys() | theirs.keys()) if ours.get(n) != theirs.get(n)]
print("zip: %d entries, names, lengths and CRC-32s %s zip's" % (len(ours), "equal to" if not diffs else "DIFFERENT from"))
for n in diffs[:20]:
    print("  differs:", n, ours.get(n), theirs.get(n))
sys.exit(0 if not diffs else 1)
PY
    rm -f "$archive"
  }

  # seo: the site audited by the service against one html.parser pass over its pages.
  seo_service() {
    kinds_job seo '{"site": "site"}'
    echo "$1 $(kinds_seconds)" >>"$times/seo-service"
  }
  seo_tool() {
    kinds_timed seo-html-parser "$1" python3 bench/seo_parse.py "$home/site" >"$work/seo-parse.txt"
  }
  seo_check() {
    python3 - "$work/job.json" "$work/seo-parse.txt" "$pages" <<'PY' >>"$checks" || fail "seo's page count is wrong, see $checks"
import json, sys
audited = json.load(open(sys.argv[1]))["result"]["pages"]
parsed, given = int(open(sys.argv[2]).read()), int(sys.argv[3])
ok = audited == parsed == given
print("seo: %d pages given, %d audited, %d parsed: %s" % (given, audited, parsed, "same" if ok else "DIFFERENT"))
sys.exit(0 if ok else 1)
PY
  }

  local kind round pair first=1
  for kind in $kinds; do
    # A fresh app per kind: its VmHWM at the end is this kind's peak. The first start builds the
    # app (unless BENCH_SKIP_BUILD=1 and a jar exists), the others reuse the jar.
    BENCH_JAVA_OPTS="-Xmx$heap $gc ${BENCH_JAVA_OPTS:-}" BENCH_SKIP_BUILD=$([ "$first" = 1 ] && echo "${BENCH_SKIP_BUILD:-0}" || echo 1) \
      start_app "kinds-$kind"
    if [ "$first" = 1 ]; then
      # The inputs, in the caller's folder, made once the app has marked the files layout.
      home="$data/files/user/bench-user"
      mkdir -p "$home"
      echo "bench: writing a $mib MiB tree and a site of $pages pages" >&2
      python3 bench/make_tree.py "$home/tree" --mib "$mib" --seed 1 >"$out/kinds-tree.txt"
      python3 bench/make_site.py "$home/site" --pages "$pages" --seed 1 >/dev/null
      sync
      first=0
    fi
    echo "$kind start $(awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$app_pid/status")" >>"$out/kinds-rss.txt"
    for round in $(seq 1 "$rounds"); do
      echo "bench: $kind, round $round of $rounds ($((SECONDS - suite_start)) s into the suite)" >&2
      if [ "$round" = 1 ]; then # the app lives through the kind's rounds: one warm-up will do
        "${kind}_service" warm
        "${kind}_tool" warm
        "${kind}_check"
      fi
      for pair in 1 2 3; do
        "${kind}_service" "$round"
        "${kind}_tool" "$round"
        "${kind}_check"
      done
    done
    echo "$kind peak $(awk '/^VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$app_pid/status")" >>"$out/kinds-rss.txt"
    stop_pid "$app_pid"
    local kept=() pid
    for pid in "${started[@]}"; do [ "$pid" = "$app_pid" ] || kept+=("$pid"); done
    started=(${kept[@]+"${kept[@]}"})
  done

  python3 - "$out/kinds.jsonl" "$times" "$out/kinds-rss.txt" "$work/deepsearch-files" "$kinds" <<'PY'
import json, os, statistics, sys
path, times, rss_file, found_file, kinds = sys.argv[1:]
rss = {}
for line in open(rss_file):
    kind, what, mib = line.split()
    rss[(kind, what)] = float(mib)

def rounds(name):
    """The median of each round's three measured runs, in round order."""
    by_round = {}
    for line in open(os.path.join(times, name)):
        label, seconds = line.split()
        if label != "warm":
            by_round.setdefault(int(label), []).append(float(seconds))
    return [statistics.median(by_round[r]) for r in sorted(by_round)]

tools = {"deepsearch": [("rg_c", "deepsearch-rg-c"), ("rg_l", "deepsearch-rg-l")],
         "fork": [("cp_a", "fork-cp-a")], "zip": [("zip_r6", "zip-zip-r6")],
         "seo": [("html_parser", "seo-html-parser")]}
rows = []
for kind in kinds.split():
    service = rounds(kind + "-service")
    service_s = statistics.median(service)
    for i, (tool, name) in enumerate(tools[kind]):
        tool_rounds = rounds(name)
        tool_s = statistics.median(tool_rounds)
        rows.append({"measure": f"{kind}_{tool}_seconds", "value": round(tool_s, 3), "unit": "s",
                     "rounds": [round(t, 3) for t in tool_rounds]})
        if i == 0:
            main_s = tool_s
            ratios = [t / s for t, s in zip(tool_rounds, service)]
        else:
            rows[-1]["ratio"] = round(tool_s / service_s, 3)
    rows.insert(len(rows) - len(tools[kind]), {
        "measure": f"{kind}_service_seconds", "value": round(service_s, 3), "unit": "s",
        "ratio": round(main_s / service_s, 3), "rounds": [round(s, 3) for s in service],
        "ratio_rounds": [round(r, 3) for r in ratios]})
    if kind == "deepsearch":
        rows.append({"measure": "deepsearch_matching_files", "value": int(open(found_file).read()), "unit": "files"})
    rows.append({"measure": f"{kind}_app_rss_at_start", "value": rss[(kind, "start")], "unit": "MiB"})
    rows.append({"measure": f"{kind}_app_peak_rss", "value": rss[(kind, "peak")], "unit": "MiB"})
with open(path, "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
PY
  echo "Machine: $(nproc) cores shared by the app, PostgreSQL and the tools. Load average before: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Inputs: $(cat "$out/kinds-tree.txt") ($mib MiB tree, seed 1); $pages generated pages for seo. Phrase: \"$KINDS_PHRASE\"."
  echo "Each kind: one unmeasured run of each, then $rounds rounds of 3 measured pairs (service, tool); medians of"
  echo "the rounds' medians. ratio = tool seconds / service seconds (on a tool line: that tool / the service): higher"
  echo "is better for the service. Peak RSS: VmHWM of an app (-Xmx$heap $gc) started for that kind alone."
  echo "Checks, after every pair (warm-ups too), how many times each outcome was seen ($checks):"
  grep -v '^  ' "$checks" | sort | uniq -c
  echo "Suite time: $((SECONDS - suite_start)) s."
  echo
  print_results "$out/kinds.jsonl"
  if [ "$failed_checks" -gt 0 ]; then
    echo
    echo "bench: $failed_checks checks FAILED: an output of the service differs from the tool's:"
    awk '/DIFFERENT/ {show = 1; print; next} /^  / {if (show) print; next} {show = 0}' "$checks" | head -n 40
    exit 1
  fi
}
