#!/usr/bin/env bash
# Issue 18 §4: mirrors (docs/mirrors.md), with real git and git-lfs.
#   - A pull mirror of a local upstream with LFS files (under [mirrors] local_roots): made
#     through the API, its LFS files served by the hub after the first sync; a push upstream
#     (a new commit with a new LFS file, a deleted branch, a new tag) is followed by one
#     sync; a push to the mirror is refused; an unreachable upstream shows its error on the
#     API and the repo page and the mirror keeps its last good state, until the upstream is
#     back.
#   - A pull mirror of a private repo over HTTP (the hub's own, 127.0.0.1 allowed) with a
#     credential: LFS through the upstream's batch API; the credential never shown back.
#   - A push mirror to a local bare repository receives each push, LFS objects included.
#   - The schedule: a mirror with a 2 s interval follows its upstream with no request.
#   - Bad input: a path outside the roots (plainly, through "..", through a symlink), an
#     ext:: transport, a cloud-metadata address, unknown fields, a too-short interval, a
#     non-admin adding a push mirror — each refused with a clear message, nothing created.
# Usage: mirrors.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

DATA="$T/data"
ROOTS="$T/roots"
mkdir -p "$DATA" "$ROOTS" "$T/elsewhere"
new_user alice --email alice@example.org
ALICE="$(new_token alice --name laptop --role write)"
new_user bob --email bob@example.org
BOB="$(new_token bob --name bob-laptop --role write)"
HA="$(cred_helper alice "$ALICE")"
HANGAR_MIRRORS_LOCAL_ROOTS="$ROOTS" HANGAR_IMPORT_ALLOW_PRIVATE_HOSTS=127.0.0.1 \
  HANGAR_MIRRORS_MIN_INTERVAL_S=1 HANGAR_MIRRORS_TICK_S=1 start_server "$DATA" ||
  die "hangar serve did not start"
pass "server listening on $BASE"
AUTH=(-H "Authorization: Bearer $ALICE")
JSON=(-H 'Content-Type: application/json')

sha_of() { sha256sum "$1" | cut -d' ' -f1; }
# refs NAME_OR_URL: the branches and tags of a repository as "sha ref" lines.
refs() { gitc "$HA" ls-remote --heads --tags "$1" 2>/dev/null | sort; }
# mirror_field REPO_PATH JQ: a field of the repo's pull mirror, as alice sees it.
mirror_field() {
  curl -s "${AUTH[@]}" "$BASE/api/models/$1/mirrors" | jq -r "map(select(.direction == \"pull\"))[0] | $2"
}
# sync REPO_PATH: asks for a sync now and waits (60 s at most) until one more ended.
sync() {
  local before
  before="$(mirror_field "$1" .lastSyncAt)"
  sleep 1.1  # lastSyncAt counts seconds: the next sync ends in a later one
  req POST "$BASE/api/models/$1/mirrors/sync" "${AUTH[@]}"
  [[ "$ST" == 202 ]] || return 1
  wait_until 60 bash -c "[[ \"\$(curl -s -H 'Authorization: Bearer $ALICE' '$BASE/api/models/$1/mirrors' | jq -r 'map(select(.direction == \"pull\"))[0].lastSyncAt')\" != '$before' ]]"
}

# ---------------------------------------------------------------------------------------
section "a local upstream with LFS files"
UP="$ROOTS/upstream"
(
  set -e
  git init -q "$UP"
  cd "$UP"
  git lfs install --local >/dev/null
  git lfs track '*.bin' >/dev/null
  head -c 1048576 /dev/urandom >weights.bin
  printf -- '---\nlicense: mit\n---\n# Upstream\n' >README.md
  git add -A && git commit -qm "weights"
  git tag v1
  git checkout -q -b dev
  echo dev >dev.txt && git add dev.txt && git commit -qm dev
  git checkout -q main
) >"$T/up.out" 2>&1 || die "building the upstream" "$(brief "$T/up.out")"
W1="$(sha_of "$UP/weights.bin")"
check_true "the upstream stores weights.bin with git-lfs" test -n "$(git -C "$UP" lfs ls-files)"

