#!/usr/bin/env bash
# Issue #3 point 6: `hangar upload` and `hangar download` against a real server.
# A directory with small files and a 300 MiB random file goes up in one commit and comes
# back byte for byte (through `hangar download` and through `git clone` + git-lfs);
# partial downloads; clear failures (wrong token, unknown repo, unknown path); and both
# resumes: a 1 GiB upload killed with SIGKILL sends only its missing parts when rerun (the
# server's access log counts the PUTs), and a killed download fetches only its missing
# parts (counted the same way).
# Usage: client_cli.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user cora
CORA="$(new_token cora --role write)"
new_user rex
REX="$(new_token rex --role read)"
start_server "$DATA" || die "hangar serve did not start"
export HANGAR_ENDPOINT="$BASE"
unset HANGAR_TOKEN HF_TOKEN
HC="$(cred_helper cora "$CORA")"

# hup ARGS...: hangar upload/download with cora's token, quiet; stdout to $T/out, stderr to $T/err.
hc() { "$HANGAR_BIN" "$@" >"$T/out" 2>"$T/err"; }

# log_lines: how many lines the server's access log has now.
log_lines() { wc -l <"$SERVER_ERR"; }
# log_since N ERE: access-log lines after line N matching ERE.
log_since() { tail -n +"$(($1 + 1))" "$SERVER_ERR" | grep -E "$2"; }

SRC="$T/src"
mkdir -p "$SRC/nested/deeper" "$SRC/.git/objects" "$SRC/weights"
printf 'hello\n' >"$SRC/a.txt"
printf '{"k": [1, 2, 3]}\n' >"$SRC/nested/b.json"
printf 'x\0y\0z' >"$SRC/nested/deeper/bin.dat"
printf '[core]\n' >"$SRC/.git/config"
head -c $((300 * 1024 * 1024)) /dev/urandom >"$SRC/weights/big.bin" || die "make big.bin"
pass "made a directory with 3 small files, a .git/ and a 300 MiB random file"

section "upload a directory"
START=$(date +%s%N)
hc upload cora/cc "$SRC" --token "$CORA" --workers 4 --part-size 16M
RC=$?
info "upload took $((($(date +%s%N) - START) / 1000000)) ms"
check_eq "hangar upload exits 0" 0 "$RC"
[[ $RC == 0 ]] || fail "  stderr" "$(head -c 600 "$T/err")"
check_match "  prints the commit URL" "^$BASE/cora/cc/commit/[0-9a-f]{40}$" "$(cat "$T/out")"
req GET "$BASE/api/models/cora/cc/tree/main?recursive=true" -H "Authorization: Bearer $CORA"
check_status "  the repo was created" 200
check_eq "  files in the commit (no .git/)" \
  ".gitattributes a.txt nested/b.json nested/deeper/bin.dat weights/big.bin" \
  "$(jbody '[.[] | select(.type == "file") | .path] | sort | join(" ")')"
check_json "  big.bin is LFS with its sha256" '.[] | select(.path == "weights/big.bin") | .lfs.oid' \
  "$(sha256_of "$SRC/weights/big.bin")"
check_json "  bin.dat (NUL bytes) is LFS" '.[] | select(.path == "nested/deeper/bin.dat") | has("lfs")' true
check_json "  a.txt is a regular file" '.[] | select(.path == "a.txt") | has("lfs")' false
req GET "$BASE/api/models/cora/cc/commits/main" -H "Authorization: Bearer $CORA"
check_json "  default commit message" '.[0].title' "Upload $SRC with hangar"

# same_tree A B: every file under A (without .git/) is in B with the same bytes.
same_tree() {
  local f rel
  while IFS= read -r -d '' f; do
    rel="${f#"$1"/}"
    cmp -s "$f" "$2/$rel" || { echo "differs: $rel" >&2; return 1; }
  done < <(find "$1" -path "$1/.git" -prune -o -type f -print0)
}

