# Shared helpers for loadtest/*.sh. Source it; do not run it.
#
# Everything a script starts (hangar, nginx, fcgiwrap) is recorded and killed by the
# EXIT trap, and every temporary file lives under one mktemp dir that the trap removes.
# Load goes to 127.0.0.1 only.
#
# Environment:
#   HANGAR_BIN          hangar binary (default: newest of build*/hangar in the repo)
#   HANGAR_LOADGEN      load generator binary (default: newest build*/bench/hangar-loadgen
#                       if newer than bench/loadgen.cc, else compiled into the cache)
#   HANGAR_BENCH_CACHE  cache for generated repos and tools (default ~/.cache/hangar-bench)
#   BENCH_RESULTS       if set, RESULT lines are appended to this file too
#   BENCH_QUICK=1       shorter runs and smaller repos, for a dry run of the scripts
#   HANGAR_DEPLOYMENT=1 the scripts' hub is the deployment of deploy/stack.sh (PostgreSQL,
#                       two replicas and a worker, HAProxy) instead of one `hangar serve` on
#                       SQLite: requests go through the balancer, HANGAR_PID is replica a,
#                       and the RSS and CPU helpers below measure every replica.
#                       run_all.sh --deployment sets it.
#   HANGAR_DEPLOY_REPLICAS=1|2  with HANGAR_DEPLOYMENT: that many replicas (stack.sh
#                       --replicas; default 2). run_all.sh --replicas N sets both.
#   HANGAR_DEPLOY_S3=1  with HANGAR_DEPLOYMENT: blobs in the stack's own S3 (radosgw, ~15 s
#                       to start) instead of the shared data dir; its store holds
#                       HANGAR_DEPLOY_S3_MIB MiB (default 12288) of RAM
#   HANGAR_ENGINE=postgres  without HANGAR_DEPLOYMENT: the one `hangar serve` keeps its
#                       metadata on a throw-away PostgreSQL (scripts/pg-server.sh, fsync off
#                       as in the deployment's) instead of SQLite; the admin commands use it
#                       too (HANGAR_DATABASE_URL). run_all.sh --postgres sets it.

set -euo pipefail

LT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH_CACHE="${HANGAR_BENCH_CACHE:-$HOME/.cache/hangar-bench}"
mkdir -p "$BENCH_CACHE/bin"
LT_TMP="$(mktemp -d /tmp/hangar-loadtest.XXXXXX)"
chmod 755 "$LT_TMP"  # nginx workers run as nobody
LT_PIDS=()
export GIT_TERMINAL_PROMPT=0  # never wait for a password
LT_PGIDS=()

lt_cleanup() {
  local pid
  for pid in "${LT_PGIDS[@]}"; do
    kill -- "-$pid" 2>/dev/null || true
  done
  for pid in "${LT_PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${LT_PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [ -n "${DEPLOY_DIR:-}" ]; then
    "$LT_ROOT/deploy/stack.sh" stop "$DEPLOY_DIR" >/dev/null 2>&1 || true
    rm -rf "$DEPLOY_DIR"
  fi
  if [ -n "${PG_DIR:-}" ]; then
    "$LT_ROOT/scripts/pg-server.sh" stop "$PG_DIR" >/dev/null 2>&1 || true
  fi
  rm -rf "$LT_TMP"
}
trap lt_cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# result KEY VALUE UNIT GOAL NOTE — one line for run_all.sh's table.
result() {
  local line
  line=$(printf 'RESULT\t%s\t%s\t%s\t%s\t%s' "$1" "$2" "$3" "${4:-}" "${5:-}")
  echo "$line"
  if [ -n "${BENCH_RESULTS:-}" ]; then echo "$line" >>"$BENCH_RESULTS"; fi
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) {print "nan"} else if (NR%2) {print a[(NR+1)/2]} else {printf "%.6g\n", (a[NR/2]+a[NR/2+1])/2}}'; }

# percentile P — the P-th percentile (nearest rank: the smallest value with at least P% of
# the values at or below it) of the numbers on stdin, one a line; nan for none.
percentile() {
  sort -g | awk -v p="$1" '{a[NR]=$1} END {
    if (NR == 0) { print "nan"; exit }
    r = p / 100 * NR; k = int(r); if (k < r) k++; if (k < 1) k = 1
    print a[k] }'
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

