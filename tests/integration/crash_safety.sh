#!/usr/bin/env bash
# Issue #3, crash safety: `kill -9` of the server during a burst of HTTP commits, during an
# LFS upload and during an HF multipart LFS upload (issue #14), then a restart. Afterwards:
# `git fsck` is clean, every ref points at a commit that exists, no commit that was
# acknowledged is lost, nothing partial sits under blobs/, the multipart upload resumes
# with the parts it had, and the same writes succeed again. (A SIGKILL in the middle of a
# part of the native upload API is in uploads_api.sh.)
# Usage: crash_safety.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user kit
KIT="$(new_token kit --role write)"
# Objects of 8 MiB and more go in 8 MiB parts when the client offers multipart.
SETS=(--set limits.multipart_threshold_bytes=$((8 << 20)) --set limits.multipart_chunk_bytes=$((8 << 20)))
start_server "$DATA" "${SETS[@]}" || die "hangar serve did not start"
AUTH=(-H "Authorization: Bearer $KIT")
ND=(-H 'Content-Type: application/x-ndjson')
must_create "$KIT" crash kit model false
GD="$DATA/repos/models/kit/crash.git"
restart() {
  kill -KILL "$SERVER_PID" 2>/dev/null
  wait "$SERVER_PID" 2>/dev/null
  SERVER_PID=""
  start_server "$DATA" "${SETS[@]}" || die "restart after SIGKILL"
}
# commit_file FILE PATH SIZE_BYTES: an NDJSON commit adding PATH with SIZE random bytes.
commit_file() {
  { printf '{"key":"header","value":{"summary":"add %s"}}\n' "$2"
    printf '{"key":"file","value":{"path":"%s","encoding":"base64","content":"' "$2"
    head -c "$3" /dev/urandom | base64 -w0
    printf '"}}\n'; } >"$1"
}

section "SIGKILL during a burst of commits"
N=24
for i in $(seq 1 $N); do commit_file "$T/c$i.ndjson" "burst/f$i.bin" $((300 * 1024 + i)); done
BASE_HEAD="$(git --git-dir="$GD" rev-parse main)"
pids=()
for i in $(seq 1 $N); do
  curl -sS -o /dev/null -w '%{http_code}' --max-time 30 -X POST "${AUTH[@]}" "${ND[@]}" \
    --data-binary @"$T/c$i.ndjson" "$BASE/api/models/kit/crash/commit/main" >"$T/c$i.st" 2>/dev/null &
  pids+=($!)
  ((i == N / 3)) && sleep 0.2
done
sleep 0.4
restart
for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
ACKED=0
for i in $(seq 1 $N); do [[ "$(cat "$T/c$i.st" 2>/dev/null)" == 200 ]] && ACKED=$((ACKED + 1)); done
info "$ACKED of $N commits were acknowledged before the kill"
git --git-dir="$GD" fsck --full --strict --no-dangling >"$T/fsck.out" 2>&1
check_true "git fsck --full --strict is clean" test $? -eq 0
bad_refs=0
while read -r ref; do
  git --git-dir="$GD" rev-parse -q --verify "$ref^{commit}" >/dev/null || bad_refs=$((bad_refs + 1))
done < <(git --git-dir="$GD" for-each-ref --format='%(refname)')
check_eq "every ref points at an existing commit" 0 "$bad_refs"
LANDED="$(git --git-dir="$GD" rev-list --count "$BASE_HEAD..main")"
info "$LANDED commits are on main after the restart"
check_true "no acknowledged commit is lost ($ACKED acked ≤ $LANDED landed)" test "$LANDED" -ge "$ACKED"
lost=0
for i in $(seq 1 $N); do
  if [[ "$(cat "$T/c$i.st")" == 200 ]]; then
    git --git-dir="$GD" cat-file -e "main:burst/f$i.bin" 2>/dev/null || lost=$((lost + 1))
  fi
