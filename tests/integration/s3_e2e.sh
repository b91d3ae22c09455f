#!/usr/bin/env bash
# The S3 blob store end to end (issue #3 point 7) on a real S3: Ceph's RADOS gateway
# (scripts/s3-server.sh; the CTest fixture's, or one this script starts), then
# `hangar serve --set storage.blobs=s3 ...` on a fresh bucket. git + git-lfs push two LFS
# files (a small one, and one of 12 MiB that takes the store's staged multipart path),
# the objects must be in the bucket under sha256/<hex>, and /resolve must give them back
# byte for byte: proxied by Hangar (download_mode=proxy), then by a 302 to a presigned
# gateway URL carrying the hf-api.md §2.5 headers (download_mode=redirect), also with
# Range, and the LFS batch API must hand out the presigned URL as the download href;
# upload_mode=direct parts go straight to presigned UploadPart URLs. The gateway checks
# every signature. The bucket is read back with curl's own SigV4 signing.
#
# Usage: s3_e2e.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup: S3 (RADOS gateway), bucket, admin CLI"
if [[ -n "${HANGAR_TEST_S3_ENV:-}" ]]; then
  [[ -r "$HANGAR_TEST_S3_ENV" ]] || die "HANGAR_TEST_S3_ENV=$HANGAR_TEST_S3_ENV cannot be read"
  S3_ENV="$(cat "$HANGAR_TEST_S3_ENV")"
else
  S3_SCRIPT="$(cd "$(dirname "$0")/../.." && pwd)/scripts/s3-server.sh"
  S3_ENV="$("$S3_SCRIPT" start "$T/s3" --watch $$ 2>"$T/s3.err")" ||
    die "scripts/s3-server.sh start failed" "$(tail -c 1500 "$T/s3.err")"
  EXTRA_CLEANUP+=("$S3_SCRIPT stop $T/s3")
fi
eval "$S3_ENV"
pass "S3 gateway on $S3_ENDPOINT"

BUCKET="hangar-e2e-$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')"
# s3 METHOD PATH [CURL_ARGS...]: a SigV4-signed request to $S3_ENDPOINT/PATH, the body
# to stdout. curl signs query strings as given, so every parameter carries its '='.
s3() {
  local method=$1 path=$2
  shift 2
  curl -sS --max-time 60 --aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" \
    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' -X "$method" "$@" "$S3_ENDPOINT/$path"
}
# s3_size KEY: the object's Content-Length in the bucket (empty when it is missing).
s3_size() {
  s3 HEAD "$BUCKET/$1" -I 2>/dev/null | tr -d '\r' |
    awk 'NR == 1 && $2 != 200 { exit } tolower($1) == "content-length:" { print $2 }'
}
# check_no_staging DESC: nothing is left under hub/uploads/, neither objects nor open
# multipart uploads.
check_no_staging() {
  check_eq "$1" "0 0" "$(s3 GET "$BUCKET?list-type=2&prefix=hub%2Fuploads%2F" | grep -o '<Key>' | wc -l) $(
    s3 GET "$BUCKET?prefix=hub%2Fuploads%2F&uploads=" | grep -o '<Upload>' | wc -l)"
}
s3 PUT "$BUCKET" -o "$T/bucket.out" -w '%{http_code}' >"$T/st" 2>&1 || true
[[ "$(cat "$T/st")" == 200 ]] || die "create bucket $BUCKET" "$(cat "$T/st" "$T/bucket.out")"
pass "bucket $BUCKET created"

DATA="$T/data"
mkdir -p "$DATA"
new_user alice --email alice@example.org
ALICE="$(new_token alice --name laptop --role write)"
HA="$(cred_helper alice "$ALICE")"
S3_ARGS=(--set storage.blobs=s3 --set "storage.s3_endpoint=$S3_ENDPOINT" --set "storage.s3_bucket=$BUCKET"
         --set "storage.s3_region=$S3_REGION" --set "storage.s3_access_key=$S3_ACCESS_KEY"
         --set "storage.s3_secret_key=$S3_SECRET_KEY" --set storage.s3_path_style=true
         --set storage.s3_prefix=hub/)

