#!/usr/bin/env bash
# Issue #2, "Real input, end to end": the admin CLI makes a user and a token, the API makes
# a repo, real git + git-lfs push a local repository with several commits — a model card
# with YAML front matter, configs under a folder and a file name with spaces and non-ASCII
# characters, and two real models tracked by git-lfs:
#   tessdata/eng.traineddata     Debian tesseract-ocr-eng 1:4.1.0-2, 4,113,088 bytes,
#                                sha256 7d4322bd2a7749724879683fc3912cb542f19906c83bcc1a52132556427170b2
#   onnx/silero_vad_legacy.onnx  npm @ricky0123/vad-web 0.0.31, 1,807,522 bytes,
#                                sha256 a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28
# (fetched by scripts/fetch-inputs.sh into ${HANGAR_INPUTS:-~/.cache/hangar-inputs}).
# Then full and --depth 1 clones must give the same bytes and commits, the API must see the
# push, and private repos must need a token.
#
# Usage: git_lfs_e2e.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

fetch_inputs
info "model files: $TESS ($TESS_SIZE bytes) and $ONNX ($ONNX_SIZE bytes)"

section "setup: admin CLI, server"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice --email alice@example.org
ALICE="$(new_token alice --name laptop --role write)"
new_user bob --email bob@example.org
BOB="$(new_token bob --name bob-laptop --role write)"
pass "admin CLI created users alice, bob and hf_ tokens"
start_server "$DATA" || die "hangar serve did not start"
pass "server listening on $BASE"
HA="$(cred_helper alice "$ALICE")"
HB="$(cred_helper bob "$BOB")"

# ---------------------------------------------------------------------------------------
section "create alice/tiny-ocr through the API"
api_create "$ALICE" tiny-ocr alice model false
check_status "POST /api/repos/create alice/tiny-ocr -> 200" 200
check_json "create answer: url" .url "$BASE/alice/tiny-ocr"
req GET "$BASE/api/models/alice/tiny-ocr"
check_status "GET /api/models/alice/tiny-ocr -> 200" 200
INIT_SHA="$(jbody .sha)"
check_match "new repo has an initial commit (sha is 40-hex)" '^[0-9a-f]{40}$' "$INIT_SHA"
check_json_true "initial commit contains .gitattributes" 'any(.siblings[]?; .rfilename == ".gitattributes")'

# ---------------------------------------------------------------------------------------
section "push a local repo with several commits, odd names and LFS models"
W="$T/work"
if gitc "" clone -q "$BASE/alice/tiny-ocr" "$W" 2>"$T/clone0.err"; then
  pass "anonymous clone of the new public repo"
else
  die "git clone $BASE/alice/tiny-ocr" "$(brief "$T/clone0.err" 600)"
fi
check_eq "clone of the new repo is at the initial commit" "$INIT_SHA" "$(git -C "$W" rev-parse HEAD 2>&1)"
add_model_commits "$W" || die "building the local commits"
HEAD_SHA="$(git -C "$W" rev-parse HEAD)"
COUNT="$(git -C "$W" rev-list --count HEAD)"
info "local head $HEAD_SHA, $COUNT commits"

if gitc "" -C "$W" push -q origin main >"$T/push-anon.out" 2>&1; then
  fail "git push without credentials is refused" "push succeeded: $(tail -c 300 "$T/push-anon.out")"
else
  pass "git push without credentials is refused"
fi
req GET "$BASE/alice/tiny-ocr.git/info/refs?service=git-receive-pack"
check_status "GET info/refs?service=git-receive-pack without credentials -> 401" 401
check_hdr_match "  ... with a WWW-Authenticate: Basic challenge" WWW-Authenticate '^Basic'

if gitc "$HB" -C "$W" push -q origin main >"$T/push-bob.out" 2>&1; then
  fail "git push with another user's token (bob) is refused" "push succeeded"
else
  pass "git push with another user's token (bob) is refused"