section "a pull mirror of it, through the API"
req POST "$BASE/api/repos/mirror" "${AUTH[@]}" "${JSON[@]}" \
  --data-binary "$(jq -cn --arg u "$UP" '{name: "alice/m1", url: $u}')"
check_status "POST /api/repos/mirror -> 201" 201
check_json "answer: the new repo" .id alice/m1
check_json "answer: a pull mirror" .mirror.direction pull
check_json "answer: the default schedule" .mirror.intervalSeconds 3600
check_true "the first sync succeeds" wait_until 60 bash -c \
  "[[ \"\$(curl -s -H 'Authorization: Bearer $ALICE' '$BASE/api/models/alice/m1/mirrors' | jq -r '.[0].lastSuccessAt')\" != null ]]"
check_eq "branches and tags are the upstream's" "$(refs "$UP")" "$(refs "$BASE/alice/m1")"
req GET "$BASE/alice/m1/resolve/main/weights.bin" "${AUTH[@]}"
check_status "the LFS file resolves on the mirror" 200
check_eq "its bytes are the upstream's" "$W1" "$(sha_of "$BODY")"
gitc "$HA" clone -q "$BASE/alice/m1" "$T/m1-clone" 2>"$T/clone.err"
check_eq "git-lfs clones the mirror with the file's bytes" "$W1" "$(sha_of "$T/m1-clone/weights.bin" 2>/dev/null)"
req GET "$BASE/api/models/alice/m1"
check_json "model info: the card of the upstream" .cardData.license mit
req GET "$BASE/api/models/alice/m1/mirrors"
check_json "an anonymous reader sees the mirror, not the server's path" '.[0].url' "(a repository on the server)"

section "the upstream moves: one sync follows it"
(
  set -e
  cd "$UP"
  head -c 524288 /dev/urandom >more.bin
  echo change >>README.md
  git add -A && git commit -qm "more weights"
  git branch -D -q dev
  git tag v2
) >"$T/up2.out" 2>&1 || die "changing the upstream" "$(brief "$T/up2.out")"
W2="$(sha_of "$UP/more.bin")"
check_true "the sync ends" sync alice/m1
check_json "it succeeded" '.[0].lastError' ""
check_eq "branches and tags follow (dev deleted, v2 new)" "$(refs "$UP")" "$(refs "$BASE/alice/m1")"
check_false "no branch dev on the mirror" bash -c "git ls-remote '$BASE/alice/m1' | grep -q refs/heads/dev"
req GET "$BASE/alice/m1/resolve/main/more.bin" "${AUTH[@]}"
check_eq "the new LFS file is served" "$W2" "$(sha_of "$BODY")"
check_hdr "…with the upstream's commit" X-Repo-Commit "$(git -C "$UP" rev-parse HEAD)"

section "nobody writes to a pull mirror"
echo local >"$T/m1-clone/local.txt"
git -C "$T/m1-clone" add local.txt && git -C "$T/m1-clone" commit -qm local
gitc "$HA" -C "$T/m1-clone" push -q origin main >"$T/push.out" 2>&1
check_false "git push to the mirror fails" test $? -eq 0
check_match "…saying it is a mirror" "mirror" "$(cat "$T/push.out")"
req POST "$BASE/api/models/alice/m1/commit/main" "${AUTH[@]}" -H 'Content-Type: application/x-ndjson' \
  --data-binary $'{"key":"header","value":{"summary":"x"}}\n{"key":"file","value":{"path":"x.txt","content":"eA==","encoding":"base64"}}'
check_hf_error "an API commit to the mirror -> 403" 403 '?'

