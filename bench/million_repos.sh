#!/usr/bin/env bash
# 1,000,000 repos in one instance (issue 17, "Speed and scale"), on SQLite and on
# PostgreSQL: the time to create them, then the p99 of model info, HEAD /resolve, the
# listing API and the web listing with a search filter and a sort, and the home page, the
# single-request latency of each, and the disk and memory the instance costs.
#
#   bench/million_repos.sh                  # 1,000,000 repos
#   BENCH_QUICK=1 bench/million_repos.sh    # 20,000 repos
#
# The repos are made by the bulk path, bench/bulk_repos.cc (hangar-bulk-repos): template
# repos made and maintained by the project's own code, copies of them by mkdir and hard
# links, rows through db::RepoStore. The git directories are made once and shared by both
# engines; the rows are made per engine (PostgreSQL: a throw-away cluster from
# scripts/pg-server.sh, started with --no-fsync). The API's own create path
# (POST /api/repos/create) is measured beside it on ~200 repos, to show why the bulk path
# is used.
#
# Each endpoint gets BENCH_RATE req/s open loop (bench/loadgen.cc, latency from the
# scheduled send time) for 3 runs of 10 s (+1 s warmup); the table shows the median of
# the runs' p99. Request paths rotate over 1,000 repos spread over the whole range, and
# over 10 search words (each matches ~3% of the repos). The server runs with
# gc.interval_s = 0: its hourly GC and maintenance sweep would walk every repo during the
# runs (the bulk repos carry a maintenance state, so none is due, but the walk is not what
# is measured here).
#
# Environment:
#   BENCH_COUNT     repos (default 1000000; 20000 with BENCH_QUICK=1)
#   BENCH_THREADS   hangar-bulk-repos threads for the dirs and SQLite (default 4);
#                   BENCH_PG_THREADS for PostgreSQL's rows (default 8)
#   BENCH_RATE      req/s of each endpoint (default 200)
#   BENCH_REPS      runs per endpoint (default 3);  BENCH_DUR  seconds per run (default 10)
#   BENCH_ENGINES   "sqlite postgres" (default), or one of them
#   BENCH_API_REPOS repos created through the API (default 200)
#   BENCH_DIR       an empty directory for the data dir and the cluster (default: a new
#                   /tmp/hangar-million.XXXXXX); at 1,000,000 repos it needs ~36 GB and
#                   ~8,100,000 inodes (measured: volume 30.6 GiB, 8.0M inodes; SQLite 0.9 GiB)
#   BENCH_KEEP=1    keep the data dir and the cluster (stopped) at the end
#   HANGAR_BIN, HANGAR_LOADGEN (loadtest/lib.sh); HANGAR_BULK: hangar-bulk-repos binary
#                   (default: newest build*/bench/hangar-bulk-repos)
source "$(dirname "$0")/../loadtest/lib.sh"

QUICK=${BENCH_QUICK:-0}
N=${BENCH_COUNT:-$([ "$QUICK" = 1 ] && echo 20000 || echo 1000000)}
THREADS=${BENCH_THREADS:-4}
PG_THREADS=${BENCH_PG_THREADS:-8}
RATE=${BENCH_RATE:-200}
REPS=${BENCH_REPS:-3}
DUR=${BENCH_DUR:-10}
ENGINES=${BENCH_ENGINES:-sqlite postgres}
API_N=${BENCH_API_REPOS:-200}
WORDS="llama mistral nova orbit cedar ember raven sage comet prism"
# Requests of the single-request figure, sequential.
SINGLES=10
export HANGAR_GC_INTERVAL_S=0

find_hangar >/dev/null  # fails early without a hangar binary
LG=$(loadgen_bin)
BULK=${HANGAR_BULK:-$(ls -t "$LT_ROOT"/build*/bench/hangar-bulk-repos 2>/dev/null | head -1 || true)}
[ -x "$BULK" ] || {
  echo "no hangar-bulk-repos: cmake --build build --target hangar-bulk-repos, or set HANGAR_BULK" >&2
  exit 1
}

if [ -n "${BENCH_DIR:-}" ]; then
  MR_DIR=$BENCH_DIR MR_OWN=0
  mkdir -p "$MR_DIR"
  [ -z "$(ls -A "$MR_DIR")" ] || { echo "BENCH_DIR $MR_DIR is not empty" >&2; exit 1; }
