#!/usr/bin/env bash
# Bodies never hold threads (issue 13 §2): 64 anonymous connections trickling bodies at
# 1 byte/s and 32 announcing 60 MiB bodies and stopping, against one `hangar serve`;
# meanwhile an authorized commit, a git clone and an LFS batch each answer in under 1 s,
# RSS stays under 128 MiB and the tricklers are closed by the rate rule. Then refusals
# from the head alone (before any body byte), Transfer-Encoding other than chunked, and
# each body limit's refusal and message.
# Limits are set through HANGAR_* variables, which an older binary ignores, so
# `slow_bodies.sh OLD_HANGAR` measures the same attack against it (docs/benchmarks.md).
# Usage: slow_bodies.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"
GEN="$LIB_DIR/slow_bodies.py"

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice
ALICE="$(new_token alice --role write)"
READER="$(new_token alice --role read)"
AUTH=(-H "Authorization: Bearer $ALICE")
ND=(-H 'Content-Type: application/x-ndjson')
LFSJ=(-H 'Content-Type: application/vnd.git-lfs+json' -H 'Accept: application/vnd.git-lfs+json')
# A short rate window so the tricklers go within seconds; anonymous bodies per IP high
# enough that the rate rule, not that limit, is what closes all 64.
# Eight shared workers, as on a 2-core machine, whatever this one has.
export HANGAR_LIMITS_BODY_RATE_WINDOW_S=6 HANGAR_LIMITS_ANONYMOUS_BODIES_PER_IP=512 \
  HANGAR_SERVER_WORKER_THREADS=8 HANGAR_LIMITS_PASSWORD_HASH_CONCURRENCY=1
start_server "$DATA" || die "hangar serve did not start"
unset HANGAR_LIMITS_BODY_RATE_WINDOW_S HANGAR_LIMITS_ANONYMOUS_BODIES_PER_IP \
  HANGAR_SERVER_WORKER_THREADS HANGAR_LIMITS_PASSWORD_HASH_CONCURRENCY
must_create "$ALICE" m alice model false
b64() { printf '%s' "$1" | base64 -w0; }
# commit N: an HF commit API call adding file N.txt; sets ST/BODY.
commit() {
  printf '%s\n%s\n' '{"key":"header","value":{"summary":"c'"$1"'"}}' \
    "{\"key\":\"file\",\"value\":{\"path\":\"f$1.txt\",\"content\":\"$(b64 "file $1")\",\"encoding\":\"base64\"}}" \
    >"$T/c$1.ndjson"
  req POST "$BASE/api/models/alice/m/commit/main" "${AUTH[@]}" "${ND[@]}" --max-time 15 \
    --data-binary @"$T/c$1.ndjson"
}
commit 0
check_status "a first commit" 200
OID="$(printf 'lfs object' | sha256sum | cut -c1-64)"
BATCH="{\"operation\":\"upload\",\"transfers\":[\"basic\"],\"objects\":[{\"oid\":\"$OID\",\"size\":10}]}"
HELPER="$(cred_helper alice "$ALICE")"

# hold_many N NAME HEAD BYTES SECONDS [HOLD_ARGS...]: N background holders (slow_bodies.py
# hold), each sending HEAD and BYTES body bytes, then waiting up to SECONDS for the answer;
# their ready marks are $T/NAME<i>, their answers $T/NAME<i>.json. They join HOLDERS.
hold_many() {
  local i
  for i in $(seq 1 "$1"); do
    python3 "$GEN" hold "$PORT" "$3" "$4" --seconds "$5" --ready "$T/$2$i" "${@:6}" \
      >"$T/$2$i.json" &
    EXTRA_PIDS+=("$!")
    HOLDERS+=("$!")
  done
}
# all_ready N NAME...: whether N holders of those names have sent their bytes.
all_ready() {
  local n=$1 count=0 name
  shift
  for name; do count=$((count + $(ls "$T/$name"[0-9]* 2>/dev/null | grep -vc json))); done
  [[ $count -ge $n ]]
}

