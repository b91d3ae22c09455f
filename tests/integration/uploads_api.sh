#!/usr/bin/env bash
# Issue #3 point 5: the native upload API (docs/uploads.md) over raw HTTP. Parts sent out
# of order, resume, per-part and whole-object digests, the commit that uses the object,
# bad input (each a clear 4xx that stores nothing), expiry, and a server killed with
# SIGKILL in the middle of a part: nothing half-written, the upload resumable.
# Usage: uploads_api.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user una
UNA="$(new_token una --role write)"
new_user ivo
IVO="$(new_token ivo --role write)"
READER="$(new_token ivo --role read)"
start_server "$DATA" || die "hangar serve did not start"
AUTH=(-H "Authorization: Bearer $UNA")
JSON=(-H 'Content-Type: application/json')
must_create "$UNA" up una model false
API="$BASE/api/models/una/up"
MIB=$((1 << 20))

# A 12 MiB + 1 byte file: three parts of 5 MiB, 5 MiB and 2 MiB + 1.
head -c $((12 * MIB + 1)) /dev/urandom >"$T/obj.bin"
OBJ_SHA="$(sha256_of "$T/obj.bin")"
OBJ_SIZE=$((12 * MIB + 1))
split -b $((5 * MIB)) -d -a 1 "$T/obj.bin" "$T/part."   # part.0 part.1 part.2
create() { # create SHA SIZE [PART_SIZE] [TOKEN]
  local body="{\"sha256\":\"$1\",\"size\":$2${3:+,\"partSize\":$3}}"
  req POST "$BASE/api/models/una/up/uploads" -H "Authorization: Bearer ${4:-$UNA}" "${JSON[@]}" --data-binary "$body"
}
put_part() { # put_part URL FILE [extra curl args...]; as PART_TOKEN (default: una's)
  local url="$1" file="$2"; shift 2
  req PUT "$url" -H "Authorization: Bearer ${PART_TOKEN:-$UNA}" --data-binary "@$file" "$@"
}
blob_files() { find "$DATA/blobs" -type f -size +0 | wc -l; }  # the empty blob aside
staging_dirs() { find "$DATA/tmp/uploads" -mindepth 1 -maxdepth 1 | wc -l; }

section "create"
create "$OBJ_SHA" "$OBJ_SIZE" $((5 * MIB))
check_status "new upload → 201" 201
UP="$(jbody .id)"
check_match "  id is 32 hex" '^[0-9a-f]{32}$' "$UP"
check_json "  state open" .state open
check_json "  partSize as asked" .partSize $((5 * MIB))
check_json "  partCount 3" .partCount 3
check_json "  no parts yet" '.parts | length' 0
check_json "  one URL per part" '.partUrls | length' 3
check_json "  URLs are ours" '.partUrls[2]' "$BASE/api/uploads/$UP/parts/3"
check_json_true "  expiresAt is an ISO time" '.expiresAt | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$")'
create "$(sha256_of /dev/null)" 0
check_status "empty object → 200" 200
check_json "  nothing to send" .state present
create "$OBJ_SHA" $((64 * MIB)) 1
check_status "a tiny partSize hint is raised to 5 MiB" 201
check_json "  partSize 5 MiB" .partSize $((5 * MIB))
req DELETE "$BASE/api/uploads/$(jbody .id)" "${AUTH[@]}"
check_status "abort → 204" 204

section "parts, out of order"
put_part "$BASE/api/uploads/$UP/parts/3" "$T/part.2"
check_status "part 3 first → 200" 200
check_json "  partNumber" .partNumber 3
check_json "  size" .size $((2 * MIB + 1))
check_json "  etag is the part's sha256" .etag "$(sha256_of "$T/part.2")"
check_hdr "  ETag header" ETag "\"$(sha256_of "$T/part.2")\""
put_part "$BASE/api/uploads/$UP/parts/1" "$T/part.0" -H "X-Part-Sha256: $(sha256_of "$T/part.1")"
check_hf_error "part 1 with another part's X-Part-Sha256 → 400" 400 DigestInvalid
check_match "  message names the digest" 'sha256' "$(hdr X-Error-Message)"
req GET "$BASE/api/uploads/$UP" "${AUTH[@]}"
check_json "  the refused part is not listed" '[.parts[].partNumber] | join(",")' 3
put_part "$BASE/api/uploads/$UP/parts/1" "$T/part.0" -H "X-Part-Sha256: $(sha256_of "$T/part.0")"
check_status "part 1 with its X-Part-Sha256 → 200" 200