done
check_eq "  each acknowledged file is in main's tree" 0 "$lost"
req GET "$BASE/api/models/kit/crash/revision/main" "${AUTH[@]}"
check_status "the repo serves after the restart" 200
check_json "  its sha is main's head" .sha "$(git --git-dir="$GD" rev-parse main)"
commit_file "$T/after.ndjson" after.bin 1000
req POST "$BASE/api/models/kit/crash/commit/main" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/after.ndjson"
check_status "a new commit lands (a ref lock the killed server left is removed once stale)" 200
# A kill -9 in the middle of a ref update leaves refs/heads/main.lock behind: make one.
touch -d '1 minute ago' "$GD/refs/heads/main.lock"
commit_file "$T/after2.ndjson" after2.bin 1000
req POST "$BASE/api/models/kit/crash/commit/main" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/after2.ndjson"
check_status "a commit despite a stale main.lock → 200" 200
check_false "  the stale lock is gone" test -e "$GD/refs/heads/main.lock"

section "SIGKILL during an LFS upload"
head -c $((48 << 20)) /dev/urandom >"$T/big.bin"
OID="$(sha256_of "$T/big.bin")"
SIZE=$((48 << 20))
batch() {
  req POST "$BASE/kit/crash.git/info/lfs/objects/batch" "${AUTH[@]}" \
    -H 'Content-Type: application/vnd.git-lfs+json' \
    --data-binary "{\"operation\":\"upload\",\"transfers\":[\"basic\"],\"objects\":[{\"oid\":\"$OID\",\"size\":$SIZE}]}"
  HREF="$(jbody '.objects[0].actions.upload.href')"
}
batch
check_match "upload batch gives an href" '^http' "$HREF"
curl -sS -o /dev/null --limit-rate 8M -X PUT --data-binary @"$T/big.bin" "$HREF" 2>/dev/null &
CURL_PID=$!
sleep 2
check_true "  the object is still on its way (tmp/ holds it)" test -n "$(find "$DATA/tmp" -maxdepth 1 -type f -name "$OID.*")"
restart
wait "$CURL_PID" 2>/dev/null
check_eq "no blob under blobs/ for the half-sent object" 0 "$(find "$DATA/blobs" -name "$OID" | wc -l)"
req GET "$BASE/kit/crash/resolve/main/big.bin"
check_status "  nothing of it is served" 404
batch
check_json "after the restart the batch still asks for it" '.objects[0].actions.upload.href | startswith("http")' true
req PUT "$HREF" --data-binary @"$T/big.bin"
check_status "  and a fresh upload succeeds" 200
check_eq "  the stored blob hashes to its oid" "$OID" "$(sha256_of "$(find "$DATA/blobs" -name "$OID")")"
printf '%s\n' '{"key":"header","value":{"summary":"big"}}' \
  "{\"key\":\"lfsFile\",\"value\":{\"path\":\"big.bin\",\"algo\":\"sha256\",\"oid\":\"$OID\",\"size\":$SIZE}}" >"$T/big.ndjson"