fi
req GET "$BASE/alice/tiny-ocr.git/info/refs?service=git-receive-pack" -u "hf_user:$BOB"
check_status "receive-pack advertisement with bob's token -> 403" 403

if gitc "$HA" -C "$W" push origin main >"$T/push.out" 2>&1; then
  pass "git push (git-lfs uploads) with alice's token"
else
  fail "git push (git-lfs uploads) with alice's token" "$(brief "$T/push.out" 1500)"
fi
check_eq "ls-remote shows the pushed head" "$HEAD_SHA" \
  "$(gitc "" ls-remote "$BASE/alice/tiny-ocr" refs/heads/main 2>&1 | cut -f1)"

# ---------------------------------------------------------------------------------------
section "the API sees the push"
req GET "$BASE/api/models/alice/tiny-ocr"
check_status "GET /api/models/alice/tiny-ocr -> 200" 200
check_json "repo info sha == pushed head" .sha "$HEAD_SHA"
check_eq "siblings == files of the pushed tree" \
  "$(git -C "$W" ls-tree -r --name-only HEAD | sort | tr '\n' '|')" \
  "$(jbody '[.siblings[].rfilename] | sort | join("|")')|"
check_json "cardData.license from the README front matter" .cardData.license apache-2.0
check_json "cardData.tags from the README front matter" '.cardData.tags | join(",")' "ocr,tesseract"
check_json "cardData.library_name" .cardData.library_name tesseract
check_json "cardData.pipeline_tag" .cardData.pipeline_tag image-to-text
check_json "pipeline_tag (top level)" .pipeline_tag image-to-text
check_json "library_name (top level)" .library_name tesseract
check_json_true "tags (top level) include the card's tags" '(.tags // []) | (index("ocr") != null and index("tesseract") != null)'
check_match "lastModified is an ISO date ending in Z" 'Z$' "$(jbody .lastModified)"

TESS_PTR_OID="$(git -C "$W" rev-parse HEAD:tessdata/eng.traineddata)"
TESS_PTR_SIZE="$(git -C "$W" cat-file -s "$TESS_PTR_OID")"
CFG_OID="$(git -C "$W" rev-parse HEAD:config.json)"
CFG_SIZE="$(stat -c %s "$W/config.json")"
req GET "$BASE/api/models/alice/tiny-ocr?blobs=true"
check_status "GET /api/models/alice/tiny-ocr?blobs=true -> 200" 200
check_json "blobs=true: LFS sibling size is the object size" \
  '.siblings[] | select(.rfilename == "tessdata/eng.traineddata") | .size' "$TESS_SIZE"
check_json "blobs=true: LFS sibling blobId is the pointer's git blob id" \
  '.siblings[] | select(.rfilename == "tessdata/eng.traineddata") | .blobId' "$TESS_PTR_OID"
check_json "blobs=true: lfs {sha256, size, pointerSize}" \
  '.siblings[] | select(.rfilename == "tessdata/eng.traineddata") | .lfs | "\(.sha256) \(.size) \(.pointerSize)"' \
  "$TESS_SHA $TESS_SIZE $TESS_PTR_SIZE"
check_json "blobs=true: regular sibling size and blobId, no lfs" \
  '.siblings[] | select(.rfilename == "config.json") | "\(.size) \(.blobId) \(.lfs)"' "$CFG_SIZE $CFG_OID null"

req GET "$BASE/api/models/alice/tiny-ocr/revision/$INIT_SHA"
check_status "GET .../revision/<initial sha> -> 200" 200
check_json "revision/<initial sha>: sha and only .gitattributes" \
  '"\(.sha) \([.siblings[].rfilename] | join(","))"' "$INIT_SHA .gitattributes"

if get_all_pages "$BASE/api/models/alice/tiny-ocr/tree/main?recursive=true&expand=false"; then
  pass "GET .../tree/main?recursive=true (all pages: $PAGE_COUNT)"
