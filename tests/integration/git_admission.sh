#!/usr/bin/env bash
# Issue 18 §3: one admission budget for git over HTTP, SSH and git://. With pack_concurrency
# 2, clients of every transport share two upload-pack slots: the anonymous class holds at
# most one of them (pack_concurrency − 1), waiters are served in arrival order, a full
# queue and a wait past pack_queue_wait_s get each transport's error (HTTP 503, an ERR
# packet over SSH and git://), a waiting SSH client is told why it waits, and pushes go on
# while clones fill their budget.
#
# Clients that hold a slot are real git conversations left open: `git-upload-pack` over
# SSH, or a git:// request, whose client reads the ref advertisement and then says nothing
# (upload-pack waits for its wants).
#
# Usage: git_admission.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

WAIT_S=15
section "setup: pack_concurrency 2, pack_queue 2, pack_queue_wait_s $WAIT_S"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice --email alice@example.org
ALICE="$(new_token alice --name laptop --role write)"
new_user bob --email bob@example.org
BOB="$(new_token bob --name laptop --role write)"
new_user ops --admin
OPS="$(new_token ops --name scraper --role read)"
start_server "$DATA" --set ssh.enabled=true --set git_daemon.listen=127.0.0.1:0 \
  --set limits.pack_concurrency=2 --set limits.pack_per_principal=2 \
  --set limits.pack_queue=2 --set limits.pack_queue_wait_s=$WAIT_S || die "hangar serve did not start"
wait_until 10 grep -q '^git:// on port' "$SERVER_OUT" || die "no git:// port line"
GITD="git://127.0.0.1:$(sed -n 's/^git:\/\/ on port \([0-9]*\)$/\1/p' "$SERVER_OUT")"
start_sshd "$DATA"
ssh_key alice
ssh_key bob
add_ssh_key "$ALICE" alice laptop
[[ "$ST" == 201 ]] || die "adding alice's key" "$(exchange)"
add_ssh_key "$BOB" bob laptop
[[ "$ST" == 201 ]] || die "adding bob's key" "$(exchange)"
must_create "$ALICE" m alice model false
W="$T/w"
gits alice clone -q "$SSH_URL/alice/m.git" "$W" 2>/dev/null || die "first clone"
pass "hub with SSH ($SSH_URL) and git:// ($GITD)"

# queued: the hub's git queue length (GET /metrics).
queued() {
  curl -sS -H "Authorization: Bearer $OPS" "$BASE/metrics" | awk '$1 == "hangar_git_queue_length" {print $2}'
}
queue_is() { [[ "$(queued)" == "$1" ]]; }

# hold_ssh KEY NAME: an SSH upload-pack of alice/m left open (its stdin a FIFO this script
# keeps open); admitted once $T/NAME.out has the ref advertisement. Sets HELD_PID.
hold_ssh() {
  mkfifo "$T/$2.in"
  $(sshc "$1") "$SSH_USER@127.0.0.1" "git-upload-pack 'alice/m.git'" \
    <"$T/$2.in" >"$T/$2.out" 2>"$T/$2.err" &
  HELD_PID=$!
  EXTRA_PIDS+=("$HELD_PID")
  local fd
  exec {fd}>"$T/$2.in"
  HELD_FDS+=("$fd")
}
HELD_FDS=()
# hold_gitd NAME: the same over git://, anonymously.
hold_gitd() {
  python3 - "${GITD#git://}" >"$T/$1.out" 2>"$T/$1.err" <<'PY' &
import socket, sys, time
host, port = sys.argv[1].split(":")
s = socket.create_connection((host, int(port)))
req = b"git-upload-pack /alice/m.git\0host=%s\0" % sys.argv[1].encode()
s.sendall(b"%04x" % (len(req) + 4) + req)
data = b""
while not data.endswith(b"0000"):
    chunk = s.recv(65536)
    if not chunk:
        print("closed: " + data.decode(errors="replace"), flush=True)
        sys.exit(1)
    data += chunk
print("admitted", flush=True)
time.sleep(300)
PY
  HELD_PID=$!
  EXTRA_PIDS+=("$HELD_PID")
}
admitted() { [[ -s "$T/$1.out" ]]; }
# release PID: ends a holder; its slot frees once git sees the end of its input.
release() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

section "the anonymous class leaves a slot to signed-in users"
hold_gitd g1
G1=$HELD_PID
wait_until 10 admitted g1 && pass "anonymous git:// client holds a slot" || fail "git:// holder admitted" "$(cat "$T/g1.out" "$T/g1.err")"
gitc "" clone -q "$BASE/alice/m" "$T/a1" 2>"$T/a1.err" &
A1=$!
wait_until 10 queue_is 1 && pass "a second anonymous clone (HTTP) waits although a slot is free" ||
  fail "anonymous HTTP clone queued" "queue: $(queued)"
