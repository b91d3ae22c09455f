#!/usr/bin/env bash
# Issue #3 point 8: garbage collection (docs/gc.md). Two repos get an LFS object each via
# git-lfs; one repo is deleted through the API. `hangar admin gc --dry-run --grace 0`
# lists its blob and removes nothing; `hangar admin gc --grace 0` removes it, beside the
# running server; the other repo's blob stays and still downloads.
# Usage: gc.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup: two repos, an LFS object pushed to each"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice
ALICE="$(new_token alice --role write)"
# No background collection while the test looks.
start_server "$DATA" --set gc.interval_s=0 || die "hangar serve did not start"
HA="$(cred_helper alice "$ALICE")"
AUTH=(-H "Authorization: Bearer $ALICE")
JSON=(-H 'Content-Type: application/json')

blob_path() { printf '%s/blobs/sha256/%s/%s/%s' "$DATA" "${1:0:2}" "${1:2:2}" "$1"; }

# push_lfs NAME: creates alice/NAME and pushes weights.bin (LFS, distinct bytes per repo);
# sets SHA to the object's sha256.
push_lfs() {
  must_create "$ALICE" "$1" alice model false
  local w="$T/work-$1"
  gitc "" clone -q "$BASE/alice/$1" "$w" 2>"$T/clone-$1.err" ||
    die "git clone alice/$1" "$(brief "$T/clone-$1.err" 600)"
  (
    set -e
    cd "$w"
    git lfs track "*.bin" >/dev/null
    for i in $(seq 1 4000); do printf '%s weights line %06d\n' "$1" "$i"; done >weights.bin
    git add .gitattributes weights.bin
    git commit -q -m "add weights"
  ) || die "commit in $w"
  SHA="$(sha256_of "$w/weights.bin")"
  if gitc "$HA" -C "$w" push -q origin main >"$T/push-$1.out" 2>&1; then
    pass "git push (git-lfs) to alice/$1"
  else
    die "git push to alice/$1" "$(brief "$T/push-$1.out" 800)"
  fi
}

push_lfs gone
GONE="$SHA"
push_lfs kept
KEPT="$SHA"
check_true "both objects are in the blob store" test -f "$(blob_path "$GONE")" -a -f "$(blob_path "$KEPT")"

section "a dry run changes nothing"
admin gc --dry-run --grace 0 >"$T/dry.out" 2>"$T/dry.err"
check_eq "admin gc --dry-run --grace 0 exits 0" 0 "$?"
check_false "  does not list the referenced blobs yet" grep -q "blob " "$T/dry.out"

req DELETE "$BASE/api/repos/delete" "${AUTH[@]}" "${JSON[@]}" \
  --data-binary '{"name": "gone", "organization": "alice", "type": "model"}'
check_status "delete alice/gone through the API → 200" 200

admin gc --dry-run --grace 0 >"$T/dry.out" 2>"$T/dry.err"
check_eq "admin gc --dry-run --grace 0 exits 0" 0 "$?"
check_true "  lists the deleted repo's blob" grep -qF "blob $GONE (" "$T/dry.out"
check_false "  not the kept repo's blob" grep -qF "$KEPT" "$T/dry.out"
check_match "  summary says what would go" 'would remove 1 unreferenced blobs' "$(cat "$T/dry.out")"
check_true "  the blob is still there" test -f "$(blob_path "$GONE")"

admin gc --dry-run --grace 0 --json >"$T/dry.json" 2>"$T/dry.err"
check_eq "  --json: blobs.count" 1 "$(jq -r .blobs.count "$T/dry.json" 2>&1)"
check_eq "  --json: the item" "blob $GONE" "$(jq -r '.items[0]' "$T/dry.json" 2>&1 | cut -d' ' -f1-2)"
check_eq "  --json: one referenced blob kept" 1 "$(jq -r .blobs_referenced "$T/dry.json" 2>&1)"

admin gc --dry-run >"$T/dry.out" 2>"$T/dry.err"
check_match "the default grace (a day) keeps the fresh blobs" 'would remove 0 unreferenced blobs.*kept 0 referenced and 2 recent blobs' \
  "$(cat "$T/dry.out")"

section "the real run removes only the unreferenced blob"
admin gc --grace 0 >"$T/gc.out" 2>"$T/gc.err"
check_eq "admin gc --grace 0 exits 0 (server running)" 0 "$?"
check_match "  reports it" 'removed 1 unreferenced blobs' "$(cat "$T/gc.out")"
check_false "  the deleted repo's blob is gone" test -e "$(blob_path "$GONE")"
check_true "  the kept repo's blob is there" test -f "$(blob_path "$KEPT")"

req GET "$BASE/alice/kept/resolve/main/weights.bin"
check_status "the kept repo's file still downloads" 200
check_eq "  with its bytes" "$KEPT" "$(sha256_of "$BODY")"
C="$T/clone-kept"
if gitc "" clone -q "$BASE/alice/kept" "$C" >"$T/c.out" 2>&1; then
  check_eq "  and git lfs smudges it on clone" "$KEPT" "$(sha256_of "$C/weights.bin")"
else
  fail "clone alice/kept after gc" "$(brief "$T/c.out" 600)"
fi

admin gc --grace 0 >"$T/gc2.out" 2>"$T/gc2.err"
check_match "a second run finds nothing" 'removed 0 unreferenced blobs' "$(cat "$T/gc2.out")"

check_true "the server stops cleanly afterwards (SIGTERM, exit 0)" stop_server

finish