req POST "$BASE/api/models/kit/crash/commit/main" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/big.ndjson"
check_status "  and commits" 200
curl -sS -o "$T/back.bin" "$BASE/kit/crash/resolve/main/big.bin"
check_true "  and reads back byte for byte" cmp -s "$T/big.bin" "$T/back.bin"
section "SIGKILL during an HF multipart LFS upload"
MB=$((8 << 20))
head -c $((4 * MB)) /dev/urandom >"$T/mp.bin"
MP_OID="$(sha256_of "$T/mp.bin")"
for n in 1 2 3 4; do tail -c +$(((n - 1) * MB + 1)) "$T/mp.bin" | head -c $MB >"$T/mp$n"; done
# mp_batch: an upload batch offering multipart; sets MP_COMPLETE, MP_UPLOAD and MP_URL[n].
declare -A MP_URL=()
mp_batch() {
  req POST "$BASE/kit/crash.git/info/lfs/objects/batch" "${AUTH[@]}" \
    -H 'Content-Type: application/vnd.git-lfs+json' \
    --data-binary "{\"operation\":\"upload\",\"transfers\":[\"basic\",\"multipart\"],\"objects\":[{\"oid\":\"$MP_OID\",\"size\":$((4 * MB))}]}"
  MP_COMPLETE="$(jbody '.objects[0].actions.upload.href')"
  for n in 1 2 3 4; do MP_URL[$n]="$(jbody ".objects[0].actions.upload.header[\"$n\"]")"; done
  MP_UPLOAD="$(sed -E 's#.*/([0-9a-f]{32})/complete$#\1#' <<<"$MP_COMPLETE")"
}
# put_part N: PUTs part N to its URL; prints its ETag.
put_part() {
  curl -sS -X PUT --data-binary @"$T/mp$1" -D "$T/mp$1.hdrs" -o /dev/null "${MP_URL[$1]}"
  awk 'tolower($1) == "etag:" { sub(/\r$/, ""); print $2 }' "$T/mp$1.hdrs"
}
mp_batch
check_json "the batch answers multipart" .transfer multipart
check_match "  its upload id is in the part URLs" '^[0-9a-f]{32}$' "$MP_UPLOAD"
STAGING="$DATA/tmp/uploads/$MP_UPLOAD"
ETAG1="$(put_part 1)"
check_match "part 1 is stored" '^".+"$' "$ETAG1"
check_true "  in the blob store's staging area (not a multipart dir of its own)" test -e "$STAGING/1.part"
check_false "  there is no tmp/multipart" test -e "$DATA/tmp/multipart"
curl -sS -o /dev/null --limit-rate 2M -X PUT --data-binary @"$T/mp2" "${MP_URL[2]}" 2>/dev/null &
CURL_PID=$!
sleep 1.5
restart
wait "$CURL_PID" 2>/dev/null
check_eq "no blob under blobs/ for the half-sent object" 0 "$(find "$DATA/blobs" -name "$MP_OID" | wc -l)"
check_false "  part 2, cut by the kill, is not recorded" test -e "$STAGING/2.part"
check_true "  part 1 still is" test -e "$STAGING/1.part"
req POST "$BASE/kit/crash.git/info/lfs/objects/batch" "${AUTH[@]}" \
  -H 'Content-Type: application/vnd.git-lfs+json' \
  --data-binary "{\"operation\":\"download\",\"objects\":[{\"oid\":\"$MP_OID\",\"size\":$((4 * MB))}]}"
check_json "  a download batch does not offer it" '.objects[0].error.code' 404
mp_batch
check_eq "after the restart a new batch resumes the same upload" "$MP_UPLOAD" \
  "$(sed -E 's#.*/([0-9a-f]{32})/complete$#\1#' <<<"$MP_COMPLETE")"
parts="[{\"partNumber\":1,\"etag\":$(jq -Rn --arg e "$ETAG1" '$e')}]"
for n in 2 3 4; do
  e="$(put_part $n)"
  parts="$(jq -c --argjson n $n --arg e "$e" '. + [{partNumber: $n, etag: $e}]' <<<"$parts")"
done
req POST "$MP_COMPLETE" -H 'Content-Type: application/vnd.git-lfs+json' \
  --data-binary "$(jq -cn --arg oid "$MP_OID" --argjson p "$parts" '{oid: $oid, parts: $p}')"
check_status "  the remaining parts and the completion (with part 1 from before the kill) → 200" 200
check_eq "  the stored blob hashes to its oid" "$MP_OID" "$(sha256_of "$(find "$DATA/blobs" -name "$MP_OID")")"
check_false "  the staging area is gone" test -e "$STAGING"
printf '%s\n' '{"key":"header","value":{"summary":"multipart"}}' \
  "{\"key\":\"lfsFile\",\"value\":{\"path\":\"mp.bin\",\"algo\":\"sha256\",\"oid\":\"$MP_OID\",\"size\":$((4 * MB))}}" >"$T/mp.ndjson"
req POST "$BASE/api/models/kit/crash/commit/main" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/mp.ndjson"
check_status "  and commits" 200
curl -sS -o "$T/mp.back" "$BASE/kit/crash/resolve/main/mp.bin"
check_true "  and reads back byte for byte" cmp -s "$T/mp.bin" "$T/mp.back"

git --git-dir="$GD" fsck --full --strict --no-dangling >"$T/fsck2.out" 2>&1
check_true "git fsck still clean at the end" test $? -eq 0

finish