if gits bob clone -q "$SSH_URL/alice/m.git" "$T/b1" 2>"$T/b1.err"; then
  pass "bob clones over SSH past the waiting anonymous client"
else
  fail "bob clones over SSH past the waiting anonymous client" "$(brief "$T/b1.err")"
fi
check_eq "the anonymous clone still waits" 1 "$(queued)"
release "$G1"
if wait "$A1"; then pass "the anonymous clone runs once the anonymous slot is free"
else fail "the anonymous clone runs once the anonymous slot is free" "$(brief "$T/a1.err")"; fi

section "four clones over SSH, git:// and HTTP: two run, two wait, in order"
hold_ssh alice s1
S1=$HELD_PID
hold_gitd g2
G2=$HELD_PID
wait_until 10 admitted s1 && wait_until 10 admitted g2 &&
  pass "two run: alice over SSH, an anonymous client over git://" ||
  fail "two holders admitted" "s1: $(brief "$T/s1.err") g2: $(cat "$T/g2.out")"
hold_ssh bob w1
W1=$HELD_PID
wait_until 10 queue_is 1 || fail "bob's SSH clone queued" "queue: $(queued)"
gitc "$(cred_helper alice "$ALICE")" clone -q "$BASE/alice/m" "$T/w2" 2>"$T/w2.err" &
W2=$!
W2_START=$(date +%s)
wait_until 10 queue_is 2 && pass "two wait: bob over SSH, then alice over HTTP" || fail "two queued" "queue: $(queued)"
check_true "bob's waiting SSH client is told why it waits" grep -q "waiting for a free git slot (0 ahead" "$T/w1.err"

section "a full queue: each transport's error, at once"
t0=$(date +%s)
gits bob ls-remote "$SSH_URL/alice/m.git" >/dev/null 2>"$T/f1.err"
check_true "SSH: an ERR packet (git prints 'remote error: too many git operations')" grep -q "remote error: too many git operations" "$T/f1.err"
git clone -q "$GITD/alice/m.git" "$T/f2" 2>"$T/f2.err"
check_true "git://: an ERR packet" grep -q "remote error: too many git operations" "$T/f2.err"
gitc "$(cred_helper bob "$BOB")" clone -q "$BASE/alice/m" "$T/f3" 2>"$T/f3.err"
check_true "HTTP: 503" grep -q "503" "$T/f3.err"
req POST "$BASE/alice/m.git/git-upload-pack" -H "Authorization: Bearer $BOB" \
  -H 'Content-Type: application/x-git-upload-pack-request' --data-binary '0000'
check_status "HTTP: 503 with Retry-After" 503
has_hdr retry-after && pass "Retry-After sent" || fail "Retry-After sent" "$(exchange)"
check_true "refused at once (under ${WAIT_S} s)" test $(($(date +%s) - t0)) -lt "$WAIT_S"

section "pushes proceed while clones fill their budget"
echo "pushed while full" >"$W/full.txt"
git -C "$W" add full.txt && git -C "$W" commit -qm "while full"
if gits alice -C "$W" push -q origin main 2>"$T/push.err"; then
  pass "alice pushes over SSH while the clone queue is full"
else
  fail "alice pushes over SSH while the clone queue is full" "$(brief "$T/push.err")"
fi

section "a freed slot goes to the first waiter; the second times out"
release "$S1"
wait_until 10 admitted w1 && pass "bob's SSH clone (first in the queue) runs" || fail "first waiter admitted" "$(brief "$T/w1.err")"
check_eq "alice's HTTP clone (second) still waits" 1 "$(queued)"
if wait "$W2"; then
  fail "the HTTP clone times out after pack_queue_wait_s" "it succeeded"
else
  check_true "HTTP: the wait ran out with 503 (after $(($(date +%s) - W2_START)) s)" grep -q "503" "$T/w2.err"
fi

section "waits past pack_queue_wait_s over SSH and git://"
gits bob ls-remote "$SSH_URL/alice/m.git" >/dev/null 2>"$T/t1.err" &
T1=$!
git ls-remote "$GITD/alice/m.git" >/dev/null 2>"$T/t2.err" &
T2=$!
wait "$T1"
wait "$T2"
check_true "SSH: told it waits, then an ERR packet" grep -q "waiting for a free git slot" "$T/t1.err"
check_true "SSH: remote error after the wait" grep -q "remote error: too many git operations" "$T/t1.err"
check_true "git://: an ERR packet after the wait" grep -q "remote error: too many git operations" "$T/t2.err"
release "$W1"
release "$G2"
wait_until 10 queue_is 0
check_eq "nothing left queued" 0 "$(queued)"

finish