section "download it back"
DL="$T/dl"
START=$(date +%s%N)
hc download cora/cc --local-dir "$DL" --token "$CORA" --workers 4 --part-size 16M
RC=$?
info "download took $((($(date +%s%N) - START) / 1000000)) ms"
check_eq "hangar download exits 0" 0 "$RC"
[[ $RC == 0 ]] || fail "  stderr" "$(head -c 600 "$T/err")"
check_true "  every file byte for byte (cmp)" same_tree "$SRC" "$DL"
check_eq "  no .incomplete files left" "" "$(find "$DL" -name '*.incomplete*')"
check_eq "  .gitattributes came too" "true" "$([[ -f "$DL/.gitattributes" ]] && echo true)"
L0=$(log_lines)
hc download cora/cc --local-dir "$DL" --token "$CORA"
check_eq "rerun exits 0" 0 "$?"
check_match "  every file already present" "downloaded 0 file\(s\), 5 already present" "$(cat "$T/err")"
check_eq "  and nothing fetched" "" "$(log_since "$L0" 'GET /cora/cc/resolve/')"

section "git clone + git-lfs sees the same commit"
gitc "$HC" clone -q "$BASE/cora/cc" "$T/clone" 2>"$T/clone.err"
check_eq "git clone exits 0" 0 "$?"
# bin.dat went as LFS (preupload: NUL bytes) but no .gitattributes pattern covers it, so
# git checks out its pointer (as with the HF hub); git-lfs smudges it to the same bytes.
mv "$SRC/nested/deeper/bin.dat" "$T/bin.dat"
check_true "  every file byte for byte (but bin.dat)" same_tree "$SRC" "$T/clone"
mv "$T/bin.dat" "$SRC/nested/deeper/bin.dat"
check_match "  bin.dat is an LFS pointer" "oid sha256:$(sha256_of "$SRC/nested/deeper/bin.dat")" \
  "$(cat "$T/clone/nested/deeper/bin.dat")"
gitc "$HC" -C "$T/clone" lfs smudge <"$T/clone/nested/deeper/bin.dat" >"$T/smudged" 2>"$T/smudge.err"
check_true "  which git lfs smudge turns into the bytes" cmp -s "$SRC/nested/deeper/bin.dat" "$T/smudged"

section "partial download"
hc download cora/cc nested a.txt --local-dir "$T/part" --token "$CORA"
check_eq "download nested a.txt exits 0" 0 "$?"
check_eq "  exactly those files" "a.txt nested/b.json nested/deeper/bin.dat" \
  "$(cd "$T/part" && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ' | sed 's/ $//')"
check_true "  with the right bytes" cmp -s "$SRC/nested/deeper/bin.dat" "$T/part/nested/deeper/bin.dat"
HANGAR_TOKEN="$CORA" hc download cora/cc a.txt --local-dir "$T/envtok"
check_eq "token from HANGAR_TOKEN" 0 "$?"
HF_TOKEN="$CORA" hc download cora/cc weights/big.bin --local-dir "$T/one" --part-size 64M --workers 2
check_eq "token from HF_TOKEN; one LFS file in 64 MiB parts" 0 "$?"
check_true "  same bytes" cmp -s "$SRC/weights/big.bin" "$T/one/weights/big.bin"

section "one file, under a path, to a new branch"
hc upload cora/cc "$SRC/a.txt" docs/copy.txt --revision dev --commit-message "to dev" --token "$CORA"
check_eq "upload FILE PATH_IN_REPO --revision dev exits 0" 0 "$?"
check_match "  prints the commit URL" "^$BASE/cora/cc/commit/[0-9a-f]{40}$" "$(cat "$T/out")"
req GET "$BASE/api/models/cora/cc/commits/dev" -H "Authorization: Bearer $CORA"
check_json "  branch dev was made, with the message" '.[0].title' "to dev"
hc download cora/cc docs/copy.txt --revision dev --local-dir "$T/dev" --token "$CORA"
check_true "  download --revision dev gets it" cmp -s "$SRC/a.txt" "$T/dev/docs/copy.txt"
hc download cora/cc docs/copy.txt --local-dir "$T/dev2" --token "$CORA"
check_ne "  main does not have it" 0 "$?"