section "an unreachable upstream: its error shown, the last good state kept"
GOOD="$(refs "$BASE/alice/m1")"
mv "$UP" "$UP.away"
check_true "the sync ends" sync alice/m1
check_match "the API shows the error" "not a repository under" "$(mirror_field alice/m1 .lastError)"
check_eq "…and counts the failure" "$(mirror_field alice/m1 .failures)" 1
check_eq "the mirror keeps its refs" "$GOOD" "$(refs "$BASE/alice/m1")"
req GET "$BASE/alice/m1/resolve/main/weights.bin" "${AUTH[@]}"
check_eq "…and serves its files" "$W1" "$(sha_of "$BODY")"
req GET "$BASE/alice/m1" "${AUTH[@]}"
check_match "the repo page shows the failed sync" "The last sync failed" "$(cat "$BODY")"
check_match "…and the upstream" "Mirror of" "$(cat "$BODY")"
mv "$UP.away" "$UP"
check_true "the upstream is back: the sync ends" sync alice/m1
check_json "…successfully" '.[0].lastError' ""
check_eq "…with no failure counted" "$(mirror_field alice/m1 .failures)" 0

section "a missing LFS object upstream: the sync fails, nothing moves"
(
  set -e
  cd "$UP"
  head -c 4096 /dev/urandom >lost.bin
  git add lost.bin && git commit -qm "lost"
  oid="$(git lfs ls-files -l | awk '/lost.bin/ {print $1}')"
  rm -f ".git/lfs/objects/${oid:0:2}/${oid:2:2}/$oid"
) >"$T/up3.out" 2>&1 || die "losing an object upstream" "$(brief "$T/up3.out")"
check_true "the sync ends" sync alice/m1
check_match "the error names the object" "lacks LFS object" "$(mirror_field alice/m1 .lastError)"
check_eq "the mirror's refs stay" "$GOOD" "$(refs "$BASE/alice/m1")"
check_false "main did not move to the commit whose file is missing" bash -c \
  "git ls-remote '$BASE/alice/m1' refs/heads/main | grep -q '$(git -C "$UP" rev-parse HEAD)'"
git -C "$UP" reset -q --hard HEAD~1

# ---------------------------------------------------------------------------------------
section "a pull mirror of a private repo over HTTP, with a credential"
must_create "$ALICE" src alice model true
lfs_clone "$HA" "$BASE/alice/src" "$T/src" '*.bin'
head -c 786432 /dev/urandom >"$T/src/model.bin"
commit_push "$HA" "$T/src" "model"
W3="$(sha_of "$T/src/model.bin")"
req POST "$BASE/api/repos/mirror" "${AUTH[@]}" "${JSON[@]}" \
  --data-binary "$(jq -cn --arg u "$BASE/alice/src" --arg c "$ALICE" '{name: "m2", url: $u, credential: $c, private: true}')"
check_status "POST /api/repos/mirror of $BASE/alice/src -> 201" 201
check_json "the credential is not shown" '.mirror | has("credential")' false
check_json "…only that there is one" .mirror.hasCredential true
check_true "the first sync succeeds" wait_until 60 bash -c \
  "[[ \"\$(curl -s -H 'Authorization: Bearer $ALICE' '$BASE/api/models/alice/m2/mirrors' | jq -r '.[0].lastSuccessAt')\" != null ]]"
req GET "$BASE/alice/m2/resolve/main/model.bin" "${AUTH[@]}"
check_eq "the LFS file came through the batch API" "$W3" "$(sha_of "$BODY")"
req GET "$BASE/api/models/alice/m2/mirrors" "${AUTH[@]}"
check_false "the credential appears nowhere in the listing" grep -q "$ALICE" "$BODY"
req GET "$BASE/api/models/alice/m2/mirrors"
check_status "an anonymous caller does not see a private mirror" 404

# ---------------------------------------------------------------------------------------
section "a push mirror to a local bare repository"
PUSHED="$ROOTS/pushed.git"
git init -q --bare "$PUSHED"
req POST "$BASE/api/models/alice/src/mirrors" -H "Authorization: Bearer $BOB" "${JSON[@]}" \
  --data-binary "$(jq -cn --arg u "$PUSHED" '{url: $u}')"