section "resume"
create "$OBJ_SHA" "$OBJ_SIZE"
check_status "creating the same object again → 200 (resume)" 200
check_json "  same upload" .id "$UP"
check_json "  stored parts listed" '[.parts[].partNumber] | join(",")' "1,3"
req POST "$BASE/api/uploads/$UP/complete" "${AUTH[@]}"
check_hf_error "complete with part 2 missing → 409" 409 Conflict
check_match "  message names part 2" '2' "$(hdr X-Error-Message)"
check_eq "  nothing in the blob store yet" "$(blob_files)" 0
put_part "$BASE/api/uploads/$UP/parts/2" "$T/part.1"
check_status "part 2 → 200" 200
req POST "$BASE/api/uploads/$UP/complete" "${AUTH[@]}"
check_status "complete → 200" 200
check_json "  state complete" .state complete
check_json "  sha256" .sha256 "$OBJ_SHA"
check_eq "  one blob in the store" "$(blob_files)" 1
check_eq "  staging area removed" "$(staging_dirs)" 0
req POST "$BASE/api/uploads/$UP/complete" "${AUTH[@]}"
check_status "complete again → 200" 200
put_part "$BASE/api/uploads/$UP/parts/2" "$T/part.1"
check_hf_error "a part after completion → 404" 404 '?'
create "$OBJ_SHA" "$OBJ_SIZE"
check_json "the repo has it now: create says present" .state present
create "$OBJ_SHA" 5
check_hf_error "same sha256, another size → 400" 400 '?'

section "commit with the uploaded object"
printf '%s\n' '{"key":"header","value":{"summary":"weights via upload API"}}' \
  "{\"key\":\"lfsFile\",\"value\":{\"path\":\"weights.bin\",\"algo\":\"sha256\",\"oid\":\"$OBJ_SHA\",\"size\":$OBJ_SIZE}}" >"$T/c.ndjson"
req POST "$API/commit/main" "${AUTH[@]}" -H 'Content-Type: application/x-ndjson' --data-binary "@$T/c.ndjson"
check_status "commit lfsFile → 200" 200
curl -sS -o "$T/back.bin" "$BASE/una/up/resolve/main/weights.bin"
check_true "  resolve gives the bytes back" cmp -s "$T/obj.bin" "$T/back.bin"
HC="$(cred_helper una "$UNA")"
gitc "$HC" clone -q "$BASE/una/up" "$T/clone" 2>"$T/clone.err" || fail "clone" "$(brief "$T/clone.err")"
check_true "  git clone (git-lfs) gives the bytes back" cmp -s "$T/obj.bin" "$T/clone/weights.bin"

section "wrong whole digest"
head -c $((6 * MIB)) /dev/urandom >"$T/liar.bin"
FAKE_SHA="$(printf 'not the content' | sha256sum | cut -d' ' -f1)"
create "$FAKE_SHA" $((6 * MIB)) $((5 * MIB))
check_status "upload announcing another digest → 201" 201
LIAR="$(jbody .id)"
split -b $((5 * MIB)) -d -a 1 "$T/liar.bin" "$T/liar."
put_part "$BASE/api/uploads/$LIAR/parts/1" "$T/liar.0"
put_part "$BASE/api/uploads/$LIAR/parts/2" "$T/liar.1"
check_status "  parts accepted" 200
req POST "$BASE/api/uploads/$LIAR/complete" "${AUTH[@]}"
check_hf_error "complete → 400 (digest)" 400 DigestInvalid
check_match "  message gives both digests" "$FAKE_SHA" "$(hdr X-Error-Message)"
check_eq "  still only the first blob" "$(blob_files)" 1
check_false "  nothing under the claimed digest" test -e "$DATA/blobs/sha256/${FAKE_SHA:0:2}/${FAKE_SHA:2:2}/$FAKE_SHA"
check_eq "  staging area removed" "$(staging_dirs)" 0
req GET "$BASE/api/uploads/$LIAR" "${AUTH[@]}"
check_hf_error "  the upload is gone → 404" 404 '?'

