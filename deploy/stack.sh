#!/usr/bin/env bash
# Hangar past one machine, on 127.0.0.1, from Debian's packages: PostgreSQL
# (scripts/pg-server.sh), an S3 object store (scripts/s3-server.sh: Ceph's RADOS gateway),
# two `hangar serve` replicas (or one) and one `hangar worker` on one shared data dir, and
# HAProxy in front of the replicas, each with its own config file:
# deploy/config/replica.toml (replicas and worker) and deploy/config/haproxy.cfg with their
# placeholders filled in.
# docs/deploy.md describes each part and what changes on several hosts;
# tests/integration/deployment.sh drives the stack through the balancer.
#
#   deploy/stack.sh start DIR [--replicas 1|2] [--no-s3 | --s3-env FILE] [--watch PID] [--no-fsync]
#       Starts everything under DIR (created; must be empty or absent), each part on a free
#       port of 127.0.0.1, and waits until HAProxy has every replica in rotation.
#       --replicas 1: replica a only, HAProxy with that one server (the scaling factor of
#       the benchmarks is one replica beside two); default 2.
#         DIR/pg       PostgreSQL (scripts/pg-server.sh start DIR/pg; as root, DIR is made
#                      mode 755 so that the postgres account can reach DIR/pg)
#         DIR/s3       S3 with a bucket `hangar` (scripts/s3-server.sh start DIR/s3: ~15 s,
#                      ~2 GiB of RAM, its whole store: --s3-mib N for N MiB; a full store
#                      stalls writes). --no-s3: none; the blobs live on the shared data dir.
#                      --s3-env FILE: the running S3 that FILE (an s3.env) describes, with a
#                      fresh bucket `hangar-<random>` on it.
#         DIR/shared   the replicas' data dir: the shared volume (repos, signing secret, blobs)
#         DIR/config   replica-a.toml, replica-b.toml (2 replicas), worker.toml, haproxy.cfg, and the secrets they
#                      name (pgpass, secrets.env; mode 0600)
#         DIR/log      each process's log (replica-a.log, replica-b.log, worker.log, haproxy.log, ...)
#       Then writes DIR/stack.env and prints it:
#         HUB_URL=http://127.0.0.1:PORT      the balancer: the one URL clients use
#         REPLICAS=1|2
#         REPLICA_A_URL, REPLICA_B_URL       each replica (bypassing the balancer; with
#                                            one replica, no REPLICA_B_* lines)
#         REPLICA_A_PID, REPLICA_B_PID, WORKER_PID, HAPROXY_PID
#         STATS_URL                          HAProxy's statistics page
#         PG_URL                             the database, password included (for
#                                            `hangar admin` with HANGAR_DATABASE_URL)
#         DATA_DIR=DIR/shared  BLOBS=s3|local  HANGAR_BIN
#       HANGAR_BIN names the hangar binary (default: build/hangar of this checkout).
#       --watch PID stops the stack once process PID has gone (a test that dies leaves
#       nothing running). --no-fsync: PostgreSQL without fsync (tests). Exit 1 with the
#       failing part's last log lines when something does not come up; what did start is
#       stopped then.
#   deploy/stack.sh stop DIR
#       Stops the replicas (SIGTERM: they leave the rotation, finish their requests and
#       exit; SIGKILL after 45 s) and the worker (SIGTERM: it hands its running jobs back),
#       then HAProxy, S3 and PostgreSQL. DIR stays.
#   deploy/stack.sh restart-replica DIR a|b
#       One step of a rolling restart: SIGTERM the replica, wait for it to exit, start it
#       again on the same port with the same config (HANGAR_BIN, when set, names a new
#       binary), wait until its /readyz answers 200 and HAProxy has it back in rotation.
#       Updates DIR/stack.env. Restarts of one stack take turns (a lock in DIR/run).
#   deploy/stack.sh time-start DIR a|b [--runs N]
#       Start-to-ready of a stopped replica (the benchmarks' figure): stops the replica as
#       restart-replica does, then N times (default 5) starts it and measures, from just
#       before exec, the milliseconds until its port accepts a connection, until its
#       /readyz answers 200, and until HAProxy has it back in rotation; stops it again
#       between runs (and waits until HAProxy has it out) and leaves it running after the
#       last. Prints one line per run (`run I listening_ms L ready_ms R rotation_ms T`),
#       then the medians as `replica_start_listening_ms M`, `replica_start_ready_ms M` and
#       `replica_start_rotation_ms M`. The rotation figure includes HAProxy's checks (every
#       250 ms, 2 good ones to come back). Updates DIR/stack.env; takes the restart lock.
set -euo pipefail
shopt -u patsub_replacement 2>/dev/null || true

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SELF=$ROOT/deploy/stack.sh
STOP_WAIT_S=45  # > the replicas' drain_delay_ms + shutdown_grace_s