# ms_since START_NS: milliseconds since START_NS (date +%s%N).
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

section "attack: 64 tricklers at 1 byte/s + 32 × 'Content-Length: 60 MiB' then silence"
info "command: tests/integration/slow_bodies.sh PATH_TO_HANGAR (figures below; docs/benchmarks.md)"
python3 "$GEN" attack "$PORT" alice/m --trickle 64 --big 32 --seconds 20 --ready "$T/ready" \
  >"$T/attack.json" 2>"$T/attack.err" &
GEN_PID=$!
EXTRA_PIDS+=("$GEN_PID")
wait_until 10 test -s "$T/ready" || die "the load generator did not connect" "$(cat "$T/attack.err")"
# RSS samples while the attack runs.
(
  for ((i = 0; i < 300; i++)); do
    grep -E '^VmRSS' "/proc/$SERVER_PID/status" 2>/dev/null | awk '{print $2}'
    sleep 0.1
  done
) >"$T/rss.samples" &
RSS_PID=$!
EXTRA_PIDS+=("$RSS_PID")

t0="$(date +%s%N)"
commit 1
COMMIT_MS="$(ms_since "$t0")"
COMMIT_ST="$ST"
t0="$(date +%s%N)"
timeout 15 git -c credential.helper= -c "credential.helper=$HELPER" clone -q \
  "$BASE/alice/m" "$T/clone" 2>"$T/clone.err"
CLONE_RC=$?
CLONE_MS="$(ms_since "$t0")"
t0="$(date +%s%N)"
req POST "$BASE/alice/m.git/info/lfs/objects/batch" "${AUTH[@]}" "${LFSJ[@]}" --max-time 15 \
  --data-binary "$BATCH"
BATCH_MS="$(ms_since "$t0")"
BATCH_ST="$ST"
BATCH_HREF="$(jbody '.objects[0].actions.upload.href')"
info "during the attack: commit ${COMMIT_MS} ms ($COMMIT_ST), clone ${CLONE_MS} ms (rc $CLONE_RC), LFS batch ${BATCH_MS} ms ($BATCH_ST)"
check_eq "authorized commit during the attack → 200" 200 "$COMMIT_ST"
check_true "  in under 1 s (${COMMIT_MS} ms)" test "$COMMIT_MS" -lt 1000
check_eq "git clone during the attack succeeds" 0 "$CLONE_RC"
check_true "  in under 1 s (${CLONE_MS} ms)" test "$CLONE_MS" -lt 1000
check_true "  with the commit made during the attack" test -f "$T/clone/f1.txt"
check_eq "LFS batch during the attack → 200" 200 "$BATCH_ST"
check_true "  in under 1 s (${BATCH_MS} ms)" test "$BATCH_MS" -lt 1000
check_match "  with an upload action" '^http' "$BATCH_HREF"

# The memory amplification of issue 13 §3: 8 parallel anonymous 60 MiB commit bodies,
# pushed without waiting for 100 Continue.
head -c $((60 << 20)) /dev/zero >"$T/60m.ndjson"
for i in 1 2 3 4 5 6 7 8; do
  curl -s -o /dev/null -w '%{http_code}\n' --max-time 20 -H 'Expect:' "${ND[@]}" \
    --data-binary @"$T/60m.ndjson" "$BASE/api/models/alice/m/commit/main" >"$T/amp$i.st" &
done
amplified_all() { [[ "$(cat "$T"/amp*.st 2>/dev/null | wc -l)" -eq 8 ]]; }
wait_until 25 amplified_all
info "8 anonymous 60 MiB commit bodies: statuses $(sort "$T"/amp*.st | uniq -c | tr -s ' \n' ' ')"
check_eq "8 anonymous 60 MiB commit bodies all refused" 8 \
  "$(cat "$T"/amp*.st | grep -cE '^(401|413)$')"
rm -f "$T/60m.ndjson"