section "bad input"
create "XYZ" 10
check_hf_error "malformed sha256 → 400" 400 '?'
create "$OBJ_SHA" -1
check_hf_error "negative size → 400" 400 '?'
req POST "$API/uploads" "${AUTH[@]}" "${JSON[@]}" --data-binary "{\"sha256\":\"$FAKE_SHA\",\"size\":\"12\"}"
check_hf_error "size as a string → 400" 400 '?'
create "$FAKE_SHA" 10 0
check_hf_error "partSize 0 → 400" 400 '?'
req POST "$API/uploads" "${AUTH[@]}" "${JSON[@]}" --data-binary '{"sha256": '
check_hf_error "malformed JSON → 400" 400 '?'
req POST "$API/uploads" "${JSON[@]}" --data-binary "{\"sha256\":\"$FAKE_SHA\",\"size\":10}"
check_hf_error "anonymous → 401" 401 '?'
create "$FAKE_SHA" 10 "" "$READER"
check_hf_error "read token → 403" 403 Forbidden
create "$FAKE_SHA" 10 "" "$IVO"
check_hf_error "someone else's repo → 403" 403 Forbidden
req POST "$BASE/api/models/una/nope/uploads" "${AUTH[@]}" "${JSON[@]}" --data-binary "{\"sha256\":\"$FAKE_SHA\",\"size\":10}"
check_hf_error "unknown repo → 404" 404 RepoNotFound
OPEN_SHA="$(printf open | sha256sum | cut -d" " -f1)"
create "$OPEN_SHA" $((7 * MIB)) $((5 * MIB))
check_status "an upload to poke at → 201" 201
OPEN="$(jbody .id)"
req GET "$BASE/api/uploads/$OPEN" -H "Authorization: Bearer $IVO"
check_hf_error "another user's upload → 404" 404 '?'
PART_TOKEN="$IVO" put_part "$BASE/api/uploads/$OPEN/parts/1" "$T/part.0"
check_hf_error "  nor send parts to it" 404 '?'
put_part "$BASE/api/uploads/$OPEN/parts/0" "$T/part.0"
check_hf_error "part 0 → 404" 404 '?'
put_part "$BASE/api/uploads/$OPEN/parts/3" "$T/part.0"
check_hf_error "part past the end → 404" 404 '?'
put_part "$BASE/api/uploads/$OPEN/parts/2" "$T/part.0"
check_hf_error "part of the wrong length → 400" 400 SizeInvalid
check_match "  message says how long it must be" "$((2 * MIB))" "$(hdr X-Error-Message)"
req PUT "$BASE/api/uploads/$OPEN/parts/1" "${AUTH[@]}" -H "X-Part-Sha256: zz" --data-binary "@$T/part.0"
check_hf_error "malformed X-Part-Sha256 → 400" 400 '?'
req GET "$BASE/api/uploads/0123" "${AUTH[@]}"
check_hf_error "malformed id → 404" 404 '?'
req GET "$BASE/api/uploads/$OPEN" "${AUTH[@]}"
check_json "none of those stored a part" '.parts | length' 0
# A body cut short: Content-Length promises more than curl sends before giving up.
head -c $MIB /dev/urandom >"$T/short.bin"
curl -sS -o /dev/null --max-time 2 -X PUT "${AUTH[@]}" -H "Content-Length: $((5 * MIB))" \
  --data-binary "@$T/short.bin" "$BASE/api/uploads/$OPEN/parts/1" 2>/dev/null
