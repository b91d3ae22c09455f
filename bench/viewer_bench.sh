#!/usr/bin/env bash
# The dataset viewer's benchmark (issue 15; figures in docs/benchmarks.md).
#
#   bench/viewer_bench.sh [PATH_TO_HANGAR]        (default build/hangar)
#
# 1. A table of ROWS rows (default 10,000,000; bench/gen_table.py, about 1 GB of CSV,
#    cached in ${HANGAR_BENCH:-~/.cache/hangar-bench}) is converted by DuckDB alone
#    (build/bench/viewer-copy-peer: the export's read_csv + COPY, same memory and threads)
#    before and after the hub's run: the peer's time.
# 2. `hangar serve` (embedded defaults, a temporary data dir) gets a small dataset (the
#    Boston CSV) exported first, then the big CSV pushed with git-lfs. From the push's end
#    to the export being Ready: the hub's time, with its RSS sampled every 0.2 s, and
#    /rows of the small dataset at 20 requests/s all along (their latency during the
#    conversion). Then the time until its search index is built (Ready → /search
#    answers), with the RSS meanwhile and the index's size on disk; then a sync and 5 s
#    of rest, so that the index's write-back does not fall into the timed reads.
# 3. On the exported split: /rows of 100 rows at random offsets at 50 requests/s for 20 s
#    (hangar-loadgen, open loop, latency from the scheduled send), then rising rates, 10 s
#    each, to the highest whose p99 stays under 10 ms; /first-rows at 20/s; /filter and
#    /search first pages (five runs of each query, medians), and /statistics once.
# Everything runs on 127.0.0.1 and stops by itself.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${1:-$ROOT/build/hangar}"
LOADGEN="$(dirname "$BIN")/bench/hangar-loadgen"
PEER="$(dirname "$BIN")/bench/viewer-copy-peer"
for b in "$BIN" "$LOADGEN" "$PEER"; do
  [[ -x "$b" ]] || { echo "missing $b: nice bash scripts/build.sh" >&2; exit 2; }
done
source "$ROOT/tests/integration/lib.sh" "$BIN"
ROWS="${ROWS:-10000000}"
CACHE="${HANGAR_BENCH:-$HOME/.cache/hangar-bench}"
CSV="$CACHE/viewer-$((ROWS / 1000000))m.csv"
mkdir -p "$CACHE"
[[ -s "$CSV" ]] || nice python3 "$ROOT/bench/gen_table.py" "$CSV" "$ROWS" || die "gen_table"
fetch_inputs
say() { printf '%s\n' "$*"; }
say "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; $(git -C "$ROOT" rev-parse --short HEAD)"
say "table: $CSV, $(stat -c %s "$CSV") bytes, $ROWS rows"

peer() {
  rm -rf "$T/peer" && mkdir -p "$T/peer"
  "$PEER" "$CSV" "$T/peer" 1073741824 "$(nproc)" 10240 20
}
P1="$(peer)" || die "peer conversion failed"
say "peer (DuckDB alone) before: ${P1} s"

DATA="$T/data"
mkdir -p "$DATA"
new_user alice --email a@example.org
TOKEN="$(new_token alice --name bench --role write)"
start_server "$DATA" || die "hangar serve did not start"
HA="$(cred_helper alice "$TOKEN")"
push_dataset() {  # push_dataset NAME FILE...
  local name="$1"; shift
  must_create "$TOKEN" "$name" alice dataset false
  local w="$T/$name"
  lfs_clone "$HA" "$BASE/datasets/alice/$name" "$w" '*.csv'
  mkdir -p "$w/data"
  cp "$@" "$w/data/"
  commit_push "$HA" "$w" data
}
ready() { req GET "$BASE/size?dataset=alice/$1"; [[ "$ST" == 200 && "$(jbody '.pending | length')" == 0 ]]; }
push_dataset small "$INPUTS/tables/boston.csv"
wait_until 60 ready small || die "the small dataset was not exported"

