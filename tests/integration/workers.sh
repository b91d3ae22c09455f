#!/usr/bin/env bash
# Issue 17 §3: the durable job queue with `hangar worker` processes on PostgreSQL (the
# server runs no jobs itself: jobs.in_process = false).
#  - a job queued by the admin CLI (`hangar admin maintain --queue`) is run by a worker;
#  - kill -9 of the worker during the job: its git dies with it, and the job completes
#    later on another worker, once (attempts 2, one completion logged, the repo maintained);
#  - a worker stopped with SIGTERM during a job hands it back at once and exits 0, and the
#    next worker runs it without waiting for the lease;
#  - /metrics shows the queue.
# A `git` wrapper first on the first workers' PATH makes their repack slow (3 s), so the
# test can stop them in the middle of it; it is the real git after the pause.
# Usage: workers.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup: PostgreSQL, a server that runs no jobs, one slow worker"
start_postgres
export HANGAR_DATABASE_URL="$PG_URL"
export HANGAR_JOBS_IN_PROCESS=false HANGAR_GC_INTERVAL_S=0 HANGAR_JOBS_LEASE_S=2
DATA="$T/data"
mkdir -p "$DATA"
new_user alice
ALICE="$(new_token alice --role write)"
new_user root --admin
ROOT="$(new_token root --role read)"
start_server "$DATA" || die "hangar serve did not start"
must_create "$ALICE" m alice model false
HC="$(cred_helper alice "$ALICE")"
gitc "$HC" clone -q "$BASE/alice/m" "$T/w" 2>"$T/clone.err" || die "clone" "$(cat "$T/clone.err")"
for i in 1 2 3; do
  (cd "$T/w" && echo "v$i" >f.txt && git add f.txt && git commit -q -m "c$i") || die "commit $i"
  gitc "$HC" -C "$T/w" push -q origin main 2>"$T/push.err" || die "push $i" "$(cat "$T/push.err")"
done
GIT_PATH="$DATA/repos/models/alice/m.git"

REAL_GIT="$(command -v git)"
mkdir -p "$T/slowgit" "$T/marks"
cat >"$T/slowgit/git" <<EOF
#!/bin/bash
for a in "\$@"; do
  if [ "\$a" = repack ]; then touch "$T/marks/repack.\$\$.\$(ps -o pgid= \$\$ | tr -d ' ')"; sleep 3; break; fi
done
exec "$REAL_GIT" "\$@"
EOF
chmod +x "$T/slowgit/git"

# start_worker NAME [env...]: a `hangar worker` in the background; sets WORKER_PID, waits for
# its "worker running" line.
start_worker() {
  local name="$1"; shift
  env "$@" "$HANGAR_BIN" worker --data-dir "$DATA" >"$T/$name.out" 2>"$T/$name.err" </dev/null &
  WORKER_PID=$!
  EXTRA_PIDS+=("$WORKER_PID")
  SERVER_LOGS+=("$T/$name.err")
  local i
  for ((i = 0; i < 200; i++)); do
    grep -q "^worker running" "$T/$name.out" 2>/dev/null && return 0
    alive "$WORKER_PID" || die "worker $name exited" "$(tail -n 5 "$T/$name.err")"
    sleep 0.05
  done
  die "worker $name did not say it was running"
}

# job_line ID: the `hangar admin jobs list` line of job ID in any state, or "".
job_line() {
  local st
  for st in queued running done dead; do
    admin jobs list --state "$st" 2>/dev/null | awk -F'\t' -v id="$1" '$1 == id'
  done
}

# wait_state ID STATE SECONDS: polls until job ID is in STATE.
wait_state() {
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    [[ "$(job_line "$1" | cut -f4)" == "$2" ]] && return 0
    sleep 0.1
  done
  return 1
}

# wait_mark SECONDS: until a slow repack has begun.
wait_mark() {
  local i
  for ((i = 0; i < $1 * 20; i++)); do
    compgen -G "$T/marks/repack.*" >/dev/null && return 0
    sleep 0.05
  done
  return 1
}