die() { echo "stack.sh: $*" >&2; exit 1; }

# alive PID: the process exists and is not a zombie (a replica whose parent is gone may
# wait, unreaped, in that state).
alive() {
  local st
  st=$(sed -E 's/^[0-9]+ \(.*\) ([A-Za-z]).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $st && $st != Z && $st != X ]]
}

# ours PID TEXT: PID is alive and its command line contains TEXT (a stale pid file never
# makes us signal another program).
ours() {
  [[ -n $1 ]] && alive "$1" && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$2"
}

# free_ports N: N distinct TCP ports of 127.0.0.1 that nothing listens on now.
free_ports() {
  python3 - "$1" <<'EOF'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# render TEMPLATE OUT NAME=VALUE...: TEMPLATE with each @NAME@ replaced by VALUE, its
# leading comment block (which explains the placeholders) replaced by one line naming it.
render() {
  local template=$1 out=$2 kv text left
  shift 2
  text=$(awk 'body || !/^#/ { body = 1; print }' "$template")
  for kv in "$@"; do
    text=${text//"@${kv%%=*}@"/"${kv#*=}"}
  done
  left=$(grep -o '@[A-Z0-9_]*@' <<<"$text" | sort -u | tr '\n' ' ' || true)
  [[ -z $left ]] || die "render $template: no value for $left"
  printf '# Written by deploy/stack.sh from %s (its comments explain each value).\n%s\n' \
    "${template#"$ROOT"/}" "$text" >"$out"
}

# http_code URL: the status of a GET (000 when nothing answers).
http_code() {
  curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1" 2>/dev/null || true
}

# lb_status NAME: the balancer's status of replica NAME (UP, DOWN, "UP 1/2", ...).
lb_status() {
  curl -s --max-time 2 "$STATS_URL;csv" 2>/dev/null |
    awk -F, -v s="$1" '$1 == "replicas" && $2 == s { print $18 }' || true
}

# wait_lb_status NAME STATUS: until HAProxy has replica NAME as STATUS (UP or DOWN; 30 s
# at most).
wait_lb_status() {
  local i st=""
  for ((i = 0; i < 300; i++)); do
    st=$(lb_status "$1")
    [[ $st == "$2" ]] && return 0
    sleep 0.1
  done
  die "HAProxy has replica $1 as '${st:-none}', not $2, 30 s on (see $DIR/log/haproxy.log)"
}
# wait_out_of_rotation NAME: until replica NAME is fully DOWN: a start timed after it sees
# the replica come back, not a status left over from before.
wait_out_of_rotation() { wait_lb_status "$1" DOWN; }
# wait_in_rotation NAME: until replica NAME is UP.
wait_in_rotation() { wait_lb_status "$1" UP; }

log_tail() {
  echo "--- last lines of $1" >&2
  tail -n 20 "$1" >&2 || true
}

# launch NAME COMMAND: runs `hangar COMMAND --config DIR/config/NAME.toml`, detached from
# our terminal, stdout to DIR/log/NAME.out, stderr to DIR/log/NAME.log; sets LAUNCHED_PID
# and writes DIR/run/NAME.pid.
launch() {
  local name=$1 command=$2 bin=$HANGAR_BIN v  # bin: the subshell unsets HANGAR_*
  echo "--- $(date -Is) stack.sh starts $name ($HANGAR_BIN)" >>"$DIR/log/$name.log"
  # Its settings are its config file and secrets.env only: no HANGAR_* variable of the
  # caller's environment reaches it. The subshell execs setsid (no fork: it leads no
  # process group), which execs hangar: $! is hangar's pid.
  (
    for v in $(compgen -e); do [[ $v == HANGAR_* ]] && unset "$v"; done
    set -a
    # shellcheck disable=SC1091
    . "$DIR/config/secrets.env"
    set +a
    exec setsid "$bin" "$command" --config "$DIR/config/$name.toml"
  ) </dev/null >"$DIR/log/$name.out" 2>>"$DIR/log/$name.log" 9>&- &
  LAUNCHED_PID=$!
  echo "$LAUNCHED_PID" >"$DIR/run/$name.pid"
}

# wait_first_line NAME PID PATTERN: until DIR/log/NAME.out's first line matches the glob
# PATTERN (30 s at most);
# dies with the log's tail when PID exits first or the time runs out.
wait_first_line() {
  local name=$1 pid=$2 want=$3 i line=""
  for ((i = 0; i < 600; i++)); do
    line=$(head -n 1 "$DIR/log/$name.out" 2>/dev/null || true)
    # shellcheck disable=SC2053  # a glob on purpose
    [[ $line == $want ]] && return 0
    alive "$pid" || break
    sleep 0.05
  done
  log_tail "$DIR/log/$name.log"
  die "$name did not say '$want' (it said: '$line'$(alive "$pid" || echo ', and exited'))"
}

# start_replica NAME PORT: starts `hangar serve` with DIR/config/replica-NAME.toml and waits
# for its "listening on" line and its /readyz 200. Sets REPLICA_<NAME>_PID.
start_replica() {
  local name=$1 port=$2 i code=""
  launch "replica-$name" serve
  printf -v "REPLICA_${name^^}_PID" '%s' "$LAUNCHED_PID"
  wait_first_line "replica-$name" "$LAUNCHED_PID" "listening on http://127.0.0.1:$port"
  for ((i = 0; i < 300; i++)); do
    code=$(http_code "http://127.0.0.1:$port/readyz")
    [[ $code == 200 ]] && return 0
    alive "$LAUNCHED_PID" || break
    sleep 0.1
  done
  log_tail "$DIR/log/replica-$name.log"
  die "replica $name is not ready (GET /readyz: $code)"
}

# start_worker: starts `hangar worker` with DIR/config/worker.toml and waits for its
# "worker running" line. Sets WORKER_PID.
start_worker() {
  launch worker worker
  WORKER_PID=$LAUNCHED_PID
  wait_first_line worker "$WORKER_PID" "worker running *"
}

# stop_pid PID TEXT SECONDS: SIGTERM PID if it is ours, wait up to SECONDS, then SIGKILL.
# Several pids: stop_pids.
stop_pids() {
  local text=$1 seconds=$2 p i
  shift 2
  local pids=()
  for p in "$@"; do ours "$p" "$text" && pids+=("$p"); done
  ((${#pids[@]})) || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for ((i = 0; i < seconds * 10; i++)); do
    local any=0
    for p in "${pids[@]}"; do alive "$p" && any=1; done
    ((any)) || return 0
    sleep 0.1
  done
  echo "stack.sh: ${pids[*]} still running after ${seconds}s: SIGKILL" >&2
  kill -KILL "${pids[@]}" 2>/dev/null || true
}

pid_of() { cat "$DIR/run/$1.pid" 2>/dev/null || true; }

write_env() {
  local b_lines=""
  ((REPLICAS == 1)) || b_lines="REPLICA_B_URL=$REPLICA_B_URL"$'\n'"REPLICA_B_PID=$REPLICA_B_PID"
  cat >"$DIR/stack.env.tmp" <<EOF
HUB_URL=$HUB_URL
REPLICAS=$REPLICAS
REPLICA_A_URL=$REPLICA_A_URL
REPLICA_A_PID=$REPLICA_A_PID
${b_lines:+$b_lines
}WORKER_PID=$WORKER_PID
HAPROXY_PID=$HAPROXY_PID
STATS_URL=$STATS_URL
PG_URL=$PG_URL
DATA_DIR=$DATA_DIR
BLOBS=$BLOBS
HANGAR_BIN=$HANGAR_BIN
EOF
  mv "$DIR/stack.env.tmp" "$DIR/stack.env"
}

stop_stack() {
  rm -f "$DIR/run/running"  # the --watch loop ends
  stop_pids "--config $DIR/config/" "$STOP_WAIT_S" "$(pid_of replica-a)" "$(pid_of replica-b)" \
    "$(pid_of worker)"
  stop_pids "$DIR/config/haproxy.cfg" 10 "$(pid_of haproxy)"
  if [[ -f $DIR/s3/ceph.conf ]]; then
    "$ROOT/scripts/s3-server.sh" stop "$DIR/s3" || true
  fi
  if [[ -d $DIR/pg/data ]]; then
    "$ROOT/scripts/pg-server.sh" stop "$DIR/pg" || true
  fi
  rm -f "$DIR"/run/*.pid
}

start_stack() {
  local s3_mode=$1 s3_env=$2 watch=$3 no_fsync=$4 s3_mib=$6
  REPLICAS=$5
  HANGAR_BIN=${HANGAR_BIN:-$ROOT/build/hangar}
  [[ -x $HANGAR_BIN ]] || die "no hangar binary at $HANGAR_BIN (scripts/build.sh builds it; or set HANGAR_BIN)"
  HANGAR_BIN=$(realpath "$HANGAR_BIN")
  for tool in haproxy curl python3 setsid flock; do
    command -v "$tool" >/dev/null || die "$tool is missing (scripts/install-deps.sh installs it)"
  done
  mkdir -p "$DIR"
  [[ -z $(ls -A "$DIR") ]] || die "$DIR is not empty"
  chmod 755 "$DIR"
  mkdir -p "$DIR"/{config,log,run,shared}
  touch "$DIR/run/running"
  # From here on, a failure stops whatever did start.
  trap 'rc=$?; if ((rc)); then stop_stack >/dev/null 2>&1 || true; fi' EXIT
  if [[ -n $watch ]]; then
    (
      while alive "$watch" && [[ -f $DIR/run/running ]]; do sleep 1; done
      [[ -f $DIR/run/running ]] && "$SELF" stop "$DIR"
    ) </dev/null >>"$DIR/log/watch.log" 2>&1 &
    disown
  fi

  # PostgreSQL.
  local pg_opts=()
  [[ -n $watch ]] && pg_opts+=(--watch "$watch")
  ((no_fsync)) && pg_opts+=(--no-fsync)
  "$ROOT/scripts/pg-server.sh" start "$DIR/pg" "${pg_opts[@]}" >"$DIR/log/pg-start.log" 2>&1 ||
    { log_tail "$DIR/log/pg-start.log"; die "PostgreSQL did not start"; }
  local PG_PORT
  PG_URL=$(sed -n 's/^PG_URL=//p' "$DIR/pg/pg.env")
  PG_PORT=$(sed -n 's/^PG_PORT=//p' "$DIR/pg/pg.env")
  local pg_password=${PG_URL#*://hangar:}
  pg_password=${pg_password%%@*}
  (umask 077 && printf '127.0.0.1:%s:hangar:hangar:%s\n' "$PG_PORT" "$pg_password" >"$DIR/config/pgpass")
  local database_url="postgresql://hangar@127.0.0.1:$PG_PORT/hangar?passfile=$DIR/config/pgpass"

  # S3 and its bucket, or local blobs.
  local S3_ENDPOINT="" S3_REGION="" S3_ACCESS_KEY="" S3_SECRET_KEY="" bucket=""
  BLOBS=s3
  case $s3_mode in
    none) BLOBS=local ;;
    own)
      local s3_opts=()
      [[ -n $watch ]] && s3_opts+=(--watch "$watch")
      [[ -n $s3_mib ]] && s3_opts+=(--memory "$s3_mib")
      "$ROOT/scripts/s3-server.sh" start "$DIR/s3" "${s3_opts[@]}" >"$DIR/log/s3-start.log" 2>&1 ||
        { log_tail "$DIR/log/s3-start.log"; die "S3 did not start"; }
      s3_env=$DIR/s3/s3.env
      bucket=hangar
      ;;
    env) bucket=hangar-$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n') ;;
  esac
  if [[ $BLOBS == s3 ]]; then
    [[ -r $s3_env ]] || die "cannot read $s3_env"
    S3_ENDPOINT=$(sed -n 's/^S3_ENDPOINT=//p' "$s3_env")
    S3_REGION=$(sed -n 's/^S3_REGION=//p' "$s3_env")
    S3_ACCESS_KEY=$(sed -n 's/^S3_ACCESS_KEY=//p' "$s3_env")
    S3_SECRET_KEY=$(sed -n 's/^S3_SECRET_KEY=//p' "$s3_env")
    local code
    code=$(curl -sS -o "$DIR/log/bucket.out" -w '%{http_code}' --max-time 60 -X PUT \
      --aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" \
      -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$S3_ENDPOINT/$bucket" 2>&1) || true
    [[ $code == 200 ]] || die "creating bucket $bucket at $S3_ENDPOINT: $code $(head -c 300 "$DIR/log/bucket.out")"
  fi
  (
    umask 077
    echo "# The replicas' secrets, read into their environment by deploy/stack.sh."
    [[ $BLOBS == s3 ]] && echo "HANGAR_STORAGE_S3_SECRET_KEY=$S3_SECRET_KEY"
    true
  ) >"$DIR/config/secrets.env"

  # The config files.
  local hub_port stats_port a_port b_port
  read -r hub_port stats_port a_port b_port < <(free_ports 4)
  HUB_URL=http://127.0.0.1:$hub_port
  STATS_URL=http://127.0.0.1:$stats_port/stats
  REPLICA_A_URL=http://127.0.0.1:$a_port
  REPLICA_B_URL=http://127.0.0.1:$b_port
  DATA_DIR=$DIR/shared
  local name port names=(replica-a replica-b worker)
  ((REPLICAS == 2)) || names=(replica-a worker)
  # The worker's file is the replicas' (it reads no [server] key; its listen is unused).
  for name in "${names[@]}"; do
    port=$a_port
    [[ $name == replica-b ]] && port=$b_port
    [[ $name == worker ]] && port=0
    render "$ROOT/deploy/config/replica.toml" "$DIR/config/$name.toml" \
      "LISTEN=127.0.0.1:$port" "PUBLIC_URL=$HUB_URL" "DATA_DIR=$DATA_DIR" \
      "DATABASE_URL=$database_url" "BLOBS=$BLOBS" "S3_ENDPOINT=$S3_ENDPOINT" \
      "S3_BUCKET=$bucket" "S3_REGION=$S3_REGION" "S3_ACCESS_KEY=$S3_ACCESS_KEY"
    if [[ $BLOBS == local ]]; then
      sed -i '/^s3_/d' "$DIR/config/$name.toml"
    fi
  done
  render "$ROOT/deploy/config/haproxy.cfg" "$DIR/config/haproxy.cfg" \
    "HUB_BIND=127.0.0.1:$hub_port" "STATS_BIND=127.0.0.1:$stats_port" \
    "REPLICA_A=127.0.0.1:$a_port" "REPLICA_B=127.0.0.1:$b_port"
  # One replica: the template's `server b` lines go (its port stays unused).
  ((REPLICAS == 2)) || sed -i '/^[[:space:]]*server b /d' "$DIR/config/haproxy.cfg"
  haproxy -c -q -f "$DIR/config/haproxy.cfg" >"$DIR/log/haproxy-check.log" 2>&1 ||
    { log_tail "$DIR/log/haproxy-check.log"; die "haproxy rejects $DIR/config/haproxy.cfg"; }

  # The replicas (one after the other: the first migrates the database), the worker, then
  # the balancer.
  start_replica a "$a_port"
  ((REPLICAS == 1)) || start_replica b "$b_port"
  start_worker
  (exec setsid haproxy -db -f "$DIR/config/haproxy.cfg") </dev/null >>"$DIR/log/haproxy.log" 2>&1 &
  HAPROXY_PID=$!
  echo "$HAPROXY_PID" >"$DIR/run/haproxy.pid"
  wait_in_rotation a
  ((REPLICAS == 1)) || wait_in_rotation b
  local code
  code=$(http_code "$HUB_URL/readyz")
  [[ $code == 200 ]] || { log_tail "$DIR/log/haproxy.log"; die "GET $HUB_URL/readyz through HAProxy: $code"; }
  write_env
  trap - EXIT
  cat "$DIR/stack.env"
}

# open_stack NAME: takes the restart lock (fd 9; a replica started later does not inherit
# it: launch closes it), reads DIR/stack.env (HANGAR_BIN, when set, names a new binary)
# and checks that replica NAME exists; sets PORT and PID to the replica's.
open_stack() {
  local name=$1
  [[ $name == a || $name == b ]] || die "replica a or b, not '$name'"
  [[ -f $DIR/stack.env ]] || die "no stack in $DIR (no stack.env)"
  exec 9>"$DIR/run/restart.lock"
  flock -w 300 9 || die "another restart of $DIR has held its lock for 5 minutes"
  local new_bin=${HANGAR_BIN:-}
  # shellcheck disable=SC1091
  source "$DIR/stack.env"
  REPLICAS=${REPLICAS:-2}  # a stack.env written before --replicas existed
  [[ -n $new_bin ]] && HANGAR_BIN=$(realpath "$new_bin")
  [[ $name == a || $REPLICAS == 2 ]] || die "the stack in $DIR has no replica b (--replicas 1)"
  local url_var=REPLICA_${name^^}_URL pid_var=REPLICA_${name^^}_PID
  PORT=${!url_var##*:} PID=${!pid_var}
}

restart_replica() {
  local name=$1 PORT PID
  open_stack "$name"
  stop_pids "--config $DIR/config/replica-$name.toml" "$STOP_WAIT_S" "$PID"
  alive "$PID" && die "replica $name ($PID) did not exit"
  start_replica "$name" "$PORT"
  wait_in_rotation "$name"
  write_env
}

# probe_start PORT NAME OUT STARTED: polls, from before the replica's exec, until its port
# accepts a connection, then until its /readyz answers 200, then until HAProxy's stats
# show it UP, and writes the three moments (epoch seconds) to OUT. It creates the file
# STARTED once it polls, so that the clock starts after the prober's own start-up. Polls
# are 1, 5 and 10 ms apart (a refused connect costs next to nothing; the stats page is
# HAProxy's work); 60 s at most.
probe_start() {
  python3 - "$@" "$STATS_URL;csv" <<'EOF'
import csv, http.client, io, socket, sys, time, urllib.request

port, name, out, started, stats = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
deadline = time.time() + 60


def until(check, pause):
    while time.time() < deadline:
        if check():
            return time.time()
        time.sleep(pause)
    sys.exit("probe_start: timed out")


def listening():
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def ready():
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        c.request("GET", "/readyz")
        ok = c.getresponse().status == 200
        c.close()
        return ok
    except OSError:
        return False


def in_rotation():
    try:
        text = urllib.request.urlopen(stats, timeout=2).read().decode()
    except OSError:
        return False
    return any(r[:2] == ["replicas", name] and len(r) > 17 and r[17] == "UP"
               for r in csv.reader(io.StringIO(text)))


open(started, "w").close()
times = [until(listening, 0.001), until(ready, 0.005), until(in_rotation, 0.01)]
with open(out, "w") as f:
    f.write(" ".join("%.6f" % t for t in times) + "\n")
EOF
}

time_start() {
  local name=$1 runs=$2 PORT PID
  [[ $runs =~ ^[1-9][0-9]*$ ]] || die "time-start: --runs takes a positive number, not '$runs'"
  open_stack "$name"
  local toml="--config $DIR/config/replica-$name.toml" probe="$DIR/run/probe-$name"
  local i t0 probe_pid listening ready rotation
  local all_l=() all_r=() all_t=()
  for ((i = 1; i <= runs; i++)); do
    stop_pids "$toml" "$STOP_WAIT_S" "$PID"
    alive "$PID" && die "replica $name ($PID) did not exit"
    wait_out_of_rotation "$name"
    rm -f "$probe.out" "$probe.started"
    probe_start "$PORT" "$name" "$probe.out" "$probe.started" &
    probe_pid=$!
    until [[ -f $probe.started ]]; do
      alive "$probe_pid" || die "time-start: the prober did not start"
      sleep 0.01
    done
    t0=$EPOCHREALTIME
    launch "replica-$name" serve
    PID=$LAUNCHED_PID
    printf -v "REPLICA_${name^^}_PID" '%s' "$PID"
    while alive "$probe_pid"; do
      if ! alive "$PID"; then
        kill "$probe_pid" 2>/dev/null || true
        log_tail "$DIR/log/replica-$name.log"
        die "replica $name exited during run $i"
      fi
      sleep 0.05
    done
    wait "$probe_pid" || die "replica $name: not back in rotation within 60 s (run $i; see $DIR/log/)"
    read -r listening ready rotation <"$probe.out"
    read -r listening ready rotation < <(awk -v t0="$t0" -v l="$listening" -v r="$ready" -v t="$rotation" \
      'BEGIN { printf "%.1f %.1f %.1f\n", (l - t0) * 1000, (r - t0) * 1000, (t - t0) * 1000 }')
    echo "run $i listening_ms $listening ready_ms $ready rotation_ms $rotation"
    all_l+=("$listening") all_r+=("$ready") all_t+=("$rotation")
  done
  rm -f "$probe.out" "$probe.started"
  write_env
  echo "replica_start_listening_ms $(median_of "${all_l[@]}")"
  echo "replica_start_ready_ms $(median_of "${all_r[@]}")"
  echo "replica_start_rotation_ms $(median_of "${all_t[@]}")"
}

# median_of X...: the median of the numbers (the mean of the middle two for an even count).
median_of() {
  printf '%s\n' "$@" | sort -g |
    awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.1f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

cmd=${1:-} DIR=${2:-}
[[ -n $cmd && -n $DIR ]] ||
  die "usage: stack.sh start DIR [--replicas 1|2] [--no-s3 | --s3-env FILE | --s3-mib N] [--watch PID] [--no-fsync] | stop DIR | restart-replica DIR a|b | time-start DIR a|b [--runs N]"
shift 2
DIR=$(realpath -m "$DIR")
case $cmd in
  start)
    s3_mode=own s3_env="" watch="" no_fsync=0 replicas=2 s3_mib=""
    while (($#)); do
      case $1 in
        --replicas)
          replicas=${2:-}
          [[ $replicas == 1 || $replicas == 2 ]] || die "--replicas takes 1 or 2, not '$replicas'"
          shift 2
          ;;
        --no-s3) s3_mode=none; shift ;;
        --s3-env) s3_mode=env s3_env=$(realpath "${2:?--s3-env needs a file}"); shift 2 ;;
        --watch) watch=${2:?--watch needs a pid}; shift 2 ;;
        --no-fsync) no_fsync=1; shift ;;
        --s3-mib)
          s3_mib=${2:-}
          [[ $s3_mib =~ ^[1-9][0-9]*$ ]] || die "--s3-mib takes a size in MiB, not '$s3_mib'"
          shift 2
          ;;
        *) die "unknown option $1" ;;
      esac
    done
    start_stack "$s3_mode" "$s3_env" "$watch" "$no_fsync" "$replicas" "$s3_mib"
    ;;
  stop) stop_stack ;;
  restart-replica) restart_replica "${1:-}" ;;
  time-start)
    name=${1:-} runs=5
    shift || true
    while (($#)); do
      case $1 in
        --runs) runs=${2:-}; shift 2 || die "--runs needs a number" ;;
        *) die "unknown option $1" ;;
      esac
    done
    time_start "$name" "$runs"
    ;;
  *) die "unknown command $cmd (start, stop, restart-replica or time-start)" ;;
esac