check_status "bob (no access) cannot add one" "404"
req POST "$BASE/api/models/alice/src/mirrors" "${AUTH[@]}" "${JSON[@]}" \
  --data-binary "$(jq -cn --arg u "$PUSHED" '{url: $u}')"
check_status "alice adds it -> 201" 201
check_json "a push mirror" .direction push
check_true "the first push reaches the remote" wait_until 60 bash -c \
  "[[ \"\$(git --git-dir='$PUSHED' rev-parse refs/heads/main 2>/dev/null)\" == '$HEAD_SHA' ]]"
head -c 300000 /dev/urandom >"$T/src/second.bin"
commit_push "$HA" "$T/src" "second"
W4="$(sha_of "$T/src/second.bin")"
check_true "the next push reaches the remote" wait_until 60 bash -c \
  "[[ \"\$(git --git-dir='$PUSHED' rev-parse refs/heads/main 2>/dev/null)\" == '$HEAD_SHA' ]]"
check_true "…with its LFS object" test -f "$PUSHED/lfs/objects/${W4:0:2}/${W4:2:2}/$W4"
check_true "…and the first one's" test -f "$PUSHED/lfs/objects/${W3:0:2}/${W3:2:2}/$W3"
git clone -q "$PUSHED" "$T/from-pushed" 2>"$T/clone2.err"
check_eq "a clone of the remote has the file's bytes" "$W4" "$(sha_of "$T/from-pushed/second.bin" 2>/dev/null)"
check_false "the hub's own bookkeeping refs are not pushed" bash -c \
  "git --git-dir='$PUSHED' for-each-ref | grep -q refs/hangar"
check_true "the hub keeps what it pushed under refs/hangar/" test -n \
  "$(git --git-dir="$DATA/repos/models/alice/src.git" for-each-ref refs/hangar/ 2>/dev/null)"
gitc "$HA" ls-remote "$BASE/alice/src" >"$T/ls-remote.out" 2>&1
check_true "ls-remote lists the repo's refs" grep -q refs/heads/main "$T/ls-remote.out"
check_false "…but not refs/hangar/ (hidden from clients)" grep -q refs/hangar "$T/ls-remote.out"
req GET "$BASE/api/models/alice/src/mirrors" "${AUTH[@]}"
check_json "the push is recorded" '.[0].lastError' ""

# ---------------------------------------------------------------------------------------
section "the schedule: a 2 s mirror follows its upstream by itself"
req POST "$BASE/api/repos/mirror" "${AUTH[@]}" "${JSON[@]}" \
  --data-binary "$(jq -cn --arg u "$UP" '{name: "m3", url: $u, intervalSeconds: 2}')"
check_status "POST /api/repos/mirror with intervalSeconds 2 -> 201" 201
(cd "$UP" && echo tick >tick.txt && git add tick.txt && git commit -qm tick) >/dev/null 2>&1
check_true "within 30 s the mirror has the upstream's new commit, unasked" wait_until 30 bash -c \
  "git ls-remote '$BASE/alice/m3' refs/heads/main | grep -q '$(git -C "$UP" rev-parse HEAD)'"