now_s() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f\n", b - a}'; }

find_hangar() {
  if [ -n "${HANGAR_BIN:-}" ]; then echo "$HANGAR_BIN"; return; fi
  local b
  b=$(ls -t "$LT_ROOT"/build*/hangar 2>/dev/null | head -1 || true)
  if [ -z "$b" ]; then
    echo "no hangar binary: build it (ninja -C build hangar) or set HANGAR_BIN" >&2
    return 1
  fi
  echo "$b"
}

# The load generator: the CMake-built one if present, else compiled into the cache.
loadgen_bin() {
  local b
  if [ -n "${HANGAR_LOADGEN:-}" ]; then echo "$HANGAR_LOADGEN"; return; fi
  b=$(ls -t "$LT_ROOT"/build*/bench/hangar-loadgen 2>/dev/null | head -1 || true)
  if [ -n "$b" ] && [ "$b" -nt "$LT_ROOT/bench/loadgen.cc" ]; then echo "$b"; return; fi
  b="$BENCH_CACHE/bin/hangar-loadgen"
  if [ ! -x "$b" ] || [ "$LT_ROOT/bench/loadgen.cc" -nt "$b" ]; then
    g++ -std=c++20 -O2 -o "$b.tmp" "$LT_ROOT/bench/loadgen.cc" && mv "$b.tmp" "$b"
  fi
  echo "$b"
}

# ---------------------------------------------------------------- hangar

HANGAR_PID=""
HANGAR_URL=""
HANGAR_TOKEN=""
HANGAR_DATA=""

DEPLOY_DIR=""
PG_DIR=""

# postgres_up — with HANGAR_ENGINE=postgres (and no deployment), starts a throw-away
# PostgreSQL once (scripts/pg-server.sh, stopped by the EXIT trap) and exports its URL as
# HANGAR_DATABASE_URL, which `hangar serve` and the admin commands read.
postgres_up() {
  [ "${HANGAR_ENGINE:-sqlite}" = postgres ] && [ "${HANGAR_DEPLOYMENT:-0}" != 1 ] || return 0
  [ -z "$PG_DIR" ] || return 0
  PG_DIR="$LT_TMP/pg"  # LT_TMP is 0755: as root, the postgres account reaches it
  # fsync off, as the deployment's PostgreSQL (lib.sh's deployment_up): the load tests
  # measure the hub, not this machine's disk flushes.
  "$LT_ROOT/scripts/pg-server.sh" start "$PG_DIR" --watch $$ --no-fsync >"$LT_TMP/pg-start.log" 2>&1 ||
    { tail -20 "$LT_TMP/pg-start.log" >&2; return 1; }
  HANGAR_DATABASE_URL=$(sed -n 's/^PG_URL=//p' "$PG_DIR/pg.env")
  export HANGAR_DATABASE_URL
  log "PostgreSQL for hangar serve: ${HANGAR_DATABASE_URL##*@} (fsync off)"
}

# deployment_up — with HANGAR_DEPLOYMENT=1, starts the stack once (deploy/stack.sh, torn
# down by the EXIT trap); sets HANGAR_URL (the balancer), HANGAR_PID (replica a), the
# stack's data dir as HANGAR_DATA and its database for the admin commands.
deployment_up() {
  [ -z "$DEPLOY_DIR" ] || return 0
  DEPLOY_DIR="$(mktemp -d /tmp/hangar-loadtest-stack.XXXXXX)"
  local opts=(--watch $$ --no-fsync --replicas "${HANGAR_DEPLOY_REPLICAS:-2}")
  # The S3 store lives in RAM: the 4 x 1 GiB uploads stage 4 GiB of parts and then hold
  # 4 GiB of blobs, past the default 2 GiB (where radosgw stalls every write).
  if [ "${HANGAR_DEPLOY_S3:-0}" = 1 ]; then opts+=(--s3-mib "${HANGAR_DEPLOY_S3_MIB:-12288}"); else opts+=(--no-s3); fi
  HANGAR_BIN="$(find_hangar)" "$LT_ROOT/deploy/stack.sh" start "$DEPLOY_DIR" "${opts[@]}" \
    >"$LT_TMP/stack.out" 2>&1 || { tail -30 "$LT_TMP/stack.out" >&2; return 1; }
  # shellcheck disable=SC1091
  source "$DEPLOY_DIR/stack.env"
  export HANGAR_DATABASE_URL="$PG_URL"
  HANGAR_URL="$HUB_URL" HANGAR_PID="$REPLICA_A_PID" HANGAR_DATA="$DATA_DIR"
  HANGAR_LOG="$DEPLOY_DIR/log/replica-a.log"
  log "deployment: balancer $HUB_URL, replicas $REPLICA_A_URL ${REPLICA_B_URL:-} (blobs: $BLOBS)"
}