wait "$GEN_PID"
SUMMARY="$(cat "$T/attack.json")"
info "load generator: $SUMMARY"
kill "$RSS_PID" 2>/dev/null
wait "$RSS_PID" 2>/dev/null
HWM_KB="$(awk '/^VmHWM/ {print $2}' "/proc/$SERVER_PID/status")"
RSS_MAX_KB="$(sort -n "$T/rss.samples" | tail -n 1)"
info "server RSS: peak (VmHWM) $((HWM_KB / 1024)) MiB, highest sample during the attack $((${RSS_MAX_KB:-0} / 1024)) MiB"
check_true "RSS peak under 128 MiB ($((HWM_KB / 1024)) MiB)" test "$HWM_KB" -lt $((128 * 1024))
jq_sum() { jq -r "$1" <<<"$SUMMARY" 2>/dev/null; }
check_eq "all 64 tricklers answered 408" 64 "$(jq_sum '.classes.trickle.by_status["408"] // 0')"
check_eq "  each by the rate rule ('too slow')" 64 "$(jq_sum '.classes.trickle.rate_rule_messages')"
check_true "  after the 6 s window, not before ($(jq_sum .classes.trickle.answered_after_s.min) s)" \
  test "$(jq_sum '.classes.trickle.answered_after_s.min >= 5.5')" = true
check_true "  and within 12 s ($(jq_sum .classes.trickle.answered_after_s.max) s)" \
  test "$(jq_sum '.classes.trickle.answered_after_s.max < 12')" = true
check_eq "all 32 60-MiB announcers refused at once (413/401)" 32 \
  "$(jq_sum '[.classes.big.by_status | to_entries[] | select(.key == "413" or .key == "401") | .value] | add // 0')"
check_true "  within 2 s ($(jq_sum .classes.big.answered_after_s.max) s)" \
  test "$(jq_sum '.classes.big.answered_after_s.max < 2')" = true
req GET "$BASE/healthz"
check_status "the server still serves" 200

section "refused from the head alone, before any body byte"
probe() { python3 "$GEN" probe "$PORT" "$@"; }
P="$(probe 'POST /api/models/alice/m/commit/main HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer hf_not_a_token\r\nContent-Type: application/x-ndjson\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n' --wait 5)"
check_match "a bad token on a body route → 401 with only the head sent" '^HTTP/1.1 401' \
  "$(jq -r .status_line <<<"$P")"
check_true "  answered within 1 s ($(jq -r .answer_after_s <<<"$P") s)" \
  test "$(jq -r '.answer_after_s < 1' <<<"$P")" = true
check_eq "  without a 100 Continue first" false "$(jq -r .continue_first <<<"$P")"
check_match "  with Connection: close" '[Cc]onnection: close' "$(jq -r .headers <<<"$P")"
check_eq "  and the connection closed" true "$(jq -r .closed <<<"$P")"
P="$(probe 'POST /api/models/alice/m/commit/main HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: 62914560\r\n\r\n' --wait 5)"
check_match "an anonymous 60 MiB commit body → refused with only the head sent" \
  '^HTTP/1.1 (401|413)' "$(jq -r .status_line <<<"$P")"
check_true "  answered within 1 s ($(jq -r .answer_after_s <<<"$P") s)" \
  test "$(jq -r '.answer_after_s < 1' <<<"$P")" = true
check_match "  saying why" 'unauthenticated|[Aa]uthoriz|authentication required|sign' "$(jq -r .body <<<"$P")"
# A small body fits the read-ahead, but the route's declared need (write on the repo) is
# checked from the head first: the anonymous caller is refused before a byte is read.
P="$(probe 'POST /api/models/alice/m/commit/main HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n' --wait 5)"
check_match "an anonymous small commit body → 401 with only the head sent" '^HTTP/1.1 401' \
  "$(jq -r .status_line <<<"$P")"
check_eq "  without a 100 Continue first" false "$(jq -r .continue_first <<<"$P")"
# Routes with a credential of their own check it from the head too: the OCI registry (the
# caller must be able to push there) and LFS transfer hrefs (the ticket in the path).
P="$(probe 'POST /v2/alice/m/blobs/uploads/?digest=sha256:0000000000000000000000000000000000000000000000000000000000000000 HTTP/1.1\r\nHost: x\r\nContent-Length: 62914560\r\nExpect: 100-continue\r\n\r\n' --wait 5)"
check_match "an anonymous 60 MiB OCI blob push → 401 with only the head sent" '^HTTP/1.1 401' \
  "$(jq -r .status_line <<<"$P")"