else
  MR_DIR=$(mktemp -d /tmp/hangar-million.XXXXXX) MR_OWN=1
fi
chmod 755 "$MR_DIR"  # run as root, the PostgreSQL server (user postgres) enters it
DATA=$MR_DIR/data
MR_PG=""

mr_cleanup() {
  local rc=$?
  hangar_stop
  if [ -n "$MR_PG" ]; then "$LT_ROOT/scripts/pg-server.sh" stop "$MR_PG" >/dev/null 2>&1 || true; fi
  if [ "${BENCH_KEEP:-0}" = 1 ]; then
    log "kept $MR_DIR (BENCH_KEEP=1)"
  else
    log "removing $MR_DIR"
    # One rm per org directory, four at a time: a single rm -rf of 1,000,000 repos takes
    # some 25 minutes here, waiting on the journal one unlink after another.
    if [ -d "$DATA/repos/models" ]; then
      find "$DATA/repos/models" -mindepth 1 -maxdepth 1 -print0 | xargs -0 -r -P 4 -n 16 rm -rf
    fi
    rm -rf "$MR_DIR/data" "$MR_DIR/pg" "$MR_DIR/api"
    if [ "$MR_OWN" = 1 ]; then rm -rf "$MR_DIR"; fi
  fi
  lt_cleanup
  exit "$rc"
}
trap mr_cleanup EXIT

declare -A R  # results, keyed "engine.what"

# bulk ARGS... — runs hangar-bulk-repos, its output to stderr; prints its "bulk:" lines.
bulk() {
  "$BULK" --data-dir "$DATA" --count "$N" "$@" >"$LT_TMP/bulk.out"
  cat "$LT_TMP/bulk.out" >&2
  grep '^bulk:' "$LT_TMP/bulk.out"
}

# rate_of LINE — "repos/s" figure of a "bulk: ... = R repos/s" line; secs_of: its seconds.
rate_of() { sed -n 's/.* = \([0-9]*\) repos\/s.*/\1/p' <<<"$1"; }
secs_of() { sed -n 's/.* in \([0-9.]*\) s = .*/\1/p' <<<"$1"; }

# ---------------------------------------------------------------- request paths

"$BULK" --count "$N" --sample 1000 >"$LT_TMP/names"
sed 's|^|/api/models/|' "$LT_TMP/names" >"$LT_TMP/info.paths"
sed 's|^\(.*\)$|/\1/resolve/main/README.md|' "$LT_TMP/names" >"$LT_TMP/resolve.paths"
: >"$LT_TMP/api_list.paths"
: >"$LT_TMP/web_list.paths"
for w in $WORDS; do
  echo "/api/models?search=$w&sort=downloads&limit=20" >>"$LT_TMP/api_list.paths"
  echo "/models?search=$w&sort=downloads" >>"$LT_TMP/web_list.paths"
done
echo "/" >"$LT_TMP/home.paths"
ENDPOINTS="info resolve api_list web_list home"
declare -A METHOD=([info]=GET [resolve]=HEAD [api_list]=GET [web_list]=GET [home]=GET)
declare -A LABEL=(
  [info]="model info \`GET /api/models/ORG/NAME\`"
  [resolve]="\`HEAD /ORG/NAME/resolve/main/README.md\`"
  [api_list]="listing API \`/api/models?search=W&sort=downloads&limit=20\`"
  [web_list]="web listing \`/models?search=W&sort=downloads\`"
  [home]="home page \`/\`")

# ---------------------------------------------------------------- measuring one engine

# fetch EP PATH [curl args] — one request of EP's method (HEAD waits for no body).
fetch() {
  local ep=$1 p=$2
  shift 2
  if [ "${METHOD[$ep]}" = HEAD ]; then curl -s -I "$@" "$HANGAR_URL$p"; else curl -s "$@" "$HANGAR_URL$p"; fi
}