# hub_procs — sets HUB_LABELS and HUB_PIDS (arrays, in step): the processes whose memory
# and CPU a figure is about. The deployment: every replica ("a", "b"; read afresh from
# stack.env, which stack.sh time-start rewrites); else the one hangar serve ("hangar").
hub_procs() {
  HUB_LABELS=() HUB_PIDS=()
  if [ -n "$DEPLOY_DIR" ]; then
    # shellcheck disable=SC1091
    source "$DEPLOY_DIR/stack.env"
    HUB_LABELS+=(a) HUB_PIDS+=("$REPLICA_A_PID")
    if [ -n "${REPLICA_B_PID:-}" ]; then HUB_LABELS+=(b) HUB_PIDS+=("$REPLICA_B_PID"); fi
  elif [ -n "$HANGAR_PID" ]; then
    HUB_LABELS+=(hangar) HUB_PIDS+=("$HANGAR_PID")
  fi
}

# result_suffix LABEL — what a per-process result's key ends with: nothing for the one
# hangar serve (the keys of the single-process runs stay as they were), _a/_b per replica.
result_suffix() { [ "$1" = hangar ] || echo "_$1"; }

# hangar_start DATA_DIR — starts `hangar serve` on a free port, waits for its
# "listening on" line (20 s at most); sets HANGAR_PID, HANGAR_URL. With
# HANGAR_DEPLOYMENT=1: the deployment (deployment_up); DATA_DIR is unused.
hangar_start() {
  if [ "${HANGAR_DEPLOYMENT:-0}" = 1 ]; then deployment_up; return; fi
  postgres_up
  HANGAR_DATA="$1"
  local bin logf
  bin=$(find_hangar)
  mkdir -p "$HANGAR_DATA"
  logf="$LT_TMP/hangar.$RANDOM.log"
  "$bin" serve --data-dir "$HANGAR_DATA" --listen 127.0.0.1:0 >"$logf" 2>&1 &
  HANGAR_PID=$!
  LT_PIDS+=("$HANGAR_PID")
  HANGAR_LOG="$logf"
  local i
  for i in $(seq 400); do
    if HANGAR_URL=$(grep -o -m1 'listening on http://[0-9.:]*' "$logf" | sed 's/listening on //'); then
      [ -n "$HANGAR_URL" ] && return 0
    fi
    if ! kill -0 "$HANGAR_PID" 2>/dev/null; then
      echo "hangar serve exited early:" >&2; tail -20 "$logf" >&2; return 1
    fi
    sleep 0.05
  done
  echo "hangar serve not ready after 20 s" >&2; tail -20 "$logf" >&2
  return 1
}

# proc_kib PID FIELD — FIELD (VmHWM, VmRSS) of process PID from /proc, KiB; 0 when gone.
proc_kib() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# hangar_hwm_kib — peak RSS (VmHWM, KiB) of the hub: of the one server, or the largest of
# the replicas'. hub_hwm_note — each one's, for a result's note ("a 59 MiB, b 57 MiB").
hangar_hwm_kib() {
  local p max=0 v
  hub_procs
  for p in "${HUB_PIDS[@]}"; do
    v=$(proc_kib "$p" VmHWM); [ "${v:-0}" -gt "$max" ] && max=$v
  done
  echo "$max"
}
hub_hwm_note() {
  local i out=""
  hub_procs
  for i in "${!HUB_PIDS[@]}"; do
    out+="${out:+, }${HUB_LABELS[$i]} $(($(proc_kib "${HUB_PIDS[$i]}" VmHWM) / 1024)) MiB"
  done
  echo "VmHWM $out"
}