section "a missing bucket stops the server at start"
if launch_server "$HANGAR_BIN" serve --data-dir "$DATA" --listen 127.0.0.1:0 \
    "${S3_ARGS[@]}" --set storage.s3_bucket=no-such-bucket 2>"$T/nobucket.err"; then
  fail "serve with a missing bucket refuses to start"
  stop_server
else
  check_match "serve with a missing bucket refuses to start, naming the bucket" \
    "no-such-bucket" "$(cat "$SERVER_ERR" "$T/nobucket.err" 2>/dev/null | tail -c 600)"
fi

# ---------------------------------------------------------------------------------------
section "proxy mode: push LFS files with git-lfs"
# HF multipart LFS uploads (hf-api.md §7.4) from 5 MiB, in 5 MiB parts: S3's smallest.
MP_ARGS=(--set limits.multipart_threshold_bytes=5242880 --set limits.multipart_chunk_bytes=5242880)
start_server "$DATA" "${S3_ARGS[@]}" "${MP_ARGS[@]}" --set storage.download_mode=proxy ||
  die "hangar serve (s3, proxy) did not start" "$(tail -c 800 "$SERVER_ERR")"
pass "server (blobs=s3, download_mode=proxy) listening on $BASE"
must_create "$ALICE" s3-model alice model false

W="$T/work"
gitc "" clone -q "$BASE/alice/s3-model" "$W" 2>"$T/clone.err" || die "clone" "$(cat "$T/clone.err")"
python3 - "$W" <<'EOF'
import random, sys
r = random.Random(7)
open(sys.argv[1] + "/weights.bin", "wb").write(r.randbytes(12 * 1024 * 1024 + 12345))
open(sys.argv[1] + "/small.bin", "wb").write(r.randbytes(70000))
EOF
git -C "$W" lfs track "*.bin" >/dev/null
git -C "$W" add .gitattributes weights.bin small.bin
git -C "$W" commit -q -m "two LFS files"
BIG_SHA="$(sha256sum "$W/weights.bin" | cut -d' ' -f1)"
SMALL_SHA="$(sha256sum "$W/small.bin" | cut -d' ' -f1)"
BIG_SIZE="$(stat -c %s "$W/weights.bin")"
if gitc "$HA" -C "$W" push -q origin main >"$T/push.out" 2>&1; then
  pass "git push with git-lfs uploads into the S3 store"
else
  fail "git push with git-lfs uploads into the S3 store" "$(brief "$T/push.out" 1500)" \
    "server: $(tail -c 800 "$SERVER_ERR")"
fi

section "the objects are in the bucket"
for sha in "$BIG_SHA" "$SMALL_SHA"; do
  got="$(s3_size "hub/sha256/$sha")"
  check_match "object hub/sha256/${sha:0:12}… exists in the bucket" '^[0-9]+$' "$got"
done
check_eq "the big object has its size in the bucket" "$BIG_SIZE" \
  "$(s3_size "hub/sha256/$BIG_SHA")"
check_eq "the bucket's copy hashes to the LFS oid" "$BIG_SHA" \
  "$(s3 GET "$BUCKET/hub/sha256/$BIG_SHA" | sha256sum | cut -d' ' -f1)"
check_no_staging "no staging objects or open multipart uploads are left"

section "HF multipart LFS: the parts are S3 parts"
MIB5=5242880
head -c $((2 * MIB5 + 4321)) /dev/urandom >"$T/mp.bin"
MP_OID="$(sha256sum "$T/mp.bin" | cut -d' ' -f1)"
req POST "$BASE/alice/s3-model.git/info/lfs/objects/batch" -H "Authorization: Bearer $ALICE" \
  -H 'Content-Type: application/vnd.git-lfs+json' \
  --data-binary "$(jq -cn --arg oid "$MP_OID" --argjson size "$(stat -c %s "$T/mp.bin")" \
    '{operation: "upload", transfers: ["basic", "multipart"], objects: [{oid: $oid, size: $size}]}')"