sleep 0.3
req GET "$BASE/api/uploads/$OPEN" "${AUTH[@]}"
check_json "a part cut short is not listed" '.parts | length' 0
req DELETE "$BASE/api/uploads/$OPEN" "${AUTH[@]}"
check_status "abort → 204" 204
req GET "$BASE/api/uploads/$OPEN" "${AUTH[@]}"
check_hf_error "  then → 404" 404 '?'
check_eq "  its staging area is gone" "$(staging_dirs)" 0

section "kill -9 during a part"
head -c $((10 * MIB)) /dev/urandom >"$T/crash.bin"
CRASH_SHA="$(sha256_of "$T/crash.bin")"
create "$CRASH_SHA" $((10 * MIB)) $((5 * MIB))
CR="$(jbody .id)"
split -b $((5 * MIB)) -d -a 1 "$T/crash.bin" "$T/crash."
put_part "$BASE/api/uploads/$CR/parts/1" "$T/crash.0"
check_status "part 1 stored" 200
# Part 2 trickles in at 1 MiB/s; the server dies with SIGKILL halfway through it.
curl -sS -o /dev/null --limit-rate 1M -X PUT "${AUTH[@]}" --data-binary "@$T/crash.1" \
  "$BASE/api/uploads/$CR/parts/2" 2>/dev/null &
CURL_PID=$!
sleep 2
kill -KILL "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=""
wait "$CURL_PID" 2>/dev/null
check_eq "no blob for the object" "$(find "$DATA/blobs" -name "$CRASH_SHA" | wc -l)" 0
start_server "$DATA" || die "restart after SIGKILL"
req GET "$BASE/api/uploads/$CR" "${AUTH[@]}"
check_status "after restart the upload is there" 200
check_json "  with part 1 only (part 2 was cut off)" '[.parts[].partNumber] | join(",")' 1
put_part "$BASE/api/uploads/$CR/parts/2" "$T/crash.1"
req POST "$BASE/api/uploads/$CR/complete" "${AUTH[@]}"
check_status "  resumed and completed" 200
check_eq "  blob stored whole" "$(sha256_of "$(find "$DATA/blobs" -name "$CRASH_SHA")")" "$CRASH_SHA"

section "expiry"
stop_server || fail "stop" "rc=$SERVER_RC"
start_server "$DATA" --set limits.upload_expiry_s=1 || die "restart with a 1 s expiry"
create "$FAKE_SHA" $((6 * MIB))
check_status "an upload on a server with a 1 s expiry → 201" 201
EXP="$(jbody .id)"
sleep 2.2
req GET "$BASE/api/uploads/$EXP" "${AUTH[@]}"
check_hf_error "an expired upload → 404" 404 '?'
check_match "  message says expired" 'expired' "$(hdr X-Error-Message)"
create "$FAKE_SHA" $((6 * MIB))
check_status "creating it again starts a new upload → 201" 201
check_ne "  with a new id" "$(jbody .id)" "$EXP"
req DELETE "$BASE/api/uploads/$(jbody .id)" "${AUTH[@]}"  # una has no open upload left
check_status "  abort it → 204" 204

section "open uploads per user are limited"
stop_server || fail "stop" "rc=$SERVER_RC"
start_server "$DATA" --set limits.max_open_uploads=2 || die "restart with max_open_uploads=2"
ids=()
for i in 1 2 3; do
  create "$(printf 'open %s' "$i" | sha256sum | cut -d' ' -f1)" $((6 * MIB))
  ids+=("$(jbody .id)")
done
check_hf_error "a third open upload → 429" 429 '?'
check_match "  the message says what to do" 'abort' "$(hdr X-Error-Message)"
req DELETE "$BASE/api/uploads/${ids[0]}" "${AUTH[@]}"
create "$(printf 'open 3' | sha256sum | cut -d' ' -f1)" $((6 * MIB))
check_status "  after aborting one, it is accepted → 201" 201
must_create "$IVO" iv ivo model false
req POST "$BASE/api/models/ivo/iv/uploads" -H "Authorization: Bearer $IVO" "${JSON[@]}" \
  --data-binary "{\"sha256\":\"$(printf 'open 4' | sha256sum | cut -d' ' -f1)\",\"size\":$((6 * MIB))}"
check_status "  the limit is per user: ivo may still start one → 201" 201

finish