# rss_start NAME [MS] [FIELD] — samples the VmRSS (or FIELD of /proc/PID/status, e.g.
# RssAnon) of every hub process (hub_procs) every MS milliseconds (default 20) into
# $LT_TMP/rss.NAME.tsv ("unix_seconds kib kib..." in HUB_LABELS' order) until rss_stop
# NAME; returns once the first sample is in (the sampler must be running before the
# phase it watches begins).
rss_start() {
  local name=$1 ms=${2:-20} field=${3:-VmRSS} pids
  hub_procs
  pids=$(IFS=,; echo "${HUB_PIDS[*]}")
  echo "${HUB_LABELS[*]}" >"$LT_TMP/rss.$name.labels"
  rm -f "$LT_TMP/rss.$name.stop" "$LT_TMP/rss.$name.tsv"
  python3 "$LT_ROOT/loadtest/rss_sampler.py" "$pids" "$LT_TMP/rss.$name.tsv" "$LT_TMP/rss.$name.stop" "$ms" "$field" &
  echo "$!" >"$LT_TMP/rss.$name.pid"
  LT_PIDS+=("$!")
  for _ in $(seq 600); do [ -s "$LT_TMP/rss.$name.tsv" ] && return 0; sleep 0.05; done
  echo "RSS sampler did not start in 30 s" >&2
  return 1
}

# rss_stop NAME — ends rss_start NAME's sampler and writes $LT_TMP/rss.NAME.peaks: one
# line per process, "label peak_kib first_kib samples".
rss_stop() {
  local name=$1
  touch "$LT_TMP/rss.$name.stop"
  wait "$(cat "$LT_TMP/rss.$name.pid")" 2>/dev/null || true
  awk -v labels="$(cat "$LT_TMP/rss.$name.labels")" '
    BEGIN { n = split(labels, l, " ") }
    { for (i = 1; i <= n; i++) { v = $(i + 1); if (NR == 1) first[i] = v; if (v > peak[i]) peak[i] = v } }
    END { for (i = 1; i <= n; i++) printf "%s %d %d %d\n", l[i], peak[i], first[i], NR }' \
    "$LT_TMP/rss.$name.tsv" >"$LT_TMP/rss.$name.peaks"
}

# cpu_mark NAME — notes each hub process's CPU time (user + system, /proc/PID/stat) and
# the clock; cpu_per_s NAME then prints "label cpu_seconds_per_second" per process, since
# the mark. cpu_ticks PID: that CPU time in clock ticks (getconf CLK_TCK a second).
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
cpu_mark() {
  local i
  hub_procs
  {
    now_s
    for i in "${!HUB_PIDS[@]}"; do echo "${HUB_LABELS[$i]} ${HUB_PIDS[$i]} $(cpu_ticks "${HUB_PIDS[$i]}")"; done
  } >"$LT_TMP/cpu.$1"
}
cpu_per_s() {
  local t0 t1 label pid ticks hz
  hz=$(getconf CLK_TCK)
  t1=$(now_s)
  { read -r t0; while read -r label pid ticks; do
      awk -v l="$label" -v a="$ticks" -v b="$(cpu_ticks "$pid")" -v hz="$hz" -v s="$(elapsed "$t0" "$t1")" \
        'BEGIN { printf "%s %.2f\n", l, (b - a) / hz / s }'
    done; } <"$LT_TMP/cpu.$1"
}

hangar_stop() {
  if [ -n "$DEPLOY_DIR" ]; then
    "$LT_ROOT/deploy/stack.sh" stop "$DEPLOY_DIR" >/dev/null 2>&1 || true
    rm -rf "$DEPLOY_DIR"
    DEPLOY_DIR="" HANGAR_PID=""
    return 0
  fi
  [ -n "$HANGAR_PID" ] || return 0
  kill "$HANGAR_PID" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$HANGAR_PID" 2>/dev/null || break; sleep 0.05; done
  kill -9 "$HANGAR_PID" 2>/dev/null || true
  wait "$HANGAR_PID" 2>/dev/null || true
  HANGAR_PID=""
}