section "failures: non-zero exit and one clear message"
hc upload cora/cc "$SRC/a.txt" --token hf_wrongwrongwrong
RC=$?
check_ne "upload with a wrong token fails" 0 "$RC"
check_match "  saying HTTP 401 and why" "^hangar: .*HTTP 401.*: .+" "$(head -n 1 "$T/err")"
check_eq "  in one line" 1 "$(wc -l <"$T/err")"
hc upload cora/cc "$SRC/a.txt" --token "$REX"
check_ne "upload with a read token fails" 0 "$?"
check_match "  saying HTTP 403" "^hangar: .*HTTP 403" "$(cat "$T/err")"
hc download cora/nope --token "$CORA" --local-dir "$T/nope"
check_ne "download of an unknown repo fails" 0 "$?"
check_match "  saying RepoNotFound" "^hangar: .*HTTP 404 RepoNotFound: .+" "$(cat "$T/err")"
check_eq "  and creates nothing" "" "$(ls "$T/nope" 2>/dev/null)"
hc download cora/cc no/such/file --token "$CORA" --local-dir "$T/nope"
check_ne "download of an unknown path fails" 0 "$?"
check_match "  naming it" "'no/such/file' not found" "$(cat "$T/err")"
hc download cora/cc --revision v9 --token "$CORA" --local-dir "$T/nope"
check_ne "download of an unknown revision fails" 0 "$?"
check_match "  saying RevisionNotFound" "HTTP 404 RevisionNotFound" "$(cat "$T/err")"
hc upload cora/cc "$T/missing" --token "$CORA"
check_ne "upload of a missing path fails" 0 "$?"
check_match "  naming it" "no such file or directory: $T/missing" "$(cat "$T/err")"
hc upload cora/cc "$SRC/a.txt" --token "$CORA" --part-size 12Q
check_ne "a bad --part-size fails" 0 "$?"
HANGAR_ENDPOINT="http://127.0.0.1:1" hc download cora/cc --local-dir "$T/nope"
check_ne "an unreachable endpoint fails" 0 "$?"
check_match "  saying so" "Couldn't connect|Could not connect|Failed to connect" "$(cat "$T/err")"

section "upload resume: kill -9 a 1 GiB upload, rerun, only the missing parts are sent"
GIG="$T/gig"
mkdir -p "$GIG"
head -c $((1024 * 1024 * 1024)) /dev/urandom >"$GIG/model.bin" || die "make model.bin"
GSHA="$(sha256_of "$GIG/model.bin")"
GSIZE=$((1024 * 1024 * 1024))
must_create "$CORA" resume cora model false
# The upload document, as the client's own create (same user, repo and object) answers it.
probe() {
  req POST "$BASE/api/models/cora/resume/uploads" -H "Authorization: Bearer $CORA" \
    -H 'Content-Type: application/json' --data-binary "{\"sha256\":\"$GSHA\",\"size\":$GSIZE,\"partSize\":16777216}"
}
stored() { probe; [[ "$ST" == 20? ]] && jbody '.parts | length'; }
"$HANGAR_BIN" upload cora/resume "$GIG" --token "$CORA" --workers 4 --part-size 16M -q \
  >"$T/bg.out" 2>"$T/bg.err" &
UP_PID=$!
EXTRA_PIDS+=("$UP_PID")
some_parts() { local n; n="$(stored)"; [[ -n "$n" && "$n" -ge 8 ]]; }
wait_until 60 some_parts || fail "no parts stored within 60 s" "$(cat "$T/bg.err")"
kill -9 "$UP_PID" 2>/dev/null
wait "$UP_PID" 2>/dev/null
UPLOAD_ID="$(jbody .id)"
PART_COUNT="$(jbody .partCount)"
# Parts whose bytes were all in when the client died may still be landing: wait until the
# stored set stops changing.
S1="$(stored)"; S2=""
for _ in $(seq 1 50); do sleep 0.2; S2="$(stored)"; [[ "$S1" == "$S2" ]] && break; S1="$S2"; done
STORED="$S2"
STORED_LIST="$(jbody '[.parts[].partNumber] | sort | join(" ")')"
info "killed the client with $STORED of $PART_COUNT parts stored (upload $UPLOAD_ID)"
check_match "  partially stored" '^[0-9]+$' "$STORED"
((STORED > 0 && STORED < PART_COUNT)) && pass "  0 < stored < partCount" ||
  fail "  0 < stored < partCount" "stored $STORED of $PART_COUNT"