check_match "  with the registry's challenge" '[Ww][Ww][Ww]-[Aa]uthenticate: Bearer' "$(jq -r .headers <<<"$P")"
check_eq "  without a 100 Continue first" false "$(jq -r .continue_first <<<"$P")"
P="$(probe "PUT /v2/alice/m/manifests/latest HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer $READER\r\nContent-Type: application/vnd.oci.image.manifest.v1+json\r\nContent-Length: 62914560\r\nExpect: 100-continue\r\n\r\n" --wait 5)"
check_match "a read token's 60 MiB manifest push → refused with only the head sent" \
  '^HTTP/1.1 (401|403)' "$(jq -r .status_line <<<"$P")"
check_eq "  without a 100 Continue first" false "$(jq -r .continue_first <<<"$P")"
P="$(probe "PUT /v2/alice/m/manifests/latest HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer $ALICE\\r\\nContent-Type: application/vnd.oci.image.manifest.v1+json\\r\\nContent-Length: 62914560\\r\\nExpect: 100-continue\\r\\n\\r\\n" --wait 5)"
check_match "a writer's 60 MiB manifest → 413 with only the head sent" '^HTTP/1.1 413' \
  "$(jq -r .status_line <<<"$P")"
check_eq "  without a 100 Continue first" false "$(jq -r .continue_first <<<"$P")"
P="$(probe "PUT /lfs-objects/upload/forged-ticket/$OID HTTP/1.1\r\nHost: x\r\nContent-Length: 62914560\r\nExpect: 100-continue\r\n\r\n" --wait 5)"
check_match "a 60 MiB LFS upload with a forged ticket → 403 with only the head sent" \
  '^HTTP/1.1 403' "$(jq -r .status_line <<<"$P")"
check_eq "  without a 100 Continue first" false "$(jq -r .continue_first <<<"$P")"
P="$(probe "POST /api/models/alice/m/commit/main HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer $ALICE\r\nContent-Type: application/x-ndjson\r\nContent-Length: 68157440\r\nExpect: 100-continue\r\n\r\n" --wait 5)"
check_match "a writer's 65 MiB commit (over the 64 MiB a commit may have) → 413 with only the head sent" \
  '^HTTP/1.1 413' "$(jq -r .status_line <<<"$P")"
check_eq "  without a 100 Continue first" false "$(jq -r .continue_first <<<"$P")"
# A native upload part is checked from its head too (Requirement::Also): a writer's body
# for an upload that is not theirs, or of the wrong length, is never read.
P="$(probe "PUT /api/uploads/0123456789abcdef0123456789abcdef/parts/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer $ALICE\r\nContent-Length: 62914560\r\nExpect: 100-continue\r\n\r\n" --wait 5)"
check_match "a writer's 60 MiB part for an unknown upload → 404 with only the head sent" \
  '^HTTP/1.1 404' "$(jq -r .status_line <<<"$P")"
check_eq "  without a 100 Continue first" false "$(jq -r .continue_first <<<"$P")"
UP_SHA="$(head -c 100 /dev/zero | sha256sum | cut -c1-64)"
req POST "$BASE/api/models/alice/m/uploads" "${AUTH[@]}" -H 'Content-Type: application/json' \
  --data "{\"sha256\":\"$UP_SHA\",\"size\":100}"
UP_ID="$(jbody .id)"
P="$(probe "PUT /api/uploads/$UP_ID/parts/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer $ALICE\r\nContent-Length: 62914560\r\nExpect: 100-continue\r\n\r\n" --wait 5)"
check_match "a 60 MiB part of a 100-byte upload → 400 (size) with only the head sent" \
  '^HTTP/1.1 4' "$(jq -r .status_line <<<"$P")"