push_dataset big "$CSV"
T0="$(date +%s%N)"
# During the conversion: RSS samples and reads of the small dataset.
( while kill -0 "$SERVER_PID" 2>/dev/null; do
    awk '/VmRSS/ {print $2}' "/proc/$SERVER_PID/status"; sleep 0.2
  done >"$T/rss" ) &
RSS_PID=$!
echo "/rows?dataset=alice/small&config=default&split=train&offset=100&length=100" >"$T/small.paths"
# For as long as the peer took: the conversion is running all that time.
DURING_S="$(awk -v p="$P1" 'BEGIN { d = int(p); print (d < 5 ? 5 : d) }')"
"$LOADGEN" -R 20 -d "$DURING_S" -c 4 --paths "$T/small.paths" --json "$BASE/" >"$T/during.json" 2>&1 &
LG_PID=$!
wait_until 900 ready big || die "the big dataset was not exported in 15 minutes"
T1="$(date +%s%N)"
wait "$LG_PID"
kill "$RSS_PID" 2>/dev/null; wait "$RSS_PID" 2>/dev/null
HUB_S="$(awk -v a="$T0" -v b="$T1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')"
say "hub export (push end → Ready, poll 0.2 s): ${HUB_S} s"
grep -h "alice/big default/train" "$SERVER_ERR" | sed 's/^.*\] /  the job: /' 
sort -n "$T/rss" | awk '{ v[NR] = $1 } END { printf "hub RSS during the export: median %.0f MiB, max %.0f MiB (%d samples)\n", v[int((NR + 1) / 2)] / 1024, v[NR] / 1024, NR }'
P2="$(peer)" || die "peer conversion failed"
say "peer (DuckDB alone) after: ${P2} s"
awk -v h="$HUB_S" -v a="$P1" -v b="$P2" 'BEGIN { m = (a < b ? a : b); printf "ratio hub / best peer: %.2f×\n", h / m }'

report() {  # report LABEL JSON_FILE
  jq -r --arg l "$1" '"\($l): sent \(.sent), 200s \(.status["200"] // 0), achieved \(.achieved_rps)/s, p50 \(.p50_ms) ms, p99 \(.p99_ms) ms, max \(.max_ms) ms"' "$2" 2>/dev/null ||
    { echo "$1: (no report)"; head -c 400 "$2"; }
}
report "/rows of the small dataset during the first ${DURING_S} s of the export, 20 req/s" "$T/during.json"
D="dataset=alice/big&config=default&split=train"
# The search index is built after the export, on its own thread: its time and the hub's
# RSS meanwhile, before the timed reads (they would share the two cores with it).
( while kill -0 "$SERVER_PID" 2>/dev/null; do
    awk '/VmRSS/ {print $2}' "/proc/$SERVER_PID/status"; sleep 0.2
  done >"$T/rss-index" ) &
RSS_PID=$!
indexed() { req GET "$BASE/search?$D&query=zephyr&length=1"; [[ "$ST" == 200 ]]; }
wait_until 900 indexed || die "the big dataset's search index was not built in 15 minutes"
kill "$RSS_PID" 2>/dev/null; wait "$RSS_PID" 2>/dev/null
say "search index built (export Ready → /search 200, poll 0.2 s): $(awk -v a="$T1" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }') s, $(du -sm "$DATA/viewer/search" | cut -f1) MiB on disk"
# The index's files (300 MiB for 10M rows) are still being written back to disk: the timed
# reads below start once that is done (sync, then 5 s), so they measure a steady state.
sync; sleep 5
sort -n "$T/rss-index" | awk '{ v[NR] = $1 } END { printf "hub RSS during the index build: median %.0f MiB, max %.0f MiB (%d samples)\n", v[int((NR + 1) / 2)] / 1024, v[NR] / 1024, NR }'
req GET "$BASE/rows?$D&length=1"
TOTAL="$(jbody .num_rows_total)"
say "exported rows: $TOTAL"
# Each step reads its own random offsets (the seed is its rate): hangar-loadgen sends a
# file's paths in turn from the first, so steps sharing one file would replay each other.
row_paths() {  # row_paths SEED >FILE
  python3 - "$TOTAL" "$D" "$1" <<'PY'
import random, sys
total, d, seed = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)
for _ in range(20000):
    print(f"/rows?{d}&offset={rng.randrange(0, max(1, total - 100))}&length=100")