# single EP — median ms of SINGLES sequential requests, on the last paths of EP's list
# (model info and /resolve: repos not read before).
single() {
  local ep=$1 p
  tail -n "$SINGLES" "$LT_TMP/$ep.paths" >"$LT_TMP/single.paths"
  for k in $(seq "$SINGLES"); do
    p=$(sed -n "$(((k - 1) % $(wc -l <"$LT_TMP/single.paths") + 1))p" "$LT_TMP/single.paths")
    fetch "$ep" "$p" -o /dev/null -w '%{time_total}\n'
  done | awk '{print $1 * 1000}' | median | awk '{printf "%.1f\n", $1}'
}

# settle — waits (30 s at most) until the server is idle: under a CPU tenth for half a
# second, so requests an overloaded run gave up on do not run into the next one.
settle() {
  local a b
  for _ in $(seq 60); do
    a=$(awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$HANGAR_PID/stat")
    sleep 0.5
    b=$(awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$HANGAR_PID/stat")
    [ $((b - a)) -ge $(($(getconf CLK_TCK) / 20)) ] || return 0
  done
}

# load ENGINE EP — REPS open-loop runs; sets R[ENGINE.EP.p99|rps|errors].
load() {
  local eng=$1 ep=$2 k out runs
  for k in $(seq "$REPS"); do
    out="$LT_TMP/$eng.$ep.$k.json"
    "$LG" -m "${METHOD[$ep]}" -R "$RATE" -d "$((DUR + 1))" -w 1 --json \
      --paths "$LT_TMP/$ep.paths" "$HANGAR_URL/" >"$out"
    settle
  done
  read -r "R[$eng.$ep.p99]" "R[$eng.$ep.rps]" "R[$eng.$ep.errors]" runs < <(python3 - "$LT_TMP/$eng.$ep".*.json <<'EOF'
import json, statistics, sys
runs = [json.load(open(f)) for f in sys.argv[1:]]
print(round(statistics.median(r["p99_ms"] for r in runs), 1),
      round(statistics.median(r["achieved_rps"] for r in runs)),
      sum(r["errors"] for r in runs),
      "/".join(str(round(r["p99_ms"], 1)) for r in runs))
EOF
  )
  log "$eng $ep: p99 ${R[$eng.$ep.p99]} ms (runs $runs), ${R[$eng.$ep.rps]} req/s, ${R[$eng.$ep.errors]} errors"
}

# measure ENGINE — serves the instance on ENGINE's database and measures it.
measure() {
  local eng=$1 t0 t1 ep code p
  t0=$(now_s)
  hangar_start "$DATA"
  t1=$(now_s)
  R[$eng.start]=$(elapsed "$t0" "$t1")
  log "$eng: hangar at $HANGAR_URL (listening after ${R[$eng.start]} s)"
  for ep in $ENDPOINTS; do  # each answers 200, once, before it is timed
    p=$(head -n 1 "$LT_TMP/$ep.paths")
    code=$(fetch "$ep" "$p" -o "$LT_TMP/check.out" -w '%{http_code}')
    [ "$code" = 200 ] || {
      echo "${METHOD[$ep]} $p -> $code: $(head -c 300 "$LT_TMP/check.out")" >&2
      exit 1
    }
  done
  # The search must find repos: a listing that matches nothing measures nothing.
  curl -s "$HANGAR_URL$(head -n 1 "$LT_TMP/api_list.paths")" | grep -q '"id"' ||
    { echo "the listing API found no repo for its search" >&2; exit 1; }
  for ep in $ENDPOINTS; do R[$eng.$ep.single]=$(single "$ep"); done
  for ep in $ENDPOINTS; do load "$eng" "$ep"; done
  R[$eng.rss]=$(awk '/^VmRSS:/ {print int($2 / 1024)}' "/proc/$HANGAR_PID/status")
  R[$eng.hwm]=$(awk '/^VmHWM:/ {print int($2 / 1024)}' "/proc/$HANGAR_PID/status")
  hangar_stop
}

# ---------------------------------------------------------------- the instance

log "making $N repo directories under $DATA/repos ($THREADS threads)"
unset HANGAR_DATABASE_URL
# The volume's cost from the filesystem's own counters before and after: du would walk
# the ~8,000,000 inodes of 1,000,000 repos twice (25 minutes here). Anything else writing
# to that filesystem meanwhile is counted too; a resumed run counts only what it made.
fs_used() { sync -f "$MR_DIR"; df --output=used,iused "$MR_DIR" | tail -n 1; }  # DATA is made below
read -r used_kib0 used_inodes0 < <(fs_used)
line=$(bulk --threads "$THREADS" --repos-only | grep 'bulk: dirs')
R[dirs.s]=$(secs_of "$line") R[dirs.rate]=$(rate_of "$line")
read -r used_kib1 used_inodes1 < <(fs_used)
R[repos.kib]=$((used_kib1 - used_kib0)) R[repos.inodes]=$((used_inodes1 - used_inodes0))

for eng in $ENGINES; do
  case $eng in
    sqlite)
      unset HANGAR_DATABASE_URL
      log "sqlite: $N rows"
      line=$(bulk --threads "$THREADS" --rows-only | grep 'bulk: rows')
      R[sqlite.rows.s]=$(secs_of "$line") R[sqlite.rows.rate]=$(rate_of "$line")
      R[sqlite.db.kib]=$(du -ck "$DATA"/hangar.db* | tail -n 1 | cut -f1)
      measure sqlite
      R[sqlite.db.kib]=$(du -ck "$DATA"/hangar.db* | tail -n 1 | cut -f1)
      ;;
    postgres)
      MR_PG=$MR_DIR/pg
      "$LT_ROOT/scripts/pg-server.sh" start "$MR_PG" --watch $$ --no-fsync >/dev/null
      # shellcheck disable=SC1091
      source "$MR_PG/pg.env"
      export HANGAR_DATABASE_URL=$PG_URL
      log "postgres: $N rows ($PG_URL)"
      line=$(bulk --threads "$PG_THREADS" --rows-only | grep 'bulk: rows')
      R[postgres.rows.s]=$(secs_of "$line") R[postgres.rows.rate]=$(rate_of "$line")
      psql_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)/psql
      pg_sql() { "$psql_bin" -h "$PG_SOCKET_DIR" -p "$PG_PORT" -U hangar -d hangar -qAt -c "$1"; }
      # The tables' statistics, as autovacuum gathers them a minute or so after a bulk load:
      # without them the planner guesses, and model info's tag lookup took 10-20 ms at 20,000
      # repos (p99 446 ms at 200 req/s).
      t0=$(now_s)
      pg_sql "VACUUM ANALYZE"
      R[postgres.analyze.s]=$(elapsed "$t0" "$(now_s)")
      log "postgres: VACUUM ANALYZE ${R[postgres.analyze.s]} s"
      measure postgres
      bytes=$(pg_sql "SELECT pg_database_size('hangar')")
      R[postgres.db.kib]=$((bytes / 1024))
      R[postgres.wal.kib]=$(du -sk "$MR_PG/data/pg_wal" | cut -f1)
      unset HANGAR_DATABASE_URL
      "$LT_ROOT/scripts/pg-server.sh" stop "$MR_PG" >/dev/null
      ;;
    *) echo "unknown engine $eng" >&2; exit 1 ;;
  esac