else
  _fail_http "GET .../tree/main?recursive=true (all pages)"
fi
check_eq "recursive tree lists every file and directory of the pushed tree" \
  "$(git -C "$W" ls-tree -r -t --name-only HEAD | sort | tr '\n' '|')" \
  "$(pjq '[.[].path] | sort | join("|")')|"
check_eq "tree: LFS entry {type, size, oid, lfs.oid, lfs.size, lfs.pointerSize}" \
  "file $TESS_SIZE $TESS_PTR_OID $TESS_SHA $TESS_SIZE $TESS_PTR_SIZE" \
  "$(pjq '.[] | select(.path == "tessdata/eng.traineddata") | "\(.type) \(.size) \(.oid) \(.lfs.oid) \(.lfs.size) \(.lfs.pointerSize)"')"
check_eq "tree: directory with a space in its name" \
  "directory $(git -C "$W" rev-parse "HEAD:$NONASCII_DIR")" \
  "$(pjq '.[] | select(.path == "configs/my config") | "\(.type) \(.oid)"')"
check_eq "tree: non-ASCII file name, its oid and size" \
  "file $(git -C "$W" rev-parse "HEAD:$NONASCII_FILE") $(stat -c %s "$W/$NONASCII_FILE")" \
  "$(pjq '.[] | select(.path == "configs/my config/réglages ü.json") | "\(.type) \(.oid) \(.size)"')"

req GET "$BASE/api/models/alice/tiny-ocr/tree/main/configs/my%20config?recursive=false"
check_status "GET .../tree/main/configs/my%20config -> 200" 200
check_json "tree of the folder with a space lists the non-ASCII file" '[.[].path] | join("|")' "$NONASCII_FILE"

req GET "$BASE/alice/tiny-ocr/resolve/main/tessdata/eng.traineddata"
check_status "GET /alice/tiny-ocr/resolve/main/tessdata/eng.traineddata -> 200" 200
check_eq "resolve of the LFS file gives the real bytes (sha256)" "$TESS_SHA" "$(sha256_of "$BODY")"
check_hdr "resolve LFS: X-Linked-Etag = quoted sha256" X-Linked-Etag "\"$TESS_SHA\""
check_hdr "resolve LFS: ETag = quoted sha256" ETag "\"$TESS_SHA\""
check_hdr "resolve LFS: X-Linked-Size" X-Linked-Size "$TESS_SIZE"
check_hdr "resolve LFS: Content-Length" Content-Length "$TESS_SIZE"
check_hdr "resolve LFS: X-Repo-Commit = pushed head" X-Repo-Commit "$HEAD_SHA"

req GET "$BASE/alice/tiny-ocr/resolve/main/onnx/silero_vad_legacy.onnx"
check_status "GET .../resolve/main/onnx/silero_vad_legacy.onnx -> 200" 200
check_eq "resolve of the ONNX model gives the real bytes (sha256)" "$ONNX_SHA" "$(sha256_of "$BODY")"

req GET "$BASE/alice/tiny-ocr/resolve/main/$NONASCII_URL"
check_status "GET .../resolve/main/$NONASCII_URL -> 200" 200
check_true "resolve of the non-ASCII file gives its bytes" cmp -s "$BODY" "$W/$NONASCII_FILE"
check_hdr "resolve regular: ETag = quoted git blob id" ETag "\"$(git -C "$W" rev-parse "HEAD:$NONASCII_FILE")\""

req GET "$BASE/alice/tiny-ocr/raw/main/tessdata/eng.traineddata"
check_status "GET .../raw/main/tessdata/eng.traineddata -> 200" 200
check_true "raw of the LFS file is the pointer" cmp -s "$BODY" <(git -C "$W" cat-file blob "$TESS_PTR_OID")

if get_all_pages "$BASE/api/models/alice/tiny-ocr/commits/main"; then
  pass "GET .../commits/main (all pages: $PAGE_COUNT)"