check_json "an upload batch offering multipart gets it" .transfer multipart
MP_COMPLETE="$(jbody '.objects[0].actions.upload.href')"
MP_UPLOAD="$(sed -E 's#.*/([0-9a-f]{32})/complete$#\1#' <<<"$MP_COMPLETE")"
declare -A MP_URL=()
for n in 1 2 3; do MP_URL[$n]="$(jbody ".objects[0].actions.upload.header[\"$n\"]")"; done
mp_parts='[]'
# mp_put N: PUTs part N; checks its ETag is S3's (the MD5 of the part's bytes).
mp_put() {
  tail -c +$((($1 - 1) * MIB5 + 1)) "$T/mp.bin" | head -c $MIB5 >"$T/mp$1"
  curl -sS -X PUT --data-binary @"$T/mp$1" -D "$T/mp$1.h" -o /dev/null "${MP_URL[$1]}"
  local etag
  etag="$(awk 'tolower($1) == "etag:" { sub(/\r$/, ""); print $2 }' "$T/mp$1.h")"
  check_eq "  part $1's ETag is the S3 part's (its MD5)" "\"$(md5sum <"$T/mp$1" | cut -d' ' -f1)\"" "$etag"
  mp_parts="$(jq -c --argjson n "$1" --arg e "$etag" '. + [{partNumber: $n, etag: $e}]' <<<"$mp_parts")"
}
mp_put 1
mp_put 2
s3 GET "$BUCKET?prefix=hub%2Fuploads%2F$MP_UPLOAD&uploads=" >"$T/mp.uploads"
MP_KEY="$(grep -o '<Key>[^<]*</Key>' "$T/mp.uploads" | head -n 1 | sed -E 's#</?Key>##g')"
MP_S3_ID="$(grep -o '<UploadId>[^<]*</UploadId>' "$T/mp.uploads" | head -n 1 | sed -E 's#</?UploadId>##g')"
check_match "  the bucket has an open multipart upload named by upload $MP_UPLOAD" \
  "^hub/uploads/$MP_UPLOAD" "$MP_KEY"
check_eq "  holding the 2 parts sent so far" 2 \
  "$(s3 GET "$BUCKET/$MP_KEY?uploadId=$MP_S3_ID" | grep -o '<Part>' | wc -l)"
check_false "  and not on the local disk (no local staging area)" test -e "$DATA/tmp/uploads/$MP_UPLOAD"
check_false "  (nor a multipart directory)" test -e "$DATA/tmp/multipart"
mp_put 3
req POST "$MP_COMPLETE" -H 'Content-Type: application/vnd.git-lfs+json' \
  --data-binary "$(jq -cn --arg oid "$MP_OID" --argjson p "$mp_parts" '{oid: $oid, parts: $p}')"
check_status "the completion joins them → 200" 200
check_eq "  the object is in the bucket with its size" "$(stat -c %s "$T/mp.bin")" \
  "$(s3_size "hub/sha256/$MP_OID")"
check_eq "  and hashes to its oid" "$MP_OID" \
  "$(s3 GET "$BUCKET/hub/sha256/$MP_OID" | sha256sum | cut -d' ' -f1)"
check_no_staging "  no staging objects or open multipart uploads are left"

section "proxy mode: /resolve streams the bytes"
curl -s -o "$T/big.proxy" -D "$T/big.proxy.h" -w '%{http_code}' "$BASE/alice/s3-model/resolve/main/weights.bin" >"$T/st" 2>&1
check_eq "GET /resolve/main/weights.bin -> 200" 200 "$(cat "$T/st")"
check_eq "  ... byte for byte (sha256)" "$BIG_SHA" "$(sha256sum "$T/big.proxy" | cut -d' ' -f1)"
check_eq "  ... X-Linked-Size" "$BIG_SIZE" "$(grep -i '^x-linked-size:' "$T/big.proxy.h" | tr -d '\r' | cut -d' ' -f2)"
curl -s -o "$T/range.proxy" -w '%{http_code}' -H 'Range: bytes=100-1099' \
  "$BASE/alice/s3-model/resolve/main/weights.bin" >"$T/st"
