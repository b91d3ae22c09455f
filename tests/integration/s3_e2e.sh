#!/usr/bin/env bash
# The S3 blob store end to end (issue #3 point 7): a moto S3 server on 127.0.0.1, then
# `hangar serve --set storage.blobs=s3 ...` on a fresh bucket. git + git-lfs push two LFS
# files (a small one, and one of 12 MiB that takes the store's staged multipart path),
# the objects must be in the bucket under sha256/<hex>, and /resolve must give them back
# byte for byte: proxied by Hangar (download_mode=proxy), then by a 302 to a presigned
# moto URL carrying the hf-api.md §2.5 headers (download_mode=redirect), also with Range,
# and the LFS batch API must hand out the presigned URL as the download href.
# Needs moto_server and python3 with boto3 (moto's own dependency).
#
# Usage: s3_e2e.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup: moto, bucket, admin CLI"
command -v moto_server >/dev/null || die "moto_server is not on PATH (pip install 'moto[server]')"
MOTO_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
# S3_E2E_AUTH=1: moto checks SigV4 signatures (IAM auth after 4 free setup calls).
if [[ -n "${S3_E2E_AUTH:-}" ]]; then export INITIAL_NO_AUTH_ACTION_COUNT=4; fi
moto_server -H 127.0.0.1 -p "$MOTO_PORT" >"$T/moto.log" 2>&1 &
EXTRA_PIDS+=("$!")
MOTO="http://127.0.0.1:$MOTO_PORT"
# A bare TCP connect: with S3_E2E_AUTH an HTTP probe would use up a free setup call.
moto_up() { (exec 3<>"/dev/tcp/127.0.0.1/$MOTO_PORT") 2>/dev/null; }
for ((i = 0; i < 600; i++)); do
  moto_up && break
  sleep 0.05
done
moto_up || die "moto_server did not come up on $MOTO" "$(tail -c 500 "$T/moto.log")"
pass "moto S3 server on $MOTO"

export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_DEFAULT_REGION=us-east-1
BUCKET="hangar-e2e"
if [[ -n "${S3_E2E_AUTH:-}" ]]; then
  KEYS="$(python3 -c "
import boto3, json
iam = boto3.client('iam', endpoint_url='$MOTO')
iam.create_user(UserName='hangar')
iam.put_user_policy(UserName='hangar', PolicyName='all', PolicyDocument=json.dumps(
    {'Version': '2012-10-17', 'Statement': [{'Effect': 'Allow', 'Action': '*', 'Resource': '*'}]}))
k = iam.create_access_key(UserName='hangar')['AccessKey']
print(k['AccessKeyId'], k['SecretAccessKey'])")" || die "IAM user for signature checks"
  read -r AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY <<<"$KEYS"
  info "moto checks signatures; access key $AWS_ACCESS_KEY_ID"
fi
# s3py CODE...: python with a boto3 client `s3` on moto.
s3py() {
  python3 -c "import boto3,sys; s3=boto3.client('s3', endpoint_url='$MOTO'); $1" "${@:2}"
}
s3py "s3.create_bucket(Bucket='$BUCKET')" 2>"$T/bucket.err" || die "create bucket" "$(cat "$T/bucket.err")"
pass "bucket $BUCKET created"