else
  _fail_http "GET .../commits/main (all pages)"
fi
check_eq "commits list == git rev-list, newest first" \
  "$(git -C "$W" rev-list HEAD | tr '\n' ' ')" "$(pjq '[.[].id] | join(" ")') "
check_eq "first commit title" "Describe the files" "$(pjq '.[0].title')"
req GET "$BASE/api/models/alice/tiny-ocr/commits/main?limit=1"
check_hdr "X-Total-Count == commit count" X-Total-Count "$COUNT"

req GET "$BASE/api/models/alice/tiny-ocr/refs"
check_status "GET .../refs -> 200" 200
check_json "refs: main -> pushed head" '.branches[] | select(.name == "main") | .targetCommit' "$HEAD_SHA"

# ---------------------------------------------------------------------------------------
section "clone back: full, --depth 1, lfs pull"
C1="$T/clone-full"
if gitc "" clone -q "$BASE/alice/tiny-ocr" "$C1" >"$T/c1.out" 2>&1; then
  pass "anonymous full clone of the public repo"
else
  fail "anonymous full clone of the public repo" "$(brief "$T/c1.out" 800)"
fi
check_eq "full clone: HEAD == pushed head" "$HEAD_SHA" "$(git -C "$C1" rev-parse HEAD 2>&1)"
check_eq "full clone: commit count" "$COUNT" "$(git -C "$C1" rev-list --count HEAD 2>&1)"
check_true "full clone: every file byte for byte equal (diff -r)" diff -r --exclude=.git "$W" "$C1"
check_eq "full clone: eng.traineddata is the real model (smudged)" "$TESS_SHA" "$(sha256_of "$C1/tessdata/eng.traineddata" 2>&1)"
check_eq "full clone: ONNX model is the real model (smudged)" "$ONNX_SHA" "$(sha256_of "$C1/onnx/silero_vad_legacy.onnx" 2>&1)"

C2="$T/clone-shallow"
if gitc "" clone -q --depth 1 "$BASE/alice/tiny-ocr.git" "$C2" >"$T/c2.out" 2>&1; then
  pass "anonymous --depth 1 clone (URL with .git)"
else
  fail "anonymous --depth 1 clone (URL with .git)" "$(brief "$T/c2.out" 800)"
fi
check_eq "shallow clone: HEAD == pushed head" "$HEAD_SHA" "$(git -C "$C2" rev-parse HEAD 2>&1)"
check_eq "shallow clone: 1 commit" "1" "$(git -C "$C2" rev-list --count HEAD 2>&1)"
check_eq "shallow clone: is shallow" "true" "$(git -C "$C2" rev-parse --is-shallow-repository 2>&1)"
check_true "shallow clone: every file byte for byte equal (diff -r)" diff -r --exclude=.git "$W" "$C2"

C3="$T/clone-skip"
if GIT_LFS_SKIP_SMUDGE=1 gitc "" clone -q "$BASE/alice/tiny-ocr" "$C3" >"$T/c3.out" 2>&1; then
  pass "clone with GIT_LFS_SKIP_SMUDGE=1"
else
  fail "clone with GIT_LFS_SKIP_SMUDGE=1" "$(brief "$T/c3.out" 800)"
fi
check_eq "skip-smudge clone holds the pointer" "$TESS_PTR_SIZE" "$(stat -c %s "$C3/tessdata/eng.traineddata" 2>&1)"
if gitc "" -C "$C3" lfs pull >"$T/c3pull.out" 2>&1; then
  pass "git lfs pull (batch download)"
else
  fail "git lfs pull (batch download)" "$(brief "$T/c3pull.out" 800)"
fi
check_true "after git lfs pull: every file byte for byte equal" diff -r --exclude=.git "$W" "$C3"

