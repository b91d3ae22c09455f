#!/usr/bin/env bash
# The registry (/v2/, issue #5) against hostile and buggy clients: bad names and digests,
# lying uploads, hostile manifests, other users' uploads and private content, token
# misuse, and one user opening uploads until nobody else could push. Each bad request
# gets a 4xx with the spec's error code (oci.md §8) and changes nothing.
# Usage: oci_hardening.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice
new_user bob
ALICE="$(new_token alice --role write)"
BOB="$(new_token bob --role write)"
admin org create acme --owner alice >/dev/null || die "admin org create acme"
admin org add-member acme bob --role write >/dev/null || die "admin org add-member acme bob"
start_server "$DATA" || die "hangar serve did not start"
AA=(-u "alice:$ALICE")
BA=(-u "bob:$BOB")
must_create "$ALICE" pub alice model false
must_create "$ALICE" secret alice model true
must_create "$BOB" b1 bob model false

sha() { printf 'sha256:%s' "$(sha256sum "$1" | cut -d' ' -f1)"; }
# push_blob NAME FILE AUTH...: POST + PUT; dies unless 201.
push_blob() {
  local name="$1" file="$2"; shift 2
  req POST "$BASE/v2/$name/blobs/uploads/" "$@"
  [[ "$ST" == 202 ]] || die "POST upload to $name" "$(exchange)"
  local loc
  loc="$(hdr Location)"
  req PUT "$BASE$loc?digest=$(sha "$file")" "$@" --data-binary "@$file"
  [[ "$ST" == 201 ]] || die "PUT blob to $name" "$(exchange)"
}
oci_code() { jbody '.errors[0].code'; }

printf 'top secret' >"$T/secret.bin"
printf '{}' >"$T/cfg.json"
push_blob alice/secret "$T/secret.bin" "${AA[@]}"
push_blob alice/secret "$T/cfg.json" "${AA[@]}"
push_blob alice/pub "$T/cfg.json" "${AA[@]}"
SECRET="$(sha "$T/secret.bin")"
CFG="$(sha "$T/cfg.json")"

section "names and digests"
for n in 'alice/..' 'Alice/pub' 'alice/%2e%2e' 'datasets/..' 'alice/pub%2f..%2fsecret'; do
  req GET "$BASE/v2/$n/tags/list" "${AA[@]}"
  check_status "GET tags of '$n' is 400" 400
  check_eq "  ... NAME_INVALID" NAME_INVALID "$(oci_code)"
done
for d in "${CFG^^}" "sha256:${CFG#sha256:}0" 'md5:5d41402abc4b2a76b9719d911017c592' "sha256:$(printf 'A%.0s' {1..64})"; do
  req GET "$BASE/v2/alice/pub/blobs/$d" "${AA[@]}"
  check_status "GET blob '${d:0:20}...' is 400" 400
  check_eq "  ... DIGEST_INVALID" DIGEST_INVALID "$(oci_code)"
done

section "uploads"
req POST "$BASE/v2/alice/pub/blobs/uploads/" "${AA[@]}"
LOC="$(hdr Location)"
req PATCH "$BASE$LOC" "${AA[@]}" -H 'Content-Range: 5-9' --data-binary 12345
check_status "a chunk that does not start at the offset is 416" 416
req PATCH "$BASE$LOC" "${AA[@]}" -H 'Content-Range: 0-9' --data-binary 12345
check_status "Content-Range longer than the body is 400" 400
check_eq "  ... SIZE_INVALID" SIZE_INVALID "$(oci_code)"
req GET "$BASE$LOC" "${AA[@]}"
check_hdr "  ... and the upload received nothing" Range 0-0
req PATCH "$BASE$LOC" "${BA[@]}" --data-binary evil
check_status "bob cannot PATCH alice's upload" 403
req PATCH "$BASE/v2/bob/b1/blobs/uploads/${LOC##*/}" "${BA[@]}" --data-binary evil
check_status "nor through his own repo's name" 404
check_eq "  ... BLOB_UPLOAD_UNKNOWN" BLOB_UPLOAD_UNKNOWN "$(oci_code)"
req PUT "$BASE$LOC?digest=$(sha "$T/cfg.json")" "${AA[@]}" --data-binary '@'"$T/cfg.json"
check_status "alice finishes her upload" 201
req PATCH "$BASE$LOC" "${AA[@]}" --data-binary more
check_status "PATCH after the final PUT is 404" 404
req PUT "$BASE$LOC?digest=$(sha "$T/cfg.json")" "${AA[@]}" --data-binary '@'"$T/cfg.json"
check_status "a second final PUT is 404" 404

section "an upload belongs to the user who began it (issue #13)"
# alice and bob both write to acme/shared; bob learns the uuid of alice's upload.
push_blob acme/shared "$T/cfg.json" "${AA[@]}"
push_blob acme/shared "$T/cfg.json" "${BA[@]}"
pass "alice and bob may both push to acme/shared"
printf 'alice part one|' >"$T/one.bin"
printf 'alice part two' >"$T/two.bin"
cat "$T/one.bin" "$T/two.bin" >"$T/whole.bin"
req POST "$BASE/v2/acme/shared/blobs/uploads/" "${AA[@]}"
LOC="$(hdr Location)"
req PATCH "$BASE$LOC" "${AA[@]}" --data-binary "@$T/one.bin"
check_status "alice appends to her upload" 202
for m in PATCH GET DELETE; do
  req "$m" "$BASE$LOC" "${BA[@]}" --data-binary evil
  check_status "bob: $m of alice's upload is 404" 404
  check_eq "  ... BLOB_UPLOAD_UNKNOWN" BLOB_UPLOAD_UNKNOWN "$(oci_code)"