DATA="$T/data"
mkdir -p "$DATA"
new_user alice --email alice@example.org
ALICE="$(new_token alice --name laptop --role write)"
HA="$(cred_helper alice "$ALICE")"
S3_ARGS=(--set storage.blobs=s3 --set "storage.s3_endpoint=$MOTO" --set "storage.s3_bucket=$BUCKET"
         --set storage.s3_region=us-east-1 --set "storage.s3_access_key=$AWS_ACCESS_KEY_ID"
         --set "storage.s3_secret_key=$AWS_SECRET_ACCESS_KEY" --set storage.s3_path_style=true
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
start_server "$DATA" "${S3_ARGS[@]}" --set storage.download_mode=proxy ||
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
  got="$(s3py "print(s3.head_object(Bucket='$BUCKET', Key='hub/sha256/$sha')['ContentLength'])" 2>&1)"
  check_match "object hub/sha256/${sha:0:12}… exists in the bucket" '^[0-9]+$' "$got"
done
check_eq "the big object has its size in the bucket" "$BIG_SIZE" \
  "$(s3py "print(s3.head_object(Bucket='$BUCKET', Key='hub/sha256/$BIG_SHA')['ContentLength'])" 2>&1)"
check_eq "the bucket's copy hashes to the LFS oid" "$BIG_SHA" \
  "$(s3py "import hashlib; print(hashlib.sha256(s3.get_object(Bucket='$BUCKET', Key='hub/sha256/$BIG_SHA')['Body'].read()).hexdigest())" 2>&1)"
check_eq "no staging objects or open multipart uploads are left" "0 0" \
  "$(s3py "p='hub/uploads/'; print(len([o for o in s3.list_objects_v2(Bucket='$BUCKET').get('Contents', []) if o['Key'].startswith(p)]), len([u for u in s3.list_multipart_uploads(Bucket='$BUCKET').get('Uploads', []) if u['Key'].startswith(p)]))" 2>&1)"

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
check_hdr_match "  ... Location is the presigned object URL" Location "^$MOTO/$BUCKET/hub/sha256/$BIG_SHA\\?.*X-Amz-Signature="
check_hdr "  ... X-Linked-Size" X-Linked-Size "$BIG_SIZE"
check_hdr "  ... X-Linked-Etag" X-Linked-Etag "\"$BIG_SHA\""
check_hdr_match "  ... X-Repo-Commit" X-Repo-Commit '^[0-9a-f]{40}$'
curl -s -o /dev/null -D "$T/redir.h" -w '%{http_code}' "$BASE/alice/s3-model/resolve/main/weights.bin" >"$T/st"
check_eq "GET /resolve/main/weights.bin (no -L) -> 302" 302 "$(cat "$T/st")"
curl -sL -o "$T/big.redirect" -w '%{http_code}' "$BASE/alice/s3-model/resolve/main/weights.bin" >"$T/st"
check_eq "curl -L follows to moto -> 200" 200 "$(cat "$T/st")"
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
check_match "  ... download href is the presigned object URL" "^$MOTO/$BUCKET/hub/sha256/$SMALL_SHA\\?" "$HREF"
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
check_match "  part URLs are presigned S3 UploadPart URLs" "^$MOTO/$BUCKET/hub/uploads/.*partNumber=2.*X-Amz-Signature=" "$(jbody '.partUrls[1]')"
check_match "  ... for this upload's staging key" "/hub/uploads/$UP" "$(jbody '.partUrls[0]')"
# moto 5.2.1 answers 500 to every presigned UploadPart PUT (boto3's own presigned URLs
# included: its upload_part handler reads no partNumber from a presigned query), so the
# parts go through Hangar's part route here, which stays open in direct mode.
for n in 1 2; do
  curl -sS -o /dev/null -w '%{http_code}' --max-time 60 -X PUT -H "Authorization: Bearer $ALICE" \
    --data-binary @"$T/direct.$((n - 1))" "$BASE/api/uploads/$UP/parts/$n" >"$T/st$n"
done
check_eq "  parts through Hangar -> 200 200" "200 200" "$(cat "$T/st1") $(cat "$T/st2")"
req GET "$BASE/api/uploads/$UP" -H "Authorization: Bearer $ALICE"
check_json "  Hangar lists both parts from S3" '[.parts[].partNumber] | join(",")' "1,2"
req POST "$BASE/api/uploads/$UP/complete" -H "Authorization: Bearer $ALICE"
check_status "complete (Hangar reads the object back and checks its sha256) -> 200" 200
check_eq "  the object is in the bucket under its sha256" "$((6 << 20))" \
  "$(s3py "print(s3.head_object(Bucket='$BUCKET', Key='hub/sha256/$DIRECT_SHA')['ContentLength'])")"
printf '%s\n' '{"key":"header","value":{"summary":"direct upload"}}' \
  "{\"key\":\"lfsFile\",\"value\":{\"path\":\"direct.bin\",\"algo\":\"sha256\",\"oid\":\"$DIRECT_SHA\",\"size\":$((6 << 20))}}" >"$T/direct.ndjson"
req POST "$BASE/api/models/alice/s3-model/commit/main" -H "Authorization: Bearer $ALICE" \
  -H 'Content-Type: application/x-ndjson' --data-binary @"$T/direct.ndjson"
check_status "commit it -> 200" 200
check_eq "  /resolve gives the bytes back" "$DIRECT_SHA" \
  "$(curl -s "$BASE/alice/s3-model/resolve/main/direct.bin" | sha256sum | cut -d' ' -f1)"
stop_server || fail "server stopped cleanly" "exit: $SERVER_RC"

finish