# ---------------------------------------------------------------------------------------
section "private repo: needs a token"
api_create "$ALICE" secret-ocr alice model true
check_status "POST /api/repos/create alice/secret-ocr private -> 200" 200
P1="$T/priv-work"
if gitc "" clone -q "$BASE/alice/secret-ocr" "$T/priv-anon" >"$T/p0.out" 2>&1; then
  fail "anonymous clone of a private repo fails" "clone succeeded"
else
  pass "anonymous clone of a private repo fails"
fi
req GET "$BASE/alice/secret-ocr/info/refs?service=git-upload-pack"
check_status "anonymous info/refs of a private repo -> 401" 401
check_hdr_match "  ... with a WWW-Authenticate: Basic challenge" WWW-Authenticate '^Basic'
if gitc "$HB" clone -q "$BASE/alice/secret-ocr" "$T/priv-bob" >"$T/pb.out" 2>&1; then
  fail "clone of alice's private repo with bob's token fails" "clone succeeded"
else
  pass "clone of alice's private repo with bob's token fails"
fi
req GET "$BASE/alice/secret-ocr/info/refs?service=git-upload-pack" -u "hf_user:$BOB"
check_status "info/refs of a private repo with a token that cannot read it -> 404" 404

if gitc "$HA" clone -q "$BASE/alice/secret-ocr" "$P1" >"$T/p1.out" 2>&1; then
  pass "clone of the private repo with alice's token"
else
  die "clone of the private repo with alice's token" "$(brief "$T/p1.out" 800)"
fi
add_model_commits "$P1" || die "building the private repo's commits"
printf 'secret\n' >"$P1/SECRET.txt"
git -C "$P1" add SECRET.txt && git -C "$P1" commit -q -m "Add a secret"
PHEAD="$(git -C "$P1" rev-parse HEAD)"
if gitc "$HA" -C "$P1" push origin main >"$T/ppush.out" 2>&1; then
  pass "git push to the private repo with alice's token"
else
  fail "git push to the private repo with alice's token" "$(brief "$T/ppush.out" 1500)"
fi
P2="$T/priv-clone"
if gitc "$HA" clone -q "$BASE/alice/secret-ocr" "$P2" >"$T/p2.out" 2>&1; then
  pass "clone of the private repo with the token after the push"
else
  fail "clone of the private repo with the token after the push" "$(brief "$T/p2.out" 800)"
fi
check_eq "private clone: HEAD == pushed head" "$PHEAD" "$(git -C "$P2" rev-parse HEAD 2>&1)"
check_true "private clone: every file byte for byte equal (LFS smudged with the token)" \
  diff -r --exclude=.git "$P1" "$P2"

req GET "$BASE/api/models/alice/secret-ocr"
check_hf_error "anonymous repo info of a private repo -> RepoNotFound" '401|404' RepoNotFound
req GET "$BASE/api/models/alice/secret-ocr" -H "Authorization: Bearer $BOB"
check_hf_error "bob's repo info of alice's private repo -> 404 RepoNotFound" 404 RepoNotFound
req GET "$BASE/api/models/alice/secret-ocr" -H "Authorization: Bearer $ALICE"
check_status "alice's repo info of her private repo -> 200" 200
check_json "  ... private: true, sha == pushed head" '"\(.private) \(.sha)"' "true $PHEAD"
req GET "$BASE/alice/secret-ocr/resolve/main/tessdata/eng.traineddata"
check_hf_error "anonymous resolve in a private repo -> RepoNotFound" '401|404' RepoNotFound
req GET "$BASE/alice/secret-ocr/resolve/main/tessdata/eng.traineddata" -H "Authorization: Bearer $ALICE"
check_eq "alice's resolve of the LFS file in her private repo: real bytes" "200 $TESS_SHA" "$ST $(sha256_of "$BODY")"
req POST "$BASE/alice/secret-ocr.git/info/lfs/objects/batch" \
  -H 'Accept: application/vnd.git-lfs+json' -H 'Content-Type: application/vnd.git-lfs+json' \
  --data-binary "{\"operation\":\"download\",\"transfers\":[\"basic\"],\"objects\":[{\"oid\":\"$TESS_SHA\",\"size\":$TESS_SIZE}]}"