check_match "  saying what size it must be" 'must be 100 bytes' "$(jq -r .body <<<"$P")"
check_eq "  without a 100 Continue first" false "$(jq -r .continue_first <<<"$P")"
P="$(probe 'POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n' --wait 1)"
check_eq "an admitted body that waits for it gets 100 Continue" true \
  "$(jq -r .continue_first <<<"$P")"

section "Transfer-Encoding must be exactly chunked"
for te in 'gzip, chunked' 'chunked, chunked' 'identity'; do
  P="$(probe "POST /login HTTP/1.1\\r\\nHost: x\\r\\nTransfer-Encoding: $te\\r\\n\\r\\n5\\r\\nhello\\r\\n0\\r\\n\\r\\n" --wait 5)"
  check_match "Transfer-Encoding: $te → 400" '^HTTP/1.1 400' "$(jq -r .status_line <<<"$P")"
  check_match "  naming it" "Transfer-Encoding '$te'" "$(jq -r .body <<<"$P")"
done
P="$(probe 'POST /login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n' --wait 5)"
check_match "two Transfer-Encoding headers → 400" '^HTTP/1.1 400' "$(jq -r .status_line <<<"$P")"
P="$(probe 'POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\n' --wait 5)"
check_match "Transfer-Encoding: Chunked passes framing (405 from the route)" '^HTTP/1.1 405' \
  "$(jq -r .status_line <<<"$P")"

section "a chunk-size line with endless extensions → 400, memory bounded"
RSS0_KB="$(awk '/^VmHWM/ {print $2}' "/proc/$SERVER_PID/status")"
{ printf '1;'; head -c 1000000 /dev/zero | tr '\0' a; } >"$T/extension.body"
P="$(probe 'POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n' \
  --body-after 0 "@$T/extension.body" --wait 5)"
check_match "1 MB of chunk extension → 400" '^HTTP/1.1 400' "$(jq -r .status_line <<<"$P")"
check_match "  saying the framing is too long" 'chunked framing too long' "$(jq -r .body <<<"$P")"
RSS1_KB="$(awk '/^VmHWM/ {print $2}' "/proc/$SERVER_PID/status")"
check_true "  RSS peak grew by under 4 MiB ($(((RSS1_KB - RSS0_KB) / 1024)) MiB)" \
  test $((RSS1_KB - RSS0_KB)) -lt 4096

section "a writer's large body that stalls after the read-ahead → 408 by the rate rule"
python3 "$GEN" hold "$PORT" 'POST /api/models/alice/m/commit/main HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer '"$ALICE"'\r\nContent-Type: application/x-ndjson\r\nContent-Length: 2097152\r\n\r\n' \
  1572864 --seconds 15 --ready "$T/hold0" >"$T/hold0.json"
check_match "408 from the handler's read" '^HTTP/1.1 408' "$(jq -r .answer <"$T/hold0.json")"
check_match "  with the rate rule's message" 'too slow' "$(jq -r .answer <"$T/hold0.json")"

section "a writer's stalled large bodies park threads of their own, not the 8 shared workers"
# alice holds 16 commit bodies (limits.bodies_per_principal) past the read-ahead, each in
# its handler's read: twice the worker pool. Meanwhile carol's large commit goes through,
# alice's 17th large body is refused from its head, and small requests are not delayed.
new_user carol
CAROL="$(new_token carol --role write)"
must_create "$CAROL" c carol model false
HOLD_HEAD='POST /api/models/alice/m/commit/main HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer '"$ALICE"'\r\nContent-Type: application/x-ndjson\r\nContent-Length: 2097152\r\n\r\n'
{
  printf '%s\n' '{"key":"header","value":{"summary":"large"}}'
  printf '{"key":"file","value":{"path":"big.bin","encoding":"base64","content":"%s"}}\n' \
    "$(head -c $((1536 << 10)) /dev/urandom | base64 -w0)"
} >"$T/large.ndjson"
HOLDERS=()
# The holders keep their bodies going above the rate rule until $T/stall exists, so how
# long the checks below take under load cannot let the 6 s window close them early.
FEED=(--feed-until "$T/stall" --feed-room 400000)
hold_many 16 park "$HOLD_HEAD" 1572864 12 "${FEED[@]}"
# The same limit holds for the anonymous uploads of one repo's LFS tickets: 16 stalled
# 2 MiB PUTs to an upload href of alice/m, then a 17th.
BIG_OID="$(head -c 2097152 /dev/zero | sha256sum | cut -c1-64)"
req POST "$BASE/alice/m.git/info/lfs/objects/batch" "${AUTH[@]}" "${LFSJ[@]}" --max-time 15 \
  --data-binary "{\"operation\":\"upload\",\"transfers\":[\"basic\"],\"objects\":[{\"oid\":\"$BIG_OID\",\"size\":2097152}]}"