done

# ---------------------------------------------------------------- the API's create path

# Creates $API_N repos through POST /api/repos/create on an empty SQLite instance, first
# from one client, then from four; each client one keep-alive connection.
api_create() {
  local d=$MR_DIR/api kib0 ino0
  hangar_admin_token "$d"
  hangar_start "$d"
  kib0=$(du -sk "$d/repos" | cut -f1) ino0=$(du -s --inodes "$d/repos" | cut -f1)
  read -r "R[api.rate1]" "R[api.rate4]" < <(python3 - "$HANGAR_URL" "$HANGAR_TOKEN" "$API_N" <<'EOF'
import http.client, json, sys, threading, time, urllib.parse
url, token, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
host = urllib.parse.urlparse(url).netloc
def create(names):
    c = http.client.HTTPConnection(host, timeout=60)
    for name in names:
        body = json.dumps({"name": name, "organization": "bench", "type": "model"})
        c.request("POST", "/api/repos/create", body,
                  {"Authorization": "Bearer " + token, "Content-Type": "application/json"})
        r = c.getresponse(); r.read()
        if r.status != 200:
            sys.exit(f"create {name}: HTTP {r.status}")
def rate(names, clients):
    parts = [names[k::clients] for k in range(clients)]
    t0 = time.monotonic()
    ts = [threading.Thread(target=create, args=(p,)) for p in parts]
    for t in ts: t.start()
    for t in ts: t.join()
    return round(len(names) / (time.monotonic() - t0))
half = n // 2
print(rate([f"one-{i}" for i in range(half)], 1), rate([f"four-{i}" for i in range(n - half)], 4))
EOF
  )
  R[api.kib]=$(awk -v a="$(du -sk "$d/repos" | cut -f1)" -v b="$kib0" -v n="$API_N" \
    'BEGIN {printf "%.1f", (a - b) / n}')
  R[api.inodes]=$(awk -v a="$(du -s --inodes "$d/repos" | cut -f1)" -v b="$ino0" -v n="$API_N" \
    'BEGIN {printf "%.1f", (a - b) / n}')
  hangar_stop
}
log "creating $API_N repos through the API"
api_create