check_status "anonymous LFS batch download on a private repo -> 401/404" '401|404'
check_eq "  ... and no download action" "" "$(jbody '.objects[0].actions.download.href // empty')"

section "visibility flip: public repo made private, then public again"
req PUT "$BASE/api/models/alice/tiny-ocr/settings" -H "Authorization: Bearer $ALICE" \
  -H 'Content-Type: application/json' --data-binary '{"private": true}'
check_status "PUT .../settings {private: true} -> 200" 200
check_false "anonymous ls-remote of the now-private repo fails" \
  gitc "" ls-remote "$BASE/alice/tiny-ocr" >/dev/null 2>&1
req PUT "$BASE/api/models/alice/tiny-ocr/settings" -H "Authorization: Bearer $ALICE" \
  -H 'Content-Type: application/json' --data-binary '{"private": false}'
check_status "PUT .../settings {private: false} -> 200" 200
check_eq "anonymous ls-remote works again" "$HEAD_SHA" \
  "$(gitc "" ls-remote "$BASE/alice/tiny-ocr" refs/heads/main 2>&1 | cut -f1)"

# ---------------------------------------------------------------------------------------
section "dataset repo over /datasets/{ns}/{name}"
api_create "$ALICE" tiny-ds alice dataset false
check_status "POST /api/repos/create dataset alice/tiny-ds -> 200" 200
check_json "create answer: url has the datasets/ prefix" .url "$BASE/datasets/alice/tiny-ds"
D1="$T/ds-work"
if gitc "" clone -q "$BASE/datasets/alice/tiny-ds" "$D1" >"$T/d1.out" 2>&1; then
  pass "anonymous clone of /datasets/alice/tiny-ds"
  (
    cd "$D1" && printf 'id,text\n1,héllo wörld\n2,"a, b"\n' >data.csv &&
      git lfs track "*.onnx" >/dev/null && cp "$ONNX" model.onnx &&
      git add data.csv model.onnx .gitattributes && git commit -q -m "Add data"
  )
  if gitc "$HA" -C "$D1" push origin main >"$T/dpush.out" 2>&1; then
    pass "git push to the dataset repo"
  else
    fail "git push to the dataset repo" "$(brief "$T/dpush.out" 1500)"
  fi
  req GET "$BASE/api/datasets/alice/tiny-ds"
  check_json "GET /api/datasets/alice/tiny-ds sha == pushed head" .sha "$(git -C "$D1" rev-parse HEAD)"
  req GET "$BASE/datasets/alice/tiny-ds/resolve/main/data.csv"
  check_true "resolve of the dataset's CSV gives its bytes" cmp -s "$BODY" "$D1/data.csv"
  D2="$T/ds-clone"
  if gitc "" clone -q "$BASE/datasets/alice/tiny-ds.git" "$D2" >"$T/d2.out" 2>&1; then
    pass "anonymous clone of /datasets/alice/tiny-ds.git"
  else
    fail "anonymous clone of /datasets/alice/tiny-ds.git" "$(brief "$T/d2.out" 800)"
  fi
  check_true "dataset clone: every file byte for byte equal" diff -r --exclude=.git "$D1" "$D2"
else
  fail "anonymous clone of /datasets/alice/tiny-ds" "$(brief "$T/d1.out" 800)"
fi
req GET "$BASE/api/models/alice/tiny-ds"
check_hf_error "the dataset is not a model: /api/models/alice/tiny-ds -> 404 RepoNotFound" 404 RepoNotFound

# ---------------------------------------------------------------------------------------
section "shutdown"
stop_server
check_eq "SIGTERM: server exits 0" 0 "$SERVER_RC"

finish