PY
}
row_paths 50 >"$T/rows50.paths"
"$LOADGEN" -R 50 -d 20 -w 2 -c 8 --paths "$T/rows50.paths" --json "$BASE/" >"$T/r50.json" 2>&1
report "/rows random offset, 50 req/s" "$T/r50.json"
BEST=0
for rate in 100 200 400 800 1600; do
  row_paths "$rate" >"$T/rows$rate.paths"
  "$LOADGEN" -R "$rate" -d 10 -w 1 -c 32 --paths "$T/rows$rate.paths" --json "$BASE/" >"$T/r$rate.json" 2>&1
  report "/rows random offset, $rate req/s" "$T/r$rate.json"
  p99="$(jq -r '.p99_ms' "$T/r$rate.json" 2>/dev/null)"
  awk -v p="${p99:-999}" 'BEGIN { exit !(p < 10) }' && BEST=$rate || break
done
say "highest rate with p99 < 10 ms (of 100, 200, 400, 800, 1600): $BEST req/s"
echo "/first-rows?$D" >"$T/first.paths"
"$LOADGEN" -R 20 -d 10 -c 4 --paths "$T/first.paths" --json "$BASE/" >"$T/first.json" 2>&1
report "/first-rows, 20 req/s" "$T/first.json"

median_time() {  # median_time LABEL URL_QUERY...: five runs, the median time_total
  local label="$1"; shift
  local times=()
  for _ in 1 2 3 4 5; do
    times+=("$(curl -s -o "$T/q.json" -w '%{time_total}' -G "$BASE/$@")")
  done
  printf '%s\n' "${times[@]}" | sort -n | awk -v l="$label" -v n="$(jq -r .num_rows_total "$T/q.json")" \
    'NR == 3 { printf "%s: median %.0f ms (%s rows match)\n", l, $1 * 1000, n }'
}
median_time "/filter \"category\" = 'cat03' (first page)" "filter?$D" --data-urlencode "where=\"category\" = 'cat03'"
median_time "/filter \"value\" > 999.9 (first page)" "filter?$D" --data-urlencode 'where="value" > 999.9'
median_time "/filter \"value\" > 500 orderby \"value\" DESC" "filter?$D" --data-urlencode 'where="value" > 500' --data-urlencode 'orderby="value" DESC'
median_time "/filter \"name\" LIKE 'star%' AND \"flag\"" "filter?$D" --data-urlencode "where=\"name\" LIKE 'star%' AND \"flag\" = true"
median_time "/search 'galaxy comet' (first page)" "search?$D" --data-urlencode "query=galaxy comet"
median_time "/search 'zephyr' (first page)" "search?$D" --data-urlencode "query=zephyr"
awk '/VmRSS/ {printf "hub RSS after the searches: %.0f MiB\n", $2 / 1024}' "/proc/$SERVER_PID/status"
S0="$(date +%s%N)"
req GET "$BASE/statistics?$D"
say "/statistics (first call, computed): $ST in $(( ($(date +%s%N) - S0) / 1000000 )) ms"
S0="$(date +%s%N)"
req GET "$BASE/statistics?$D"
say "/statistics (second call, kept): $ST in $(( ($(date +%s%N) - S0) / 1000000 )) ms"
awk '/VmRSS/ {printf "hub RSS at the end: %.0f MiB\n", $2 / 1024}' "/proc/$SERVER_PID/status"
stop_server