check_eq "GET with Range bytes=100-1099 -> 206" 206 "$(cat "$T/st")"
check_eq "  ... the right 1000 bytes" "$(tail -c +101 "$W/weights.bin" | head -c 1000 | sha256sum)" \
  "$(sha256sum <"$T/range.proxy")"
rm -rf "$T/clone2"
if gitc "" clone -q "$BASE/alice/s3-model" "$T/clone2" >"$T/clone2.out" 2>&1 &&
   cmp -s "$W/weights.bin" "$T/clone2/weights.bin" && cmp -s "$W/small.bin" "$T/clone2/small.bin"; then
  pass "git clone (git-lfs basic downloads, proxied) gives the same bytes"
else
  fail "git clone (git-lfs basic downloads, proxied) gives the same bytes" "$(brief "$T/clone2.out" 800)"
fi
stop_server || fail "server stopped cleanly" "exit: $SERVER_RC"

# ---------------------------------------------------------------------------------------
section "redirect mode: /resolve answers 302 to a presigned S3 URL"
start_server "$DATA" "${S3_ARGS[@]}" --set storage.download_mode=redirect ||
  die "hangar serve (s3, redirect) did not start" "$(tail -c 800 "$SERVER_ERR")"
pass "server (blobs=s3, download_mode=redirect) listening on $BASE"
req HEAD "$BASE/alice/s3-model/resolve/main/weights.bin"
check_status "HEAD /resolve/main/weights.bin -> 302" 302
check_hdr_match "  ... Location is the presigned object URL" Location "^$S3_ENDPOINT/$BUCKET/hub/sha256/$BIG_SHA\\?.*X-Amz-Signature="
check_hdr "  ... X-Linked-Size" X-Linked-Size "$BIG_SIZE"
check_hdr "  ... X-Linked-Etag" X-Linked-Etag "\"$BIG_SHA\""
check_hdr_match "  ... X-Repo-Commit" X-Repo-Commit '^[0-9a-f]{40}$'
curl -s -o /dev/null -D "$T/redir.h" -w '%{http_code}' "$BASE/alice/s3-model/resolve/main/weights.bin" >"$T/st"
check_eq "GET /resolve/main/weights.bin (no -L) -> 302" 302 "$(cat "$T/st")"
curl -sL -o "$T/big.redirect" -w '%{http_code}' "$BASE/alice/s3-model/resolve/main/weights.bin" >"$T/st"
check_eq "curl -L follows to the gateway -> 200" 200 "$(cat "$T/st")"
check_eq "  ... byte for byte (sha256)" "$BIG_SHA" "$(sha256sum "$T/big.redirect" | cut -d' ' -f1)"
curl -sL -o "$T/range.redirect" -w '%{http_code}' -H 'Range: bytes=100-1099' \
  "$BASE/alice/s3-model/resolve/main/weights.bin" >"$T/st"
check_eq "curl -L with Range: the object store answers 206" 206 "$(cat "$T/st")"
check_eq "  ... the right 1000 bytes" "$(tail -c +101 "$W/weights.bin" | head -c 1000 | sha256sum)" \
  "$(sha256sum <"$T/range.redirect")"
req GET "$BASE/alice/s3-model/resolve/main/.gitattributes"
check_status "a regular (non-LFS) file is still served directly -> 200" 200

section "redirect mode: the LFS batch API hands out the presigned URL"
req POST "$BASE/alice/s3-model.git/info/lfs/objects/batch" -u "hf_user:$ALICE" \
  -H 'Accept: application/vnd.git-lfs+json' -H 'Content-Type: application/vnd.git-lfs+json' \
  --data-binary "{\"operation\":\"download\",\"objects\":[{\"oid\":\"$SMALL_SHA\",\"size\":70000}]}"
check_status "POST batch download -> 200" 200
HREF="$(jbody '.objects[0].actions.download.href')"
check_match "  ... download href is the presigned object URL" "^$S3_ENDPOINT/$BUCKET/hub/sha256/$SMALL_SHA\\?" "$HREF"
check_eq "  ... and it serves the object" "$SMALL_SHA" "$(curl -s "$HREF" | sha256sum | cut -d' ' -f1)"
rm -rf "$T/clone3"
if gitc "" clone -q "$BASE/alice/s3-model" "$T/clone3" >"$T/clone3.out" 2>&1 &&
   cmp -s "$W/weights.bin" "$T/clone3/weights.bin"; then
  pass "git clone (git-lfs downloads straight from S3) gives the same bytes"