L1=$(log_lines)
hc upload cora/resume "$GIG" --token "$CORA" --workers 4 --part-size 16M
check_eq "the rerun exits 0" 0 "$?"
[[ -s "$T/err" ]] && info "$(tail -n 1 "$T/err")"
SENT_LIST="$(log_since "$L1" "PUT /api/uploads/$UPLOAD_ID/parts/[0-9]+ 200" |
  sed -E 's|.*/parts/([0-9]+) .*|\1|' | sort -n | tr '\n' ' ' | sed 's/ $//')"
SENT="$(wc -w <<<"$SENT_LIST")"
check_eq "  PUTs in the rerun = parts missing ($PART_COUNT - $STORED)" "$((PART_COUNT - STORED))" "$SENT"
OVERLAP="$(comm -12 <(tr ' ' '\n' <<<"$STORED_LIST" | sort) <(tr ' ' '\n' <<<"$SENT_LIST" | sort) | tr '\n' ' ')"
check_eq "  no stored part sent again" "" "$OVERLAP"
check_match "  the client says so" "$((PART_COUNT - STORED)) part\(s\) sent, $STORED already there" "$(cat "$T/err")"
req HEAD "$BASE/cora/resume/resolve/main/model.bin" -H "Authorization: Bearer $CORA"
check_eq "  the committed object resolves" 200 "$ST"

section "download resume: kill -9 mid-download, rerun, only the missing parts are fetched"
RD="$T/rd"
"$HANGAR_BIN" download cora/resume --local-dir "$RD" --token "$CORA" --workers 2 --part-size 16M -q \
  >"$T/dbg.out" 2>"$T/dbg.err" &
DL_PID=$!
EXTRA_PIDS+=("$DL_PID")
SIDE="$RD/model.bin.incomplete.parts"
some_fetched() { [[ -f "$SIDE" ]] && (($(wc -l <"$SIDE") >= 9)); }
wait_until 60 some_fetched || fail "no parts fetched within 60 s" "$(cat "$T/dbg.err")"
kill -9 "$DL_PID" 2>/dev/null
wait "$DL_PID" 2>/dev/null
DONE_PARTS=$(($(wc -l <"$SIDE") - 1))
info "killed the download with $DONE_PARTS of 64 parts recorded"
check_true "  model.bin.incomplete left behind" test -f "$RD/model.bin.incomplete"
check_false "  model.bin not there yet" test -e "$RD/model.bin"
L2=$(log_lines)
hc download cora/resume --local-dir "$RD" --token "$CORA" --workers 2 --part-size 16M
check_eq "the rerun exits 0" 0 "$?"
GETS="$(log_since "$L2" 'GET /cora/resume/resolve/[0-9a-f]{40}/model.bin 20[06]' | wc -l)"
check_eq "  GETs in the rerun = parts missing (64 - $DONE_PARTS)" "$((64 - DONE_PARTS))" "$GETS"
check_true "  model.bin byte for byte" cmp -s "$GIG/model.bin" "$RD/model.bin"
check_eq "  no .incomplete files left" "" "$(find "$RD" -name '*.incomplete*')"

section "a corrupted partial download is caught by the digest check"
printf 'garbage' | dd of="$RD/model.bin" bs=1 seek=1000 conv=notrunc status=none
hc download cora/resume --local-dir "$RD" --token "$CORA" --workers 2
check_eq "a damaged file is fetched again (exit 0)" 0 "$?"
check_true "  and is right afterwards" cmp -s "$GIG/model.bin" "$RD/model.bin"
rm -rf "$GIG" "$RD" "$T/one" "$DL" "$T/clone"

section "shutdown"
stop_server
check_eq "SIGTERM: server exits 0" 0 "$SERVER_RC"

finish
