#!/usr/bin/env bash
# Issue #3 point 4: the HF multipart LFS transfer (hf-api.md §7.4) against `hangar serve`
# with 1 MiB parts: (a) raw HTTP — batch with transfers ["basic","multipart"], parts PUT
# in reverse order and in parallel, completion, byte-identical download; a completion
# whose bytes do not hash to the oid is refused and stores nothing; git-lfs (transfers
# ["basic"]) still gets basic; (b) the real @huggingface/hub client uploading 5 MiB.
# Usage: lfs_multipart.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

JS_DIR="$REPO_ROOT/tests/js"
[[ -d "$JS_DIR/node_modules/@huggingface/hub" ]] ||
  (cd "$JS_DIR" && npm ci --silent >"$T/npm.out" 2>&1) ||
  die "tests/js/node_modules missing and npm ci failed" "$(brief "$T/npm.out" 500)"

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice
ALICE="$(new_token alice --role write)"
MIB=1048576
start_server "$DATA" --set limits.multipart_threshold_bytes=$MIB \
  --set limits.multipart_chunk_bytes=$MIB || die "hangar serve did not start"
must_create "$ALICE" mp alice model false
AUTH=(-H "Authorization: Bearer $ALICE")
LFS=(-H 'Accept: application/vnd.git-lfs+json' -H 'Content-Type: application/vnd.git-lfs+json')

# batch FILE TRANSFERS_JSON [OID]: upload batch for FILE (its size, OID or its sha256).
batch() {
  local oid="${3:-$(sha256sum "$1" | cut -d' ' -f1)}"
  req POST "$BASE/alice/mp.git/info/lfs/objects/batch" "${AUTH[@]}" "${LFS[@]}" \
    --data-binary "$(jq -cn --arg oid "$oid" --argjson size "$(stat -c %s "$1")" \
      --argjson t "$2" '{operation: "upload", transfers: $t, hash_algo: "sha_256",
                         objects: [{oid: $oid, size: $size}]}')"
}

blob_count() { find "$DATA/blobs" -type f 2>/dev/null | wc -l; }

section "raw HTTP: parts in reverse order, in parallel"
F="$T/obj.bin"
head -c $((2 * MIB + 12345)) /dev/urandom >"$F"
OID="$(sha256sum "$F" | cut -d' ' -f1)"
batch "$F" '["basic","multipart"]'
check_status "batch → 200" 200
check_json "  transfer is multipart" .transfer multipart
check_json "  chunk_size is a decimal string" '.objects[0].actions.upload.header.chunk_size' "$MIB"
check_json "  3 part URLs" '.objects[0].actions.upload.header | keys | length' 4
COMPLETE="$(jbody '.objects[0].actions.upload.href')"
check_match "  completion href is absolute" '^http://127\.0\.0\.1:[0-9]+/' "$COMPLETE"
declare -A ETAG=()
pids=()
for n in 3 2 1; do
  url="$(jbody ".objects[0].actions.upload.header[\"$n\"]")"
  ((n == 1)) && PART1_URL="$url"
  tail -c +$(((n - 1) * MIB + 1)) "$F" | head -c $MIB >"$T/part$n"
  # No Authorization: the URL authorises itself (hf-api.md §7.3).
  curl -sS -X PUT --data-binary @"$T/part$n" -D "$T/part$n.hdrs" -o /dev/null \
    -w '%{http_code}' "$url" >"$T/part$n.st" 2>"$T/part$n.err" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
parts='[]'
for n in 1 2 3; do
  check_eq "  part $n PUT → 200" 200 "$(cat "$T/part$n.st")"
  ETAG[$n]="$(awk 'tolower($1) == "etag:" { sub(/\r$/, ""); print $2 }' "$T/part$n.hdrs")"
  check_match "  part $n has an ETag" '^".+"$' "${ETAG[$n]}"
  parts="$(jq -c --argjson n $n --arg e "${ETAG[$n]}" '. + [{partNumber: $n, etag: $e}]' <<<"$parts")"
done
UPLOAD="$(sed -E 's#.*/([0-9a-f]{32})/complete$#\1#' <<<"$COMPLETE")"
check_eq "  the 3 parts wait in the blob store's staging area of upload $UPLOAD" 3 \
  "$(find "$DATA/tmp/uploads/$UPLOAD" -name '*.part' 2>/dev/null | wc -l)"