BIG_PATH="$(jbody '.objects[0].actions.upload.href' | sed -E 's|^https?://[^/]+||')"
TICKET_HEAD="PUT $BIG_PATH HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 2097152\\r\\n\\r\\n"
hold_many 16 tpark "$TICKET_HEAD" 1572864 12 "${FEED[@]}"
wait_until 10 all_ready 32 park tpark || die "the 32 holders did not connect"
sleep 1  # their last bytes reach the handlers' reads
# Polled: under load their heads may still be on their way to admission.
refused_429() {
  P="$(probe "$1" --wait 1)"
  [[ "$(jq -r .status_line <<<"$P")" == "HTTP/1.1 429"* ]]
}
wait_until 3 refused_429 "${HOLD_HEAD//2097152/3000000}"
check_match "alice's 17th large body → 429 from its head" '^HTTP/1.1 429' \
  "$(jq -r .status_line <<<"$P")"
check_match "  naming limits.bodies_per_principal" 'limits.bodies_per_principal' \
  "$(jq -r .body <<<"$P")"
wait_until 3 refused_429 "$TICKET_HEAD"
check_match "a 17th large upload to alice/m's LFS tickets → 429 from its head" '^HTTP/1.1 429' \
  "$(jq -r .status_line <<<"$P")"
check_match "  counted for the repo" 'large request bodies in flight for repo #' \
  "$(jq -r .body <<<"$P")"
t0="$(date +%s%N)"
req POST "$BASE/api/models/carol/c/commit/main" -H "Authorization: Bearer $CAROL" "${ND[@]}" \
  --max-time 15 --data-binary @"$T/large.ndjson"
LARGE_MS="$(ms_since "$t0")"
check_status "carol's 2 MiB commit while alice holds 16 large bodies" 200
check_true "  in under 1 s (${LARGE_MS} ms)" test "$LARGE_MS" -lt 1000
t0="$(date +%s%N)"
commit 2
check_status "alice's small commit meanwhile (read-ahead, shared pool)" 200
check_true "  in under 1 s ($(ms_since "$t0") ms)" test "$(ms_since "$t0")" -lt 1000
touch "$T/stall"
wait "${HOLDERS[@]}"
check_eq "the 16 stalled bodies answered 408 by the rate rule" 16 \
  "$(cat "$T"/park*.json | jq -r '.answer | startswith("HTTP/1.1 408") and contains("too slow")' | grep -c true)"
# Ticket bodies have a checked credential: however long their handlers take to begin, their
# read-aheads (16 MiB together) do not draw on the IP's unauthenticated share (8 MiB).
check_eq "  and so did the 16 stalled ticket uploads, none refused for the IP's memory share" 16 \
  "$(cat "$T"/tpark*.json | jq -r '.answer | startswith("HTTP/1.1 408") and contains("too slow")' | grep -c true)"