else
  fail "git clone (git-lfs downloads straight from S3) gives the same bytes" "$(brief "$T/clone3.out" 800)"
fi
stop_server || fail "server stopped cleanly" "exit: $SERVER_RC"

section "upload_mode = direct: the native upload API hands out presigned part URLs"
start_server "$DATA" "${S3_ARGS[@]}" --set storage.upload_mode=direct ||
  die "hangar serve (s3, direct uploads) did not start" "$(tail -c 600 "$SERVER_ERR")"
head -c $((6 << 20)) /dev/urandom >"$T/direct.bin"
DIRECT_SHA="$(sha256sum "$T/direct.bin" | cut -d' ' -f1)"
split -b $((5 << 20)) -d -a 1 "$T/direct.bin" "$T/direct."
req POST "$BASE/api/models/alice/s3-model/uploads" -H "Authorization: Bearer $ALICE" \
  -H 'Content-Type: application/json' \
  --data-binary "{\"sha256\":\"$DIRECT_SHA\",\"size\":$((6 << 20)),\"partSize\":$((5 << 20))}"
check_status "create an upload -> 201" 201
UP="$(jbody .id)"
check_json "  two parts" .partCount 2
check_match "  part URLs are presigned S3 UploadPart URLs" "^$S3_ENDPOINT/$BUCKET/hub/uploads/.*partNumber=2.*X-Amz-Signature=" "$(jbody '.partUrls[1]')"
check_match "  ... for this upload's staging key" "/hub/uploads/$UP" "$(jbody '.partUrls[0]')"
# Part 1 straight to its presigned URL (no credentials: the signature is the grant),
# part 2 through Hangar's part route, which stays open in direct mode.
curl -sS -o "$T/st1.body" -w '%{http_code}' --max-time 60 -X PUT \
  --data-binary @"$T/direct.0" "$(jbody '.partUrls[0]')" >"$T/st1"
curl -sS -o /dev/null -w '%{http_code}' --max-time 60 -X PUT -H "Authorization: Bearer $ALICE" \
  --data-binary @"$T/direct.1" "$BASE/api/uploads/$UP/parts/2" >"$T/st2"
check_eq "  part 1 to the presigned URL, part 2 through Hangar -> 200 200" "200 200" \
  "$(cat "$T/st1") $(cat "$T/st2")"
req GET "$BASE/api/uploads/$UP" -H "Authorization: Bearer $ALICE"
check_json "  Hangar lists both parts from S3" '[.parts[].partNumber] | join(",")' "1,2"
req POST "$BASE/api/uploads/$UP/complete" -H "Authorization: Bearer $ALICE"
check_status "complete (Hangar reads the object back and checks its sha256) -> 200" 200
check_eq "  the object is in the bucket under its sha256" "$((6 << 20))" \
  "$(s3_size "hub/sha256/$DIRECT_SHA")"
printf '%s\n' '{"key":"header","value":{"summary":"direct upload"}}' \
  "{\"key\":\"lfsFile\",\"value\":{\"path\":\"direct.bin\",\"algo\":\"sha256\",\"oid\":\"$DIRECT_SHA\",\"size\":$((6 << 20))}}" >"$T/direct.ndjson"
req POST "$BASE/api/models/alice/s3-model/commit/main" -H "Authorization: Bearer $ALICE" \
  -H 'Content-Type: application/x-ndjson' --data-binary @"$T/direct.ndjson"
check_status "commit it -> 200" 200
check_eq "  /resolve gives the bytes back" "$DIRECT_SHA" \
  "$(curl -s "$BASE/alice/s3-model/resolve/main/direct.bin" | sha256sum | cut -d' ' -f1)"
stop_server || fail "server stopped cleanly" "exit: $SERVER_RC"

finish
