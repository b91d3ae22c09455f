#!/usr/bin/env bash
# Issue #3, first part: commits over HTTP (hf-api.md §7.1 preupload, §7.2 NDJSON commit).
# A raw-HTTP commit with every operation kind, checked through `git clone` and `git log`;
# bad input, each a clear 4xx that leaves the branch where it was; then the real JS client
# (tests/js/hf_upload.test.mjs): uploadFiles, deleteFile, downloadFile.
# Usage: hf_commit.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user cora
CORA="$(new_token cora --role write)"
new_user rex
REX="$(new_token rex --role read)"
start_server "$DATA" || die "hangar serve did not start"
HC="$(cred_helper cora "$CORA")"
AUTH=(-H "Authorization: Bearer $CORA")
ND=(-H 'Content-Type: application/x-ndjson')
must_create "$CORA" cm cora model false
API="$BASE/api/models/cora/cm"

# A file on a side branch pushed over git + LFS, so an LFS object is linked to the repo.
W="$T/w"
gitc "$HC" clone -q "$BASE/cora/cm" "$W" 2>"$T/c.err" || die "clone" "$(brief "$T/c.err" 500)"
head -c 200000 /dev/urandom >"$T/big.bin"
BIG_SHA="$(sha256_of "$T/big.bin")"
(cd "$W" && git checkout -q -b side && cp "$T/big.bin" big.bin && git lfs track big.bin >/dev/null &&
  git add -A && git commit -q -m side) || die "side commit"
gitc "$HC" -C "$W" push -q origin side >"$T/p.out" 2>&1 || die "push side" "$(brief "$T/p.out" 800)"
pass "pushed an LFS object on branch side"
gitc "$HC" -C "$W" checkout -q main
(cd "$W" && mkdir -p docs/old && echo keep >docs/keep.md && echo gone >docs/old/gone.txt &&
  echo bye >bye.txt && git add -A && git commit -q -m base) || die "base commit"
gitc "$HC" -C "$W" push -q origin main >"$T/p2.out" 2>&1 || die "push main" "$(brief "$T/p2.out" 800)"
HEAD0="$(git -C "$W" rev-parse HEAD)"

b64() { printf '%s' "$1" | base64 -w0; }
head_of() { git --git-dir="$DATA/repos/models/cora/cm.git" rev-parse "${1:-main}"; }