section "unauthenticated bodies hold at most an eighth of the body memory per IP"
# Eight anonymous 1 MiB paths-info bodies, stalled 10 bytes before their end, hold this
# IP's share (8 MiB of 64); a ninth is refused, and a writer's commit is not delayed.
ANON_HEAD='POST /api/models/alice/m/paths-info/main HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n'
HOLDERS=()
hold_many 8 anon "$ANON_HEAD" 1048566 4
wait_until 10 all_ready 8 anon || die "the 8 anonymous holders did not connect"
sleep 1  # their bytes reach the read-ahead
python3 "$GEN" hold "$PORT" "$ANON_HEAD" 1048566 --seconds 3 --ready "$T/anon-ninth" \
  >"$T/anon-ninth.json"
check_match "a ninth anonymous 1 MiB body from the IP → 429" '^HTTP/1.1 429' \
  "$(jq -r .answer <"$T/anon-ninth.json")"
check_match "  saying it is this address's share" 'as much memory as one address may' \
  "$(jq -r .answer <"$T/anon-ninth.json")"
t0="$(date +%s%N)"
commit 3
check_status "alice's commit meanwhile" 200
check_true "  in under 1 s ($(ms_since "$t0") ms)" test "$(ms_since "$t0")" -lt 1000
wait "${HOLDERS[@]}"

section "requests that wait in a queue hold no shared worker: 80 sign-ins for 1 hash slot"
# limits.password_hash_concurrency is 1 here: 80 wrong-password sign-ins queue for it (about
# 80 Argon2 hashes in a row), ten times the shared workers; a commit meanwhile is not
# delayed. Before, each queued sign-in held one of the 8 workers.
printf 'dora-Passw0rd\n' | admin user create dora --password-stdin >/dev/null 2>&1 ||
  die "admin user create dora"
req GET "$BASE/login" -c "$T/login.jar" -b "$T/login.jar"
LOGIN_CSRF="$(python3 "$LIB_DIR/web_safety_html.py" csrf "$BODY")"
LOGIN_T0="$(date +%s%N)"
for i in $(seq 1 80); do
  curl -s -o /dev/null -w '%{http_code}\n' --max-time 60 -b "$T/login.jar" \
    --data-urlencode "_csrf=$LOGIN_CSRF" --data-urlencode username=dora \
    --data-urlencode password=wrong "$BASE/login" >"$T/login$i.st" &
  EXTRA_PIDS+=("$!")
done
sleep 0.5  # they reach the hash queue
t0="$(date +%s%N)"
commit 4
check_status "alice's commit while 80 sign-ins wait to hash" 200
check_true "  in under 1 s ($(ms_since "$t0") ms)" test "$(ms_since "$t0")" -lt 1000
signed_in_all() { [[ "$(cat "$T"/login*.st 2>/dev/null | wc -l)" -ge 80 ]]; }
wait_until 60 signed_in_all
info "80 wrong-password sign-ins: statuses $(sort "$T"/login*.st | uniq -c | tr -s ' \n' ' '), all answered within $(ms_since "$LOGIN_T0") ms"
stop_server || fail "server stopped cleanly" "rc $SERVER_RC"

HOLDERS=()
section "limits: per-IP connections and anonymous bodies, body memory, time per body"
D2="$T/data2"
mkdir -p "$D2"
DATA="$D2"
new_user bob
BOB="$(new_token bob --role write)"
export HANGAR_LIMITS_CONNECTIONS_PER_IP=6 HANGAR_LIMITS_ANONYMOUS_BODIES_PER_IP=2 \
  HANGAR_LIMITS_BODY_BUFFER_BYTES=512KiB HANGAR_LIMITS_BODY_MEMORY_BYTES=1MiB \
  HANGAR_LIMITS_BODY_MEMORY_WAIT_S=0 HANGAR_LIMITS_BODY_TIME_LIMIT_S=10
start_server "$D2" || die "hangar serve (limits) did not start"
unset HANGAR_LIMITS_CONNECTIONS_PER_IP HANGAR_LIMITS_ANONYMOUS_BODIES_PER_IP \
  HANGAR_LIMITS_BODY_BUFFER_BYTES HANGAR_LIMITS_BODY_MEMORY_BYTES \
  HANGAR_LIMITS_BODY_MEMORY_WAIT_S HANGAR_LIMITS_BODY_TIME_LIMIT_S
