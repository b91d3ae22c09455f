#!/usr/bin/env bash
# What a commit's NDJSON body costs in memory (issue #13: an authorized writer's large
# commits were kept outside any budget, 4 × 61 MB reaching 796 MB of RSS). The handler reads
# the body line by line and charges it to limits.handler_memory_bytes, so concurrent large
# commits take turns: with room for one at a time, four parallel 60 MiB commits all succeed
# and the server's peak RSS stays near one commit's cost, not four.
# Usage: commit_memory.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice
ALICE="$(new_token alice --role write)"
# A 60 MiB body is charged its size: one commit holds the budget at a time.
HANGAR_LIMITS_HANDLER_MEMORY_BYTES=100MiB start_server "$DATA" || die "hangar serve did not start"
must_create "$ALICE" big alice model false
# body FILE N: a commit adding a 45 MiB file (60 MiB of base64) named big-N.bin.
body() {
  { printf '{"key":"header","value":{"summary":"big %s"}}\n' "$2"
    printf '{"key":"file","value":{"path":"big-%s.bin","encoding":"base64","content":"' "$2"
    head -c $((45 << 20)) /dev/urandom | base64 -w0
    printf '"}}\n'; } >"$1"
}
for i in 1 2 3 4; do body "$T/c$i.ndjson" "$i"; done
BASE_RSS_KB="$(awk '/^VmRSS/ {print $2}' "/proc/$SERVER_PID/status")"
info "server RSS before: $((BASE_RSS_KB / 1024)) MiB; each body $(($(stat -c %s "$T/c1.ndjson") >> 20)) MiB"

section "four parallel 60 MiB commits from one writer take turns"
for i in 1 2 3 4; do
  curl -s -o "$T/r$i.json" -w '%{http_code}' -H "Authorization: Bearer $ALICE" \
    -H 'Content-Type: application/x-ndjson' --data-binary @"$T/c$i.ndjson" \
    --max-time 120 "$BASE/api/models/alice/big/commit/main" >"$T/s$i" &
  EXTRA_PIDS+=("$!")
  CURLS+=("$!")
done
wait "${CURLS[@]}"
for i in 1 2 3 4; do
  check_eq "commit $i → 200" 200 "$(cat "$T/s$i")"
done
req GET "$BASE/api/models/alice/big/tree/main" -H "Authorization: Bearer $ALICE"
check_eq "  the four files are on main" 4 "$(jbody '[.[] | select(.path | startswith("big-"))] | length')"
PEAK_KB="$(awk '/^VmHWM/ {print $2}' "/proc/$SERVER_PID/status")"
info "server peak RSS (VmHWM): $((PEAK_KB / 1024)) MiB"
# One commit at a time holds its 45 MiB file and little else; four at once would pass
# 200 MiB (before the fix: 796 MiB for four 61 MB bodies).
check_true "  peak RSS $((PEAK_KB / 1024)) MiB < 128 MiB" test "$PEAK_KB" -lt $((128 * 1024))

section "200,000 one-byte files in one commit: charged per line, memory bounded"
# Each file's line is charged besides its bytes; decoded files keep no room beyond their
# size (a file's buffer once reserved the rest of the body: 1 GB for this commit).
stop_server
start_server "$DATA" || die "hangar serve did not restart"
python3 - "$T/many.ndjson" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write('{"key":"header","value":{"summary":"many"}}\n')
    for i in range(200000):
        f.write('{"key":"file","value":{"path":"m/%06x","content":"YQ==","encoding":"base64"}}\n' % i)
PY
req POST "$BASE/api/models/alice/big/commit/main" -H "Authorization: Bearer $ALICE" \
  -H 'Content-Type: application/x-ndjson' --data-binary @"$T/many.ndjson" --max-time 120
check_status "a commit of 200,000 files ($(($(stat -c %s "$T/many.ndjson") >> 20)) MiB) → 200" 200
PEAK_KB="$(awk '/^VmHWM/ {print $2}' "/proc/$SERVER_PID/status")"
info "server peak RSS (VmHWM): $((PEAK_KB / 1024)) MiB"
check_true "  peak RSS $((PEAK_KB / 1024)) MiB < 300 MiB" test "$PEAK_KB" -lt $((300 * 1024))

section "a commit larger than the whole budget is 413, not a wait"
stop_server
HANGAR_LIMITS_HANDLER_MEMORY_BYTES=32MiB start_server "$DATA" || die "hangar serve did not restart"
req POST "$BASE/api/models/alice/big/commit/main" -H "Authorization: Bearer $ALICE" \
  -H 'Content-Type: application/x-ndjson' --data-binary @"$T/c1.ndjson" --max-time 60
check_hf_error "a 60 MiB commit with 32 MiB of handler memory → 413" 413 "?"
check_match "  naming the setting" 'handler_memory_bytes' "$(hdr X-Error-Message)"

finish
