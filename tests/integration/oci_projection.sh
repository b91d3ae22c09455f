#!/usr/bin/env bash
# Issue #5 point 3 (oci.md §11–12, docs/oci-projection.md): every hub repo revision is an
# OCI model artifact. A model repo pushed with git + git-lfs (real model files, a card,
# config.json, code, nested and non-ASCII paths) is pulled with skopeo by branch, tag and
# commit sha, and every layer is compared byte for byte with a git clone + git lfs pull of
# the same revision (layers mapped to paths by their title annotation). Digests are stable
# over GETs and across a restart; unknown revisions are MANIFEST_UNKNOWN; a private repo
# needs credentials.
# Usage: oci_projection.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

command -v skopeo >/dev/null || die "skopeo is not installed"

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice
ALICE="$(new_token alice --role write)"
HA="$(cred_helper alice "$ALICE")"
fetch_inputs
# The source annotation holds server.public_url, so the digest is stable across a restart
# only with a fixed public_url: take a free port from a first start, then serve on it.
start_server "$DATA" || die "hangar serve did not start"
FIXED_PORT="$PORT"
stop_server || die "first server did not stop" "rc $SERVER_RC"
serve_fixed() {
  launch_server "$HANGAR_BIN" serve --data-dir "$DATA" --listen "127.0.0.1:$FIXED_PORT" \
    --public-url "http://127.0.0.1:$FIXED_PORT"
}
serve_fixed || die "hangar serve on 127.0.0.1:$FIXED_PORT did not start"
HOSTPORT="127.0.0.1:$PORT"
cat >"$T/policy.json" <<'EOF'
{"default": [{"type": "insecureAcceptAnything"}]}
EOF
export REGISTRY_AUTH_FILE="$T/no-auth.json"  # never the account's own registry logins
SKOPEO=(skopeo --policy "$T/policy.json" copy -q --src-tls-verify=false)
MANIFEST_ACCEPT=(-H 'Accept: application/vnd.oci.image.manifest.v1+json')

# push_model NAME PRIVATE: creates alice/NAME, pushes the model commits plus code and a
# nested directory, tags v1.0 (annotated) one commit before the head. Sets W (work tree).
push_model() {
  must_create "$ALICE" "$1" alice model "$2"
  W="$T/work-$1"
  gitc "$HA" clone -q "$BASE/alice/$1" "$W" >"$T/clone-$1.out" 2>&1 ||
    die "git clone $BASE/alice/$1" "$(brief "$T/clone-$1.out")"
  add_model_commits "$W" || die "building the commits of $1"
  (
    set -e
    cd "$W"
    git tag -a v1.0 -m "release 1.0" HEAD
    mkdir -p src/pkg/deep
    printf 'import sys\nprint(sys.argv)\n' >src/pkg/infer.py
    printf 'leaf\n' >src/pkg/deep/leaf.txt
    git add src && git commit -q -m "Add code"
  ) || die "adding code to $1"
  gitc "$HA" -C "$W" push -q origin main v1.0 >"$T/push-$1.out" 2>&1 ||
    die "git push of $1" "$(brief "$T/push-$1.out" 1200)"
}

# checkout_rev REV: a clone of $W's origin (one per repo, reused) checked out at REV with
# its LFS files pulled; sets WT.
checkout_rev() {
  local url
  url="$(git -C "$W" remote get-url origin)"
  WT="$T/wt-$(basename "$url")"
  if [[ ! -d "$WT" ]]; then
    gitc "$HA" clone -q "$url" "$WT" >"$T/wt.out" 2>&1 || die "git clone $url" "$(brief "$T/wt.out")"
  fi
  gitc "$HA" -C "$WT" checkout -q "$1" >>"$T/wt.out" 2>&1 &&
    gitc "$HA" -C "$WT" lfs pull >>"$T/wt.out" 2>&1 &&
    [[ "$(git -C "$WT" status --porcelain)" == "" ]] ||
    die "git checkout + lfs pull at $1" "$(brief "$T/wt.out")"
}

