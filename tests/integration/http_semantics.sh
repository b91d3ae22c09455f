#!/usr/bin/env bash
# One HTTP semantics for every API family (issue 14; src/http/range.h, preconditions.h):
# Range (single, suffix, open, clamped, past the end, multi-range, backwards), Content-Range,
# and the conditional requests (If-None-Match, If-Match, If-Range) answered the same way by
# HF /resolve (a git file and an LFS file), LFS transfer downloads and OCI blobs. Where a
# protocol must differ it is shown: OCI answers a backwards range with 416 (oci.md §3.2),
# the others serve the whole file.
# Usage: http_semantics.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice
ALICE="$(new_token alice --role write)"
AUTH=(-H "Authorization: Bearer $ALICE")
start_server "$DATA" || die "hangar serve did not start"
must_create "$ALICE" sem alice model false
printf '0123456789' >"$T/ten"
OID="$(sha256_of "$T/ten")"
lfs_batch() {  # lfs_batch OPERATION: the batch answer for the ten-byte object
  req POST "$BASE/alice/sem.git/info/lfs/objects/batch" "${AUTH[@]}" \
    -H 'Content-Type: application/vnd.git-lfs+json' \
    --data-binary "{\"operation\":\"$1\",\"objects\":[{\"oid\":\"$OID\",\"size\":10}]}"
}
lfs_batch upload
curl -sS -o /dev/null -X PUT --data-binary @"$T/ten" "$(jbody '.objects[0].actions.upload.href')" ||
  die "LFS upload"
printf '%s\n%s\n%s\n' '{"key":"header","value":{"summary":"files"}}' \
  '{"key":"file","value":{"path":"r.txt","content":"MDEyMzQ1Njc4OQ==","encoding":"base64"}}' \
  "{\"key\":\"lfsFile\",\"value\":{\"path\":\"w.bin\",\"algo\":\"sha256\",\"oid\":\"$OID\",\"size\":10}}" \
  >"$T/c.ndjson"
req POST "$BASE/api/models/alice/sem/commit/main" "${AUTH[@]}" \
  -H 'Content-Type: application/x-ndjson' --data-binary @"$T/c.ndjson"
check_status "a git file and an LFS file committed" 200
lfs_batch download
LFS_HREF="$(jbody '.objects[0].actions.download.href')"
LFS_HDR="$(jbody '.objects[0].actions.download.header.Authorization // ""')"
req POST "$BASE/v2/alice/sem/blobs/uploads/?digest=sha256:$OID" "${AUTH[@]}" \
  -H 'Content-Type: application/octet-stream' --data-binary @"$T/ten"
check_status "the same bytes pushed as an OCI blob" 201

# family NAME BACKWARDS_STATUS URL CURL_ARGS...: every Range and precondition case on URL.
family() {
  local name="$1" backwards="$2" url="$3"
  shift 3
  section "$name"
  req GET "$url" "$@"
  check_status "$name: no Range → 200" 200
  check_eq "  the ten bytes" 0123456789 "$(cat "$BODY")"
  local etag
  etag="$(hdr ETag)"
  check_match "  with a quoted ETag" '^".+"$' "$etag"
  req GET "$url" "$@" -H 'Range: bytes=2-4'
  check_status "$name: bytes=2-4 → 206" 206
  check_eq "  234" 234 "$(cat "$BODY")"
  check_hdr "  Content-Range" Content-Range "bytes 2-4/10"
  req GET "$url" "$@" -H 'Range: bytes=-3'
  check_status "$name: suffix bytes=-3 → 206" 206
  check_eq "  789" 789 "$(cat "$BODY")"
  check_hdr "  Content-Range" Content-Range "bytes 7-9/10"
  req GET "$url" "$@" -H 'Range: bytes=8-'
  check_status "$name: open bytes=8- → 206" 206
  check_eq "  89" 89 "$(cat "$BODY")"
  req GET "$url" "$@" -H 'Range: bytes=5-5000'
  check_status "$name: bytes=5-5000 is clamped → 206" 206
  check_hdr "  Content-Range" Content-Range "bytes 5-9/10"
  req GET "$url" "$@" -H 'Range: bytes=10-'
  check_status "$name: bytes=10- (past the end) → 416" 416
  check_hdr "  Content-Range" Content-Range "bytes */10"
  req GET "$url" "$@" -H 'Range: bytes=0-1,5-6'
  check_status "$name: multi-range → 200, the whole file" 200
  check_eq "  the ten bytes" 0123456789 "$(cat "$BODY")"
  req GET "$url" "$@" -H 'Range: bytes=5-3'
  check_status "$name: backwards bytes=5-3 → $backwards" "$backwards"
  req GET "$url" "$@" -H "If-None-Match: $etag"
  check_status "$name: If-None-Match with the ETag → 304" 304
  check_eq "  no body" 0 "$(stat -c %s "$BODY")"
  req GET "$url" "$@" -H 'If-None-Match: "something-else"'
  check_status "$name: If-None-Match with another tag → 200" 200
  req GET "$url" "$@" -H 'If-Match: "something-else"'
  check_status "$name: If-Match with another tag → 412" 412
  req GET "$url" "$@" -H "If-Match: $etag"
  check_status "$name: If-Match with the ETag → 200" 200
  req GET "$url" "$@" -H 'Range: bytes=2-4' -H "If-Range: $etag"
  check_status "$name: If-Range with the ETag keeps the range → 206" 206
  req GET "$url" "$@" -H 'Range: bytes=2-4' -H 'If-Range: "old"'
  check_status "$name: If-Range with another tag → 200, the whole file" 200
  check_eq "  the ten bytes" 0123456789 "$(cat "$BODY")"
}

family "HF /resolve, a git file" 200 "$BASE/alice/sem/resolve/main/r.txt"
family "HF /resolve, an LFS file" 200 "$BASE/alice/sem/resolve/main/w.bin"
if [[ -n "$LFS_HDR" ]]; then
  family "LFS transfer download" 200 "$LFS_HREF" -H "Authorization: $LFS_HDR"
else
  family "LFS transfer download" 200 "$LFS_HREF"
fi
family "OCI blob" 416 "$BASE/v2/alice/sem/blobs/sha256:$OID" "${AUTH[@]}"

finish