section "kill -9 of the worker during a job"
start_worker w1 PATH="$T/slowgit:$PATH"
W1="$WORKER_PID"
OUT="$(admin maintain alice/m --queue 2>&1)"
check_match "the admin CLI queues the maintenance" '^alice/m: queued as job [0-9]+$' "$OUT"
JOB="${OUT##* }"
check_true "worker 1 starts the job (its repack begins)" wait_mark 20
check_eq "the job is running" running "$(job_line "$JOB" | cut -f4)"
kill -KILL "$W1"
wait "$W1" 2>/dev/null
MARK="$(basename "$(compgen -G "$T/marks/repack.*" | head -n 1)")"
REPACK_PID="$(cut -d. -f2 <<<"$MARK")" REPACK_GROUP="$(cut -d. -f3 <<<"$MARK")"
sleep 0.2
check_false "worker 1's git died with it" alive "$REPACK_PID"
# (Zombies do not count: they are dead, waiting for init to reap them.)
check_eq "... and every process git had started (its process group is empty)" "" \
  "$(ps -o pid=,stat=,comm= -g "$REPACK_GROUP" | awk '$2 !~ /^Z/' | tr '\n' ' ')"
check_eq "the job is still running in the table (its lease has not run out)" running \
  "$(job_line "$JOB" | cut -f4)"
rm -f "$T"/marks/repack.*
start_worker w2
check_true "worker 2 takes the job up once the lease ran out, and completes it" wait_state "$JOB" done 20
LINE="$(job_line "$JOB")"
check_eq "it ran twice: the killed attempt and the completed one" "2/3" "$(echo "$LINE" | cut -f5)"
DONE_LOGS="$(cat "$T/w1.err" "$T/w2.err" | grep -c "$GIT_PATH: full")"
check_eq "one completed maintenance in the workers' logs" 1 "$DONE_LOGS"
check_true "the repository's maintenance record was written" grep -q last_full "$GIT_PATH/hangar-maintenance"
check_true "the repository is intact (git fsck --full)" "$REAL_GIT" --git-dir="$GIT_PATH" fsck --full --no-progress
check_eq "main is where it was" "$(git -C "$T/w" rev-parse HEAD)" "$("$REAL_GIT" --git-dir="$GIT_PATH" rev-parse main)"
kill -TERM "$WORKER_PID"
wait "$WORKER_PID"
check_eq "worker 2 exits 0 on SIGTERM" 0 "$?"

section "SIGTERM of a worker during a job hands it back"
start_worker w3 PATH="$T/slowgit:$PATH"
W3="$WORKER_PID"
OUT="$(admin maintain alice/m --queue --light 2>&1)"
JOB2="${OUT##* }"
check_true "worker 3 starts the job" wait_mark 20
kill -TERM "$W3"
wait "$W3"
check_eq "worker 3 exits 0" 0 "$?"
LINE="$(job_line "$JOB2")"
check_eq "the job is queued again at once" queued "$(echo "$LINE" | cut -f4)"
check_match "... saying why" "its process stopped" "$(echo "$LINE" | cut -f6)"
T0="$(date +%s%N)"
start_worker w4
check_true "worker 4 runs it" wait_state "$JOB2" done 20
info "worker 4 finished the handed-back job $((($(date +%s%N) - T0) / 1000000)) ms after it started"
kill -TERM "$WORKER_PID"
wait "$WORKER_PID"

section "a maintenance queued while another of the repo runs waits for it"
start_worker w5 PATH="$T/slowgit:$PATH"
W5="$WORKER_PID"
OUT="$(admin maintain alice/m --queue --full 2>&1)"
JOB3="${OUT##* }"
check_true "worker 5 starts a full maintenance" wait_mark 20
OUT="$(admin maintain alice/m --queue --light 2>&1)"
JOB4="${OUT##* }"
check_ne "a light one is a job of its own" "$JOB3" "$JOB4"
check_true "the full one completes" wait_state "$JOB3" done 20
check_true "the light one completes after it (not dead)" wait_state "$JOB4" done 20
check_eq "... on its first attempt" "1/3" "$(job_line "$JOB4" | cut -f5)"
kill -TERM "$W5"
wait "$W5"

section "the queue in /metrics"
req GET "$BASE/metrics" -H "Authorization: Bearer $ROOT"
check_status "scrape" 200
check_match "jobs queued" 'hangar_jobs_queued 0' "$(cat "$BODY")"
check_match "jobs dead" 'hangar_jobs_dead 0' "$(cat "$BODY")"

finish