check_false "  not in a multipart directory of their own" test -e "$DATA/tmp/multipart"
before="$(blob_count)"
req POST "$COMPLETE" "${LFS[@]}" --data-binary "$(jq -cn --arg oid "$OID" --argjson p "$parts" '{oid: $oid, parts: $p}')"
check_status "completion → 200" 200
check_false "  the staging area is gone" test -e "$DATA/tmp/uploads/$UPLOAD"
req POST "$COMPLETE" "${LFS[@]}" --data-binary "$(jq -cn --arg oid "$OID" --argjson p "$parts" '{oid: $oid, parts: $p}')"
check_status "  a completion sent again → 200" 200
req PUT "$PART1_URL" --data-binary @"$T/part1"
check_status "  a part PUT after the completion → 404" 404
check_eq "  one new blob" $((before + 1)) "$(blob_count)"
batch "$F" '["basic","multipart"]'
check_json "  a second batch: already stored, no actions" '.objects[0].actions' null
req POST "$BASE/alice/mp.git/info/lfs/objects/batch" "${AUTH[@]}" "${LFS[@]}" \
  --data-binary "$(jq -cn --arg oid "$OID" --argjson size "$(stat -c %s "$F")" \
    '{operation: "download", objects: [{oid: $oid, size: $size}]}')"
DL="$(jbody '.objects[0].actions.download.href')"
curl -sS -o "$T/dl.bin" "$DL"
check_true "  downloaded bytes are identical" cmp -s "$F" "$T/dl.bin"

section "wrong total digest: 4xx, nothing stored, parts removed"
G="$T/other.bin"
head -c $((MIB + 7)) /dev/urandom >"$G"
FAKE="$(printf 'not the content' | sha256sum | cut -d' ' -f1)"
batch "$G" '["basic","multipart"]' "$FAKE"
check_status "batch → 200" 200
COMPLETE="$(jbody '.objects[0].actions.upload.href')"
parts='[]'
for n in 1 2; do
  url="$(jbody ".objects[0].actions.upload.header[\"$n\"]")"
  tail -c +$(((n - 1) * MIB + 1)) "$G" | head -c $MIB >"$T/g$n"
  curl -sS -X PUT --data-binary @"$T/g$n" -D "$T/g$n.hdrs" -o /dev/null "$url"
  e="$(awk 'tolower($1) == "etag:" { sub(/\r$/, ""); print $2 }' "$T/g$n.hdrs")"
  parts="$(jq -c --argjson n $n --arg e "$e" '. + [{partNumber: $n, etag: $e}]' <<<"$parts")"
done
before="$(blob_count)"
req POST "$COMPLETE" "${LFS[@]}" --data-binary "$(jq -cn --arg oid "$FAKE" --argjson p "$parts" '{oid: $oid, parts: $p}')"
check_match "completion → 4xx" '^4[0-9][0-9]$' "$ST"
check_eq "  nothing new under blobs/" "$before" "$(blob_count)"
check_eq "  no staging area left (the upload and its parts are gone)" 0 \
  "$(find "$DATA/tmp/uploads" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)"

section "git-lfs (no \"multipart\" in transfers) keeps basic"
batch "$G" '["basic"]'
check_json "  transfer basic" .transfer basic
check_json "  no chunk_size" '.objects[0].actions.upload.header.chunk_size' null

section "@huggingface/hub uploadFiles with multipart, downloadFile reads it back"
(cd "$JS_DIR" && HANGAR_URL="$BASE" HANGAR_TOKEN="$ALICE" node --input-type=module -e '
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { downloadFile, uploadFiles } from "@huggingface/hub";
const hubUrl = process.env.HANGAR_URL, accessToken = process.env.HANGAR_TOKEN;
const repo = "alice/mp";
const data = randomBytes(5 << 20);
await uploadFiles({ repo, hubUrl, accessToken, useXet: false,
                    files: [{ path: "big.bin", content: new Blob([data]) }] });
const blob = await downloadFile({ repo, path: "big.bin", hubUrl, accessToken });
assert.ok(blob, "downloadFile returned nothing");
assert.deepEqual(Buffer.from(await blob.arrayBuffer()), data);
console.log("ok");
') >"$T/js.out" 2>&1
check_eq "JS client 5 MiB multipart round trip" ok "$(tail -n 1 "$T/js.out")" ||
  brief "$T/js.out" 1500
check_true "  the server saw part PUTs" grep -q 'lfs-multipart' "$SERVER_ERR" "$SERVER_OUT"
TICKET="$(sed -E 's#.*/lfs-multipart/([^/]+)/.*#\1#' <<<"$PART1_URL")"
check_true "  its access log names the part URLs with the ticket blanked out" \
  grep -q 'lfs-multipart/<ticket>/' "$SERVER_ERR" "$SERVER_OUT"
check_false "  and never shows a ticket, a credential for an hour" \
  grep -q -- "$TICKET" "$SERVER_ERR" "$SERVER_OUT"

finish