# hangar_admin_token DATA_DIR — user "bench" with a write token; sets HANGAR_TOKEN. With
# HANGAR_DEPLOYMENT=1: in the deployment's database and data dir (started if need be).
hangar_admin_token() {
  local bin data="$1"
  bin=$(find_hangar)
  if [ "${HANGAR_DEPLOYMENT:-0}" = 1 ]; then deployment_up; data="$HANGAR_DATA"; else postgres_up; fi
  "$bin" admin user create bench --data-dir "$data" >/dev/null 2>"$LT_TMP/admin.err" ||
    grep -qi exist "$LT_TMP/admin.err" || { cat "$LT_TMP/admin.err" >&2; return 1; }
  HANGAR_TOKEN=$("$bin" admin token create bench --role write --data-dir "$data" | grep -o 'hf_[A-Za-z0-9_]*' | head -1)
  [ -n "$HANGAR_TOKEN" ] || { echo "no token printed by 'hangar admin token create'" >&2; return 1; }
}

# hangar_create_repo NAME [model|dataset|space] — repo bench/NAME.
hangar_create_repo() {
  local code
  code=$(curl -s -o "$LT_TMP/create.out" -w '%{http_code}' -X POST \
    -H "Authorization: Bearer $HANGAR_TOKEN" -H 'Content-Type: application/json' \
    -d "{\"name\":\"$1\",\"organization\":\"bench\",\"type\":\"${2:-model}\"}" \
    "$HANGAR_URL/api/repos/create")
  case "$code" in
    200|201|409) return 0 ;;
    *) echo "repo create $1 -> HTTP $code: $(head -c 300 "$LT_TMP/create.out")" >&2; return 1 ;;
  esac
}

# hangar_git_url NAME — push/clone URL with credentials.
hangar_git_url() { echo "http://bench:$HANGAR_TOKEN@${HANGAR_URL#http://}/bench/$1"; }

# hangar_push SRC_REPO NAME — pushes branch main of SRC_REPO; prints seconds taken.
hangar_push() {
  local t0 t1
  t0=$(now_s)
  timeout 600 git -C "$1" -c http.postBuffer=524288000 push -q "$(hangar_git_url "$2")" +main:main >&2
  t1=$(now_s)
  elapsed "$t0" "$t1"
}

# ---------------------------------------------------------------- peers

NGINX_PID=""
NGINX_URL=""

# nginx_start ROOT [extra server-block config] — static nginx on a free port, 2 workers
# (Hangar runs one I/O thread per core: 2 here). Access log on, like Hangar's.
nginx_start() {
  local root="$1" extra="${2:-}" port dir
  command -v nginx >/dev/null || { echo "nginx not installed (loadtest/install-peers.sh)" >&2; return 1; }
  port=$(free_port)
  dir="$LT_TMP/nginx.$port"
  mkdir -p "$dir/logs" "$dir/tmp"
  cat >"$dir/nginx.conf" <<EOF
worker_processes 2;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
daemon off;
events { worker_connections 4096; }
http {
  access_log $dir/logs/access.log;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  keepalive_timeout 120s;
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:$port;
    root $root;
    $extra
  }
}
EOF
  nginx -p "$dir" -c "$dir/nginx.conf" </dev/null >/dev/null 2>&1 &
  NGINX_PID=$!
  LT_PIDS+=("$NGINX_PID")
  NGINX_URL="http://127.0.0.1:$port"
  for _ in $(seq 100); do
    curl -s -o /dev/null "$NGINX_URL/" && return 0
    sleep 0.05
  done
  echo "nginx did not start" >&2; cat "$dir/logs/error.log" >&2; return 1
}

# git_backend_start PROJECT_ROOT — `git http-backend` behind nginx + fcgiwrap, the
# standard way to serve git smart HTTP; URLs are $NGINX_URL/<path under root>.
git_backend_start() {
  local root="$1" sock
  command -v fcgiwrap >/dev/null || { echo "fcgiwrap not installed (loadtest/install-peers.sh)" >&2; return 1; }
  sock="$LT_TMP/fcgiwrap.sock"
  # Own session, so the trap can end fcgiwrap and the children it forks as a group.
  setsid fcgiwrap -c 4 -s "unix:$sock" </dev/null >/dev/null 2>&1 &
  LT_PGIDS+=("$!")
  for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
  chmod 666 "$sock"  # nginx workers run as nobody
  nginx_start "$root" "
    location / {
      fastcgi_pass unix:$sock;
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME /usr/lib/git-core/git-http-backend;
      fastcgi_param GIT_PROJECT_ROOT $root;
      fastcgi_param GIT_HTTP_EXPORT_ALL 1;
      fastcgi_param PATH_INFO \$uri;
      fastcgi_param GIT_PROTOCOL \$http_git_protocol;
      client_max_body_size 0;
      fastcgi_buffering off;
    }"
}