# ---------------------------------------------------------------- the table

cell() {  # cell ENGINE EP — "p99 (single)" with a warning when the rate was not kept
  local e=$1 ep=$2 s
  [ -n "${R[$e.$ep.p99]:-}" ] || { echo "–"; return; }
  s="${R[$e.$ep.p99]} ms (${R[$e.$ep.single]} ms)"
  if [ "${R[$e.$ep.errors]}" != 0 ] || [ "${R[$e.$ep.rps]}" -lt $((RATE * 95 / 100)) ]; then
    s="$s ⚠ ${R[$e.$ep.rps]} req/s, ${R[$e.$ep.errors]} errors"
  fi
  echo "$s"
}
per_repo() { awk -v a="$1" -v n="$N" 'BEGIN {printf "%.1f", a / n}'; }
size() {  # size KIB — "812 MiB" or "24.3 GiB"
  awk -v k="$1" 'BEGIN {if (k < 1048576) printf "%.0f MiB", k / 1024; else printf "%.1f GiB", k / 1048576}'
}

cat <<EOF

## $N repos in one instance ($(date -u +%Y-%m-%d), $(nproc) cores, $(uname -r); the run took $((SECONDS / 60)) min)

Bulk path (bench/bulk_repos.cc; $THREADS threads, $PG_THREADS for PostgreSQL's rows): git dirs ${R[dirs.s]} s (${R[dirs.rate]} repos/s), made once for both engines.
Load: $RATE req/s open loop per endpoint, $REPS × $DUR s, median of the p99s; (single) = median of $SINGLES sequential requests.

| | SQLite | PostgreSQL (fsync off) |
| --- | --- | --- |
| rows (bulk, through RepoStore) | ${R[sqlite.rows.s]:-–} s (${R[sqlite.rows.rate]:-–} repos/s) | ${R[postgres.rows.s]:-–} s (${R[postgres.rows.rate]:-–} repos/s), then VACUUM ANALYZE ${R[postgres.analyze.s]:-–} s |
| start to listening | ${R[sqlite.start]:-–} s | ${R[postgres.start]:-–} s |
EOF
for ep in $ENDPOINTS; do
  echo "| ${LABEL[$ep]} p99 (single) | $(cell sqlite "$ep") | $(cell postgres "$ep") |"
done
cat <<EOF
| server RSS after the runs (peak) | ${R[sqlite.rss]:-–} MiB (${R[sqlite.hwm]:-–}) | ${R[postgres.rss]:-–} MiB (${R[postgres.hwm]:-–}) |
| database size | $(size "${R[sqlite.db.kib]:-0}") | $(size "${R[postgres.db.kib]:-0}") (+ WAL $(size "${R[postgres.wal.kib]:-0}")) |
| repos volume (shared) | $(size "${R[repos.kib]}"), ${R[repos.inodes]} inodes ($(per_repo "${R[repos.kib]}") KiB, $(per_repo "${R[repos.inodes]}") inodes per repo) | same |

API create path (\`POST /api/repos/create\`, empty SQLite instance, $API_N repos): ${R[api.rate1]} repos/s from one client, ${R[api.rate4]} repos/s from four; ${R[api.kib]} KiB and ${R[api.inodes]} inodes per repo.
EOF