section "preupload (§7.1)"
SAMPLE_TXT="$(b64 'hello')"
SAMPLE_BIN="$(printf 'a\0b' | base64 -w0)"
req POST "$API/preupload/main" "${AUTH[@]}" -H 'Content-Type: application/json' --data-binary \
  "{\"files\":[{\"path\":\"docs/keep.md\",\"size\":5,\"sample\":\"$SAMPLE_TXT\"},
               {\"path\":\"w/model.safetensors\",\"size\":5,\"sample\":\"$SAMPLE_TXT\"},
               {\"path\":\"x.dat\",\"size\":3,\"sample\":\"$SAMPLE_BIN\"},
               {\"path\":\"huge.txt\",\"size\":20000000,\"sample\":\"$SAMPLE_TXT\"}]}"
check_status "preupload → 200" 200
check_json "  text file is regular" '.files[0].uploadMode' regular
check_json "  existing file has its blob oid" '.files[0].oid' "$(git -C "$W" rev-parse HEAD:docs/keep.md)"
check_json "  *.safetensors is lfs (.gitattributes)" '.files[1].uploadMode' lfs
check_json "  new file has no oid" '.files[1].oid' null
check_json "  NUL in the sample → lfs" '.files[2].uploadMode' lfs
check_json "  20 MB → lfs" '.files[3].uploadMode' lfs
check_json "  shouldIgnore false" '.files[0].shouldIgnore' false
req POST "$API/preupload/main" -H "Authorization: Bearer $REX" -H 'Content-Type: application/json' \
  --data-binary '{"files":[]}'
check_hf_error "preupload with a read token → 403" 403 Forbidden

section "commit with every operation kind (§7.2)"
{
  echo '{"key":"header","value":{"summary":"HTTP commit","description":"all kinds"}}'
  echo "{\"key\":\"file\",\"value\":{\"path\":\"new/deep/hello.txt\",\"content\":\"$(b64 'hello world')\",\"encoding\":\"base64\"}}"
  echo "{\"key\":\"file\",\"value\":{\"path\":\"docs/keep.md\",\"content\":\"$(b64 'changed')\",\"encoding\":\"base64\"}}"
  echo "{\"key\":\"lfsFile\",\"value\":{\"path\":\"weights/copy.bin\",\"algo\":\"sha256\",\"oid\":\"$BIG_SHA\",\"size\":200000}}"
  echo '{"key":"deletedFile","value":{"path":"bye.txt"}}'
  printf '%s' '{"key":"deletedFolder","value":{"path":"docs/old/"}}'
} >"$T/commit.ndjson"
req POST "$API/commit/main" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/commit.ndjson"
check_status "commit (no trailing newline) → 200" 200
check_json "  success" .success true
C1="$(jbody .commitOid)"
check_match "  commitOid is 40 hex" '^[0-9a-f]{40}$' "$C1"
check_json "  commitUrl" .commitUrl "$BASE/cora/cm/commit/$C1"
check_eq "  branch main moved to it" "$C1" "$(head_of)"
gitc "$HC" clone -q "$BASE/cora/cm" "$T/clone" 2>"$T/c2.err" || fail "clone after commit" "$(brief "$T/c2.err" 500)"
check_eq "  files after the commit" "$(printf '.gitattributes\ndocs/keep.md\nnew/deep/hello.txt\nweights/copy.bin')" \
  "$(git -C "$T/clone" ls-files)"
check_eq "  new/deep/hello.txt" "hello world" "$(cat "$T/clone/new/deep/hello.txt")"
check_eq "  docs/keep.md replaced" "changed" "$(cat "$T/clone/docs/keep.md")"
check_eq "  LFS file smudged to the object" "$BIG_SHA" "$(sha256_of "$T/clone/weights/copy.bin")"
check_eq "  log: message, parent, author" \
  "HTTP commit|all kinds|$HEAD0|cora|cora@users.noreply.hangar|cora" \
  "$(git -C "$T/clone" log -1 --format='%s|%b|%P|%an|%ae|%cn' | head -c 300 | tr -d '\n')"
req GET "$API"
check_json "  repo info sha follows" .sha "$C1"

section "parentCommit"
printf '{"key":"header","value":{"summary":"with parent","parentCommit":"%s"}}\n{"key":"file","value":{"path":"p.txt","content":"%s","encoding":"base64"}}\n' \
  "$C1" "$(b64 p)" >"$T/p.ndjson"
req POST "$API/commit/main" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/p.ndjson"
check_status "commit with the current parentCommit → 200" 200
C2="$(jbody .commitOid)"
req POST "$API/commit/main" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/p.ndjson"
check_hf_error "stale parentCommit → 412" 412 "?"
check_eq "  main unchanged" "$C2" "$(head_of)"

section "copyFile (Hangar extension)"
printf '%s\n' '{"key":"header","value":{"summary":"copies"}}' \
  '{"key":"copyFile","value":{"path":"copies/weights.bin","srcPath":"weights/copy.bin"}}' \
  "{\"key\":\"copyFile\",\"value\":{\"path\":\"copies/old-bye.txt\",\"srcPath\":\"bye.txt\",\"srcRevision\":\"$HEAD0\"}}" \
  '{"key":"copyFile","value":{"path":"copies/p.txt","srcPath":"p.txt"}}' >"$T/copy.ndjson"
req POST "$API/commit/main" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/copy.ndjson"
check_status "copyFile of an LFS file, an old revision's file and a regular file → 200" 200
C3="$(jbody .commitOid)"
GDC="$DATA/repos/models/cora/cm.git"
check_eq "  the LFS pointer is shared, not re-uploaded" \
  "$(git --git-dir="$GDC" rev-parse "$C3:weights/copy.bin")" "$(git --git-dir="$GDC" rev-parse "$C3:copies/weights.bin")"
check_eq "  the old revision's file (deleted on main)" "bye" "$(git --git-dir="$GDC" cat-file -p "$C3:copies/old-bye.txt")"
check_eq "  the regular file" "p" "$(git --git-dir="$GDC" cat-file -p "$C3:copies/p.txt")"
curl -sS -o "$T/copied.bin" "$BASE/cora/cm/resolve/main/copies/weights.bin"
check_eq "  /resolve serves the copied LFS file" "$BIG_SHA" "$(sha256_of "$T/copied.bin")"
C2="$C3"

section "bad input: a 4xx and the branch unchanged"
git --git-dir="$DATA/repos/models/cora/cm.git" tag v1 main
HDR='{"key":"header","value":{"summary":"bad"}}'
FILE="{\"key\":\"file\",\"value\":{\"path\":\"ok.txt\",\"content\":\"$(b64 ok)\",\"encoding\":\"base64\"}}"
bad() {  # bad DESC STATUS CODE BODY [REV]
  printf '%s' "$4" >"$T/bad.ndjson"
  req POST "$API/commit/${5:-main}" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/bad.ndjson"
  check_hf_error "$1 → $2" "$2" "$3"
  check_eq "  main unchanged" "$C2" "$(head_of)"
}
bad "malformed NDJSON" 400 BadRequest "$HDR"$'\n''{"key":"file",'
bad "unknown key" 400 BadRequest "$HDR"$'\n''{"key":"bogus","value":{"path":"a"}}'
bad "missing header" 400 BadRequest "$FILE"
bad "empty body" 400 BadRequest ""
bad "invalid base64" 400 BadRequest "$HDR"$'\n''{"key":"file","value":{"path":"a.txt","content":"@@@=","encoding":"base64"}}'
bad "path with .." 400 BadRequest "$HDR"$'\n''{"key":"file","value":{"path":"../a","content":"","encoding":"base64"}}'
bad "path both file and folder" 400 BadRequest "$HDR"$'\n'"{\"key\":\"file\",\"value\":{\"path\":\"p.txt/x\",\"content\":\"$(b64 x)\",\"encoding\":\"base64\"}}"
bad "delete a missing file" 404 EntryNotFound "$HDR"$'\n''{"key":"deletedFile","value":{"path":"nope.txt"}}'
bad "LFS object never uploaded" 422 "?" "$HDR"$'\n'"{\"key\":\"lfsFile\",\"value\":{\"path\":\"l.bin\",\"algo\":\"sha256\",\"oid\":\"$(printf x | sha256sum | cut -c1-64)\",\"size\":1}}"
bad "LFS object with another size" 422 "?" "$HDR"$'\n'"{\"key\":\"lfsFile\",\"value\":{\"path\":\"l.bin\",\"algo\":\"sha256\",\"oid\":\"$BIG_SHA\",\"size\":5}}"
bad "copyFile of a missing file" 404 EntryNotFound "$HDR"$'\n''{"key":"copyFile","value":{"path":"c.txt","srcPath":"nope.txt"}}'
bad "copyFile from an unknown revision" 404 RevisionNotFound "$HDR"$'\n''{"key":"copyFile","value":{"path":"c.txt","srcPath":"p.txt","srcRevision":"nope"}}'
bad "copyFile without srcPath" 400 BadRequest "$HDR"$'\n''{"key":"copyFile","value":{"path":"c.txt"}}'
bad "copyFile of a folder" 404 EntryNotFound "$HDR"$'\n''{"key":"copyFile","value":{"path":"c","srcPath":"new"}}'
bad "commit to a tag" 404 RevisionNotFound "$HDR"$'\n'"$FILE" v1
bad "commit to an unknown branch" 404 RevisionNotFound "$HDR"$'\n'"$FILE" nope
head -c $((65 * 1024 * 1024)) /dev/zero >"$T/huge.ndjson"
req POST "$API/commit/main" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/huge.ndjson"
check_hf_error "body over 64 MiB → 413" 413 "?"
rm -f "$T/huge.ndjson"
printf '%s\n%s\n' "$HDR" "$FILE" >"$T/ok.ndjson"
req POST "$API/commit/main" -H "Authorization: Bearer $REX" "${ND[@]}" --data-binary @"$T/ok.ndjson"
check_hf_error "read token → 403" 403 Forbidden
req POST "$API/commit/main" "${ND[@]}" --data-binary @"$T/ok.ndjson"
check_hf_error "anonymous → 401" 401 "?"
check_eq "  main unchanged" "$C2" "$(head_of)"

section "node --test tests/js/hf_upload.test.mjs"
JS_DIR="$REPO_ROOT/tests/js"
if [[ ! -d "$JS_DIR/node_modules/@huggingface/hub" ]]; then
  (cd "$JS_DIR" && npm ci --silent >"$T/npm.out" 2>&1) || die "npm ci failed" "$(brief "$T/npm.out" 500)"
fi
must_create "$CORA" js-up cora model false
(cd "$JS_DIR" && HANGAR_URL="$BASE" HANGAR_TOKEN="$CORA" HANGAR_REPO="cora/js-up" HANGAR_TMP="$T" \
  node --test --test-reporter=tap hf_upload.test.mjs) >"$T/node.out" 2>&1
NODE_RC=$?
while IFS= read -r line; do
  if [[ "$line" =~ ^[[:space:]]*(not\ )?ok\ [0-9]+\ -\ (.*)$ ]]; then
    name="${BASH_REMATCH[2]}"
    [[ "$name" == *"hf_upload.test.mjs"* ]] && continue
    if [[ -n "${BASH_REMATCH[1]}" ]]; then fail "js: $name" "$(grep -A25 -F "not ok" "$T/node.out" | head -c 2500)"
    else pass "js: $name"; fi
  fi
done <"$T/node.out"
if ((NODE_RC != 0)) && ((FAILED == 0)); then fail "node --test exited $NODE_RC" "$(tail -c 1500 "$T/node.out")"; fi
gitc "$HC" clone -q "$BASE/cora/js-up" "$T/js-clone" 2>"$T/jsc.err" || fail "clone js-up" "$(brief "$T/jsc.err" 500)"
check_true "  git clone (git-lfs) has the 24 MiB file byte for byte" cmp -s "$T/js-random.bin" "$T/js-clone/data/random.bin"
check_eq "  it is an LFS file in git" "$(sha256_of "$T/js-random.bin")" \
  "$(git -C "$T/js-clone" cat-file -p HEAD:data/random.bin | sed -n 's/^oid sha256://p')"
check_false "  the deleted file is gone" test -e "$T/js-clone/notes/hello.txt"
check_true "  it was there one commit earlier, byte for byte" \
  cmp -s "$T/js-small.txt" <(git -C "$T/js-clone" show HEAD~1:notes/hello.txt)
check_eq "  git log: messages, authors, committers (newest first)" \
  "js: delete hello|cora <cora@users.noreply.hangar>|cora;js: add hello and random|cora <cora@users.noreply.hangar>|cora" \
  "$(git -C "$T/js-clone" log -2 --format='%s|%an <%ae>|%cn' | paste -sd';')"
check_eq "  parents chain: delete ← upload ← the repo's first commit" \
  "$(git -C "$T/js-clone" rev-parse HEAD~1) $(git -C "$T/js-clone" rev-parse HEAD~2)" \
  "$(git -C "$T/js-clone" log -2 --format=%P | paste -sd' ')"
check_eq "  three commits in all" 3 "$(git -C "$T/js-clone" rev-list --count HEAD)"

section "Python's copy of an LFS file: an lfsFile line without size (§7.5 Copies)"
printf '{"key":"header","value":{"summary":"copy"}}\n{"key":"lfsFile","value":{"path":"weights/copy2.bin","algo":"sha256","oid":"%s"}}\n' \
  "$BIG_SHA" >"$T/copy.ndjson"
req POST "$API/commit/main" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/copy.ndjson"
check_status "commit → 200" 200
req GET "$BASE/cora/cm/resolve/main/weights/copy2.bin"
check_status "  the copy resolves" 200
check_eq "  to the same object" "$BIG_SHA" "$(sha256_of "$BODY")"
check_hdr "  with the object's size" X-Linked-Size 200000

section "shutdown"
stop_server
check_eq "SIGTERM: server exits 0" 0 "$SERVER_RC"

finish