# ---------------------------------------------------------------- native uploads

# hangar_native_upload NAME TAG FILE SHA256 PART_BYTES WORKERS — uploads FILE to repo
# bench/NAME through the native upload API (docs/uploads.md): create the upload, PUT its
# parts (PART_BYTES each) with WORKERS curl processes taking every WORKERS-th part, then
# complete it. It does not commit (hangar_commit_lfs does). TAG names its temp files.
hangar_native_upload() {
  local name=$1 tag=$2 file=$3 sha=$4 part=$5 workers=$6 size code id n w
  local auth="Authorization: Bearer $HANGAR_TOKEN" j="$LT_TMP/up.$tag"
  size=$(stat -c %s "$file")
  code=$(curl -sS -o "$j.json" -w '%{http_code}' -X POST -H "$auth" \
    -H 'Content-Type: application/json' -d "{\"sha256\":\"$sha\",\"size\":$size,\"partSize\":$part}" \
    "$HANGAR_URL/api/models/bench/$name/uploads")
  [ "$code" = 201 ] || { echo "create upload $tag -> $code: $(head -c 300 "$j.json")" >&2; return 1; }
  id=$(jq -r .id "$j.json")
  n=$(jq -r .partCount "$j.json")
  [ "$(jq -r .partSize "$j.json")" = "$part" ] ||
    { echo "upload $tag: the server chose partSize $(jq -r .partSize "$j.json")" >&2; return 1; }
  jq -r '.partUrls[]' "$j.json" >"$j.urls"
  local wpids=()
  for w in $(seq 0 $((workers - 1))); do
    (
      p=$((w + 1))
      while [ "$p" -le "$n" ]; do
        url=$(sed -n "${p}p" "$j.urls")
        off=$(((p - 1) * part)); len=$((size - off < part ? size - off : part))
        # `|| true`: a server that answers before reading the whole body ends dd with
        # SIGPIPE, which (pipefail, errexit) would end this worker without a word.
        code=$(dd if="$file" bs=1M skip="$off" count="$len" iflag=skip_bytes,count_bytes status=none |
          curl -sS -o "$j.part$p" -w '%{http_code}' -X PUT -T - -H "$auth" \
            -H "Content-Length: $len" -H 'Transfer-Encoding:' -H 'Expect:' "$url") || true
        [ "$code" = 200 ] || { echo "PUT $tag part $p -> $code: $(head -c 300 "$j.part$p")" >&2; exit 1; }
        p=$((p + workers))
      done
    ) &
    wpids+=("$!")
  done
  for w in "${wpids[@]}"; do wait "$w" || return 1; done
  code=$(curl -sS -o "$j.done" -w '%{http_code}' -X POST -H "$auth" "$HANGAR_URL/api/uploads/$id/complete")
  [ "$code" = 200 ] || { echo "complete $tag -> $code: $(head -c 300 "$j.done")" >&2; return 1; }
}

# hangar_commit_lfs NAME SUMMARY PATH:SHA256:SIZE... — one NDJSON commit to main of
# bench/NAME that adds each uploaded blob as an LFS file at PATH.
hangar_commit_lfs() {
  local name=$1 summary=$2 f code path sha size
  shift 2
  {
    echo "{\"key\":\"header\",\"value\":{\"summary\":\"$summary\"}}"
    for f in "$@"; do
      IFS=: read -r path sha size <<<"$f"
      echo "{\"key\":\"lfsFile\",\"value\":{\"path\":\"$path\",\"algo\":\"sha256\",\"oid\":\"$sha\",\"size\":$size}}"
    done
  } >"$LT_TMP/commit.ndjson"
  code=$(curl -sS -o "$LT_TMP/commit.out" -w '%{http_code}' -X POST -H "Authorization: Bearer $HANGAR_TOKEN" \
    -H 'Content-Type: application/x-ndjson' --data-binary @"$LT_TMP/commit.ndjson" \
    "$HANGAR_URL/api/models/bench/$name/commit/main")
  [ "$code" = 200 ] || { echo "commit -> $code: $(head -c 300 "$LT_TMP/commit.out")" >&2; return 1; }
}