# ---------------------------------------------------------------------------------------
section "bad input: refused with a clear message, nothing made"
git init -q "$T/elsewhere/repo"
(cd "$T/elsewhere/repo" && echo x >x && git add x && git commit -qm x) >/dev/null 2>&1
ln -s "$T/elsewhere/repo" "$ROOTS/link"
bad_mirror() {
  local desc="$1" body="$2" pattern="$3"
  req POST "$BASE/api/repos/mirror" "${AUTH[@]}" "${JSON[@]}" --data-binary "$body"
  check_hf_error "$desc -> 400" 400 '?'
  check_match "…saying why" "$pattern" "$(hdr X-Error-Message)"
  req GET "$BASE/api/models/alice/bad" "${AUTH[@]}"
  check_status "…and no repo made" 404
}
bad_mirror "a path outside the roots" "$(jq -cn --arg u "$T/elsewhere/repo" '{name: "bad", url: $u}')" local_roots
bad_mirror "a path escaping the roots through .." "$(jq -cn --arg u "$ROOTS/../elsewhere/repo" '{name: "bad", url: $u}')" local_roots
bad_mirror "a symlink in the roots pointing outside" "$(jq -cn --arg u "$ROOTS/link" '{name: "bad", url: $u}')" local_roots
bad_mirror "a file:// URL outside the roots" "$(jq -cn --arg u "file://$T/elsewhere/repo" '{name: "bad", url: $u}')" local_roots
bad_mirror "an ext:: transport" '{"name":"bad","url":"ext::sh -c touch% /tmp/pwned"}' "not allowed"
bad_mirror "a cloud metadata address" '{"name":"bad","url":"http://169.254.169.254/latest"}' "not a public address"
bad_mirror "an unknown field" "$(jq -cn --arg u "$UP" '{name: "bad", url: $u, intervall: 5}')" "unknown field"
bad_mirror "an interval below the minimum" "$(jq -cn --arg u "$UP" '{name: "bad", url: $u, intervalSeconds: 0}')" "intervalSeconds"
bad_mirror "an interval of over a year" "$(jq -cn --arg u "$UP" '{name: "bad", url: $u, intervalSeconds: 40000000000}')" "once a year"
bad_mirror "an interval past 64 bits" "{\"name\":\"bad\",\"url\":\"$UP\",\"intervalSeconds\":99999999999999999999}" "intervalSeconds"
bad_mirror "no url" '{"name":"bad"}' "url"
bad_mirror "a credential with a line break" "$(jq -cn --arg u "$BASE/alice/src" '{name: "bad", url: $u, credential: "a\r\nX-Evil: 1"}')" "credential"
req POST "$BASE/api/repos/mirror" "${AUTH[@]}" "${JSON[@]}" --data-binary '{"name": "bad", "url": '
check_hf_error "malformed JSON -> 400" 400 '?'
head -c 70000 /dev/zero | tr '\0' 'a' >"$T/big.json"
req POST "$BASE/api/repos/mirror" "${AUTH[@]}" "${JSON[@]}" --data-binary @"$T/big.json"
check_hf_error "a body over 64 KiB -> 413, refused from its head" 413 '?'
req POST "$BASE/api/models/alice/m1/mirrors" "${AUTH[@]}" "${JSON[@]}" --data-binary '[1,2'
check_hf_error "malformed JSON for a push mirror -> 400" 400 '?'
req POST "$BASE/api/repos/mirror" "${JSON[@]}" --data-binary "$(jq -cn --arg u "$UP" '{name: "alice/bad", url: $u}')"
check_hf_error "anonymous -> 401" 401 '?'
req POST "$BASE/api/models/alice/m1/mirrors" "${AUTH[@]}" "${JSON[@]}" \
  --data-binary "$(jq -cn --arg u "$T/elsewhere/repo" '{url: $u}')"
check_hf_error "a push mirror outside the roots -> 400" 400 '?'
req GET "$BASE/api/models/alice/m1/mirrors" "${AUTH[@]}"
check_json "…and none added" 'map(select(.direction == "push")) | length' 0
req DELETE "$BASE/api/models/alice/m1/mirrors/999999" "${AUTH[@]}"
check_hf_error "deleting a mirror that is not there -> 404" 404 '?'

section "removing the pull mirror makes the repo an ordinary one"
ID="$(mirror_field alice/m1 .id)"
req DELETE "$BASE/api/models/alice/m1/mirrors/$ID" "${AUTH[@]}"
check_status "DELETE …/mirrors/$ID -> 204" 204
check_true "git push to it works now" wait_until 10 gitc "$HA" -C "$T/m1-clone" push -q origin HEAD:refs/heads/own

stop_server
check_eq "server stopped cleanly" "$SERVER_RC" 0
finish