must_create "$BOB" r bob model false
# paths-info of a public repo: a body route anonymous callers may use (HF error shape).
PI='POST /api/models/bob/r/paths-info/main HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n'
# B1 and B2, bob's, hold all but 10 bytes of a 512 KiB and a 448 KiB body; A1 and A2,
# anonymous, each half of a 2000-byte one (both anonymous slots of this IP). Together
# they hold all but 60 KiB of the 1 MiB budget.
for a in B1:524288 B2:458752; do
  python3 "$GEN" hold "$PORT" "${PI}Authorization: Bearer $BOB\\r\\nContent-Length: ${a#*:}\\r\\n\\r\\n" \
    $((${a#*:} - 10)) --seconds 16 --ready "$T/hold${a%:*}" >"$T/hold${a%:*}.json" &
  EXTRA_PIDS+=("$!")
  HOLDERS+=("$!")
done
for a in A1 A2; do
  python3 "$GEN" hold "$PORT" "${PI}Content-Length: 2000\\r\\n\\r\\n" 1000 \
    --seconds 16 --ready "$T/hold$a" >"$T/hold$a.json" &
  EXTRA_PIDS+=("$!")
  HOLDERS+=("$!")
done
wait_until 5 test -s "$T/holdA1" -a -s "$T/holdA2" -a -s "$T/holdB1" -a -s "$T/holdB2" ||
  die "holders A1, A2, B1, B2 did not connect"
# Each refusal is polled for: the holders' bytes reach the server asynchronously.
anon_refused() {
  P="$(probe "${PI}Content-Length: 100\\r\\n\\r\\n" --wait 2)"
  [[ "$(jq -r .status_line <<<"$P")" == "HTTP/1.1 429"* ]]
}
wait_until 3 anon_refused
check_match "a third anonymous body from one IP → 429 from its head" '^HTTP/1.1 429' \
  "$(jq -r .status_line <<<"$P")"
check_match "  naming limits.anonymous_bodies_per_ip" 'limits.anonymous_bodies_per_ip' \
  "$(jq -r .body <<<"$P")"
budget_refused() {
  P="$(probe "${PI}Authorization: Bearer $BOB\\r\\nContent-Length: 65536\\r\\n\\r\\n" \
    --body-after 0 "$(head -c 65536 /dev/zero | tr '\0' ' ')" --wait 3)"
  [[ "$(jq -r .status_line <<<"$P")" == "HTTP/1.1 503"* ]]
}
wait_until 3 budget_refused
check_match "a body over the memory budget → 503" '^HTTP/1.1 503' "$(jq -r .status_line <<<"$P")"
check_match "  naming limits.body_memory_bytes" 'limits.body_memory_bytes' "$(jq -r .body <<<"$P")"
check_match "  with Retry-After" 'Retry-After' "$(jq -r .headers <<<"$P")"
# A1, A2, B1 and B2 hold four connections; a few more reach the limit of 6 (refused probes may still
# be closing); then one is refused before it sends anything.
CONN_OUT="$(python3 - "$PORT" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
held = []
for i in range(8):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(0.5)
    try:
        data = s.recv(65536)
    except socket.timeout:
        held.append(s)
        continue
    print(f"{len(held)} {data.decode('latin-1')!r}")
    break
PY
)"
check_match "connections over the per-IP limit → 429 at once" '^[0-9] .HTTP/1.1 429' "$CONN_OUT"
check_match "  naming limits.connections_per_ip" 'limits.connections_per_ip' "$CONN_OUT"
wait "${HOLDERS[@]}"
for a in A1 B1; do
  check_match "a body not complete within body_time_limit_s → 408 ($a)" '^HTTP/1.1 408' \
    "$(jq -r .answer <"$T/hold$a.json")"
  check_match "  naming limits.body_time_limit_s" 'limits.body_time_limit_s' \
    "$(jq -r .answer <"$T/hold$a.json")"
done
req GET "$BASE/healthz"
check_status "the server still serves" 200
stop_server || fail "server stopped cleanly" "rc $SERVER_RC"

finish