# check_layout DESC OCI_DIR REV: the image in OCI_DIR (skopeo oci: layout) has one layer per
# file of REV, each byte-identical to the file at its title path in a checkout of REV.
check_layout() {
  local desc="$1" dir="$2" rev="$3"
  checkout_rev "$rev"
  local mdigest mf
  mdigest="$(jq -r '.manifests[0].digest' "$dir/index.json" 2>/dev/null)"
  mf="$dir/blobs/sha256/${mdigest#sha256:}"
  if [[ ! -f "$mf" ]]; then fail "$desc: skopeo wrote a manifest" "index: $(head -c 300 "$dir/index.json")"; return; fi
  LAST_MANIFEST_DIGEST="$mdigest"
  local bad=() n=0 digest title
  while IFS=$'\t' read -r digest title; do
    n=$((n + 1))
    if ! cmp -s "$dir/blobs/sha256/${digest#sha256:}" "$WT/$title"; then bad+=("layer '$title' ($digest) differs from the checkout"); fi
  done < <(jq -r '.layers[] | [.digest, .annotations["org.opencontainers.image.title"]] | @tsv' "$mf")
  local want got
  want="$(git -C "$WT" ls-tree -r -z --name-only HEAD | tr '\0' '\n' | LC_ALL=C sort)"
  got="$(jq -r '.layers[].annotations["org.opencontainers.image.title"]' "$mf" | LC_ALL=C sort)"
  [[ "$want" == "$got" ]] || bad+=("titles are not the revision's files" "want: $(echo $want)" "got:  $(echo $got)")
  [[ "$(jq -r .artifactType "$mf")" == application/vnd.cncf.model.manifest.v1+json ]] || bad+=("artifactType $(jq -r .artifactType "$mf")")
  [[ "$(jq -r .annotations[\"org.opencontainers.image.revision\"] "$mf")" == "$(git -C "$WT" rev-parse HEAD)" ]] || bad+=("revision annotation is not the commit")
  if ((${#bad[@]} == 0 && n > 0)); then pass "$desc: $n layers byte-identical to git clone + lfs pull"; else fail "$desc" "${bad[@]}" "layers: $n"; fi
}

push_model tiny-ocr false
HEAD_SHA="$(git -C "$W" rev-parse HEAD)"
V1_SHA="$(git -C "$W" rev-parse 'v1.0^{commit}')"
info "pushed alice/tiny-ocr: main $HEAD_SHA, v1.0 $V1_SHA"

section "pull a public repo revision anonymously with skopeo"
for ref in main v1.0 "$HEAD_SHA"; do
  out="$T/oci-${ref:0:12}"
  if "${SKOPEO[@]}" "docker://$HOSTPORT/alice/tiny-ocr:$ref" "oci:$out:x" >"$T/skopeo.out" 2>&1; then
    pass "skopeo copy docker://…/alice/tiny-ocr:${ref:0:12} oci:DIR"
    check_layout "  ${ref:0:12}" "$out" "$ref"
  else
    fail "skopeo copy docker://…/alice/tiny-ocr:${ref:0:12} oci:DIR" "$(brief "$T/skopeo.out")"
  fi
done
MAIN_DIGEST="$(jq -r '.manifests[0].digest' "$T/oci-main/index.json" 2>/dev/null)"
SHA_DIGEST="$(jq -r '.manifests[0].digest' "$T/oci-${HEAD_SHA:0:12}/index.json" 2>/dev/null)"
check_eq "main and its commit sha give the same manifest digest" "$MAIN_DIGEST" "$SHA_DIGEST"

section "the manifest over HTTP"
req GET "$BASE/v2/alice/tiny-ocr/manifests/main" "${MANIFEST_ACCEPT[@]}"
check_status "GET manifests/main → 200" 200
check_hdr "  Docker-Content-Digest is skopeo's" Docker-Content-Digest "$MAIN_DIGEST"
check_hdr "  Content-Type is the OCI manifest type" Content-Type application/vnd.oci.image.manifest.v1+json
check_eq "  body hashes to the digest" "${MAIN_DIGEST#sha256:}" "$(sha256_of "$BODY")"
check_json "  LFS layer digest is the LFS oid" \
  '.layers[] | select(.annotations["org.opencontainers.image.title"] == "tessdata/eng.traineddata") | .digest' \
  "sha256:$TESS_SHA"
check_json "  weights are ModelPack weight layers" \
  '.layers[] | select(.annotations["org.cncf.model.filepath"] == "onnx/silero_vad_legacy.onnx") | .mediaType' \
  application/vnd.cncf.model.weight.v1.raw
check_json "  an unrecognised LFS file is a guessed weight" \
  '.layers[] | select(.annotations["org.cncf.model.filepath"] == "tessdata/eng.traineddata") | [.mediaType, .annotations["org.cncf.model.file.mediatype.untested"]] | join(" ")' \
  "application/vnd.cncf.model.weight.v1.raw true"
check_json "  source annotation names the repo" '.annotations["org.opencontainers.image.source"]' "$BASE/alice/tiny-ocr"
cp "$BODY" "$T/main.json"
CONFIG_DIGEST="$(jq -r .config.digest "$T/main.json")"
PY_DIGEST="$(jq -r '.layers[] | select(.annotations["org.opencontainers.image.title"] == "src/pkg/infer.py") | .digest' "$T/main.json")"
req GET "$BASE/v2/alice/tiny-ocr/manifests/main" "${MANIFEST_ACCEPT[@]}"
check_hdr "second GET: same digest" Docker-Content-Digest "$MAIN_DIGEST"
check_eq "  same bytes" "$(sha256_of "$T/main.json")" "$(sha256_of "$BODY")"
req GET "$BASE/v2/alice/tiny-ocr/manifests/$MAIN_DIGEST" "${MANIFEST_ACCEPT[@]}"
check_status "GET by digest → 200 (stored as a manifest row)" 200
req GET "$BASE/v2/alice/tiny-ocr/blobs/$CONFIG_DIGEST"
check_status "GET the config blob → 200" 200
check_json "  config revision is the commit" .descriptor.revision "$HEAD_SHA"
check_json "  licenses from the card" '.descriptor.licenses | join(",")' apache-2.0
check_json "  family from config.json's model_type" .descriptor.family tesseract
req GET "$BASE/v2/alice/tiny-ocr/blobs/$PY_DIGEST" -H 'Range: bytes=7-9'
check_status "GET a small git file's blob with Range → 206" 206
check_eq "  the window's bytes" "sys" "$(cat "$BODY")"
req GET "$BASE/v2/alice/tiny-ocr/tags/list"
check_json_true "tags/list includes main and v1.0" '(.tags | index("main")) != null and (.tags | index("v1.0")) != null'

section "unknown revisions"
for ref in nope HEAD "${HEAD_SHA:0:12}" "$(printf 'a%.0s' {1..40})"; do
  req GET "$BASE/v2/alice/tiny-ocr/manifests/$ref" "${MANIFEST_ACCEPT[@]}"
  check_status "GET manifests/${ref:0:12} → 404" 404
  check_json "  MANIFEST_UNKNOWN" '.errors[0].code' MANIFEST_UNKNOWN
done

section "a private repo"
push_model secret-ocr true
PRIV_SHA="$(git -C "$W" rev-parse HEAD)"
req GET "$BASE/v2/alice/secret-ocr/manifests/main" "${MANIFEST_ACCEPT[@]}"
check_status "anonymous GET of a private repo's revision → 401" 401
check_json "  UNAUTHORIZED" '.errors[0].code' UNAUTHORIZED
if "${SKOPEO[@]}" "docker://$HOSTPORT/alice/secret-ocr:main" "oci:$T/oci-anon:x" >"$T/skopeo-anon.out" 2>&1; then
  fail "anonymous skopeo copy of the private repo is refused" "it succeeded"
else
  pass "anonymous skopeo copy of the private repo is refused"
fi
if "${SKOPEO[@]}" --src-creds "alice:$ALICE" "docker://$HOSTPORT/alice/secret-ocr:main" \
    "oci:$T/oci-priv:x" >"$T/skopeo-priv.out" 2>&1; then
  pass "skopeo copy --src-creds of the private repo"
  check_layout "  private main" "$T/oci-priv" "$PRIV_SHA"
else
  fail "skopeo copy --src-creds of the private repo" "$(brief "$T/skopeo-priv.out")"
fi

section "stable across a restart"
stop_server || fail "server stopped cleanly" "rc $SERVER_RC"
serve_fixed || die "hangar serve did not restart"
req GET "$BASE/v2/alice/tiny-ocr/manifests/main" "${MANIFEST_ACCEPT[@]}"
check_status "GET manifests/main after a restart → 200" 200
check_hdr "  same digest as before the restart" Docker-Content-Digest "$MAIN_DIGEST"
req GET "$BASE/v2/alice/tiny-ocr/blobs/$PY_DIGEST"
check_status "  the small git file's blob is still served" 200

finish