done
printf 'alice part one|evil' >"$T/evil.bin"
req PUT "$BASE$LOC?digest=$(sha "$T/evil.bin")" "${BA[@]}" --data-binary evil
check_status "bob: the final PUT of alice's upload is 404" 404
check_eq "  ... BLOB_UPLOAD_UNKNOWN" BLOB_UPLOAD_UNKNOWN "$(oci_code)"
req GET "$BASE$LOC" "${AA[@]}"
check_hdr "alice's upload still holds only her bytes" Range "0-$(($(wc -c <"$T/one.bin") - 1))"
req PUT "$BASE$LOC?digest=$(sha "$T/whole.bin")" "${AA[@]}" --data-binary "@$T/two.bin"
check_status "alice finishes her upload" 201
req GET "$BASE/v2/acme/shared/blobs/$(sha "$T/whole.bin")" "${BA[@]}"
check_eq "  ... and the blob is hers, byte for byte" "$(cat "$T/whole.bin")" "$(cat "$BODY")"
req GET "$BASE/v2/acme/shared/blobs/$(sha "$T/evil.bin")" "${BA[@]}"
check_status "  ... bob's version was never stored" 404

section "one user cannot take every upload slot"
# The per-user share (100) is below the process cap (1000): bob's 101st POST is refused
# while alice can still start uploads.
refused=""
for ((i = 1; i <= 101; i++)); do
  code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 -X POST "${BA[@]}" \
    "$BASE/v2/bob/b1/blobs/uploads/")"
  if [[ "$code" != 202 ]]; then refused="$i:$code"; break; fi
done
check_eq "bob's 101st open upload is refused with 429" "101:429" "$refused"
req POST "$BASE/v2/bob/b1/blobs/uploads/" "${BA[@]}"
check_eq "  ... TOOMANYREQUESTS" TOOMANYREQUESTS "$(oci_code)"
check_true "  ... with Retry-After" has_hdr Retry-After
req POST "$BASE/v2/alice/pub/blobs/uploads/" "${AA[@]}"
check_status "alice can still start an upload" 202

section "private content stays private"
for p in "blobs/$SECRET" "manifests/main" "tags/list" "referrers/$SECRET"; do
  req GET "$BASE/v2/alice/secret/$p" "${BA[@]}"
  check_status "bob: GET alice/secret/$p is 404" 404
  req GET "$BASE/v2/alice/secret/$p"
  check_status "anonymous: GET alice/secret/$p is 401" 401
done
req POST "$BASE/v2/bob/b1/blobs/uploads/?mount=$SECRET&from=alice/secret" "${BA[@]}"
# bob is at his upload cap: the refused mount must not link the blob either.
check_status "bob: mount from alice/secret is not 201" '202|429'
req GET "$BASE/v2/bob/b1/blobs/$SECRET" "${BA[@]}"
check_status "  ... and the blob is not in bob/b1" 404
req GET "$BASE/v2/alice/pub/blobs/$SECRET" "${AA[@]}"
check_status "a blob linked only to alice/secret is 404 in alice/pub" 404

section "manifests"
head -c $((4 * 1024 * 1024 + 1)) /dev/zero | tr '\0' ' ' >"$T/big.json"
req PUT "$BASE/v2/alice/pub/manifests/big" "${AA[@]}" \
  -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' --data-binary "@$T/big.json"
check_status "a manifest of 4 MiB + 1 is 413" 413
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"%s","size":2},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"%s","size":10}]}' \
  "$CFG" "$SECRET" >"$T/steal.json"
req PUT "$BASE/v2/alice/pub/manifests/steal" "${AA[@]}" \
  -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' --data-binary "@$T/steal.json"
check_status "a manifest referencing a blob of another repo is 400" 400
check_eq "  ... MANIFEST_BLOB_UNKNOWN" MANIFEST_BLOB_UNKNOWN "$(oci_code)"
req PUT "$BASE/v2/alice/pub/manifests/$(printf 'a%.0s' {1..129})" "${AA[@]}" \
  -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' --data-binary "@$T/steal.json"
check_status "a 129-character tag is 400" 400
check_eq "  ... TAG_INVALID" TAG_INVALID "$(oci_code)"

section "listings"
req GET "$BASE/v2/alice/pub/tags/list?n=99999999999" "${AA[@]}"
check_status "tags/list?n=99999999999 (past an int) lists everything" 200
check_eq "  ... the branch is listed" main "$(jbody '.tags[0]')"
req GET "$BASE/v2/alice/pub/tags/list?n=-1" "${AA[@]}"
check_status "tags/list?n=-1 is 400" 400
req GET "$BASE/v2/_catalog" "${BA[@]}"
check_false "bob's catalog does not list alice/secret" grep -q 'alice/secret' "$BODY"

section "tokens"
req GET "$BASE/v2/token?scope=repository:bob/b1:pull,push" "${BA[@]}"
TOKEN="$(jbody .token)"
[[ -n "$TOKEN" && "$TOKEN" != null ]] || die "no registry token" "$(exchange)"
req GET "$BASE/v2/bob/b1/tags/list" -H "Authorization: Bearer $TOKEN"
check_status "the registry token reads bob/b1" 200
req GET "$BASE/v2/alice/secret/tags/list" -H "Authorization: Bearer $TOKEN"
check_status "but not alice/secret" 401
req GET "$BASE/api/whoami-v2" -H "Authorization: Bearer $TOKEN"
check_status "a registry token is no hub token" 401
req GET "$BASE/v2/token?scope=repository:alice/secret:pull" "${BA[@]}"
GRANTS="$(jbody .token | python3 -c 'import base64, json, sys
p = sys.stdin.read().strip().split(".")[1]
print(len(json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))["access"]))')"
check_eq "bob's token request for alice/secret grants nothing" 0 "$GRANTS"

finish
