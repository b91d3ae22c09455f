#!/usr/bin/env bash
# Issue #2 header contract, errors and bad input, with curl against a real `hangar serve`:
# ETag / X-Linked-Etag / X-Repo-Commit, ranges, revisions (branch, tag, full and short sha,
# refs%2Fpr%2F1, feat%2Fx), every HF error code with its JSON body, auth failures, repo
# management (create/409/settings/move/delete), listing pagination through Link, tree and
# commit pagination, paths-info, and bad input that must get a clear 4xx and write nothing
# (path traversal, NUL, backslashes, invalid names, malformed / oversized / lying LFS
# requests, an upload cut short).
#
# Content: the same repo as git_lfs_e2e.sh (real Tesseract and Silero VAD models over LFS).
# Usage: hf_headers.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

fetch_inputs

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice --email alice@example.org
ALICE="$(new_token alice --name laptop --role write)"
ALICE_RO="$(new_token alice --name reader --role read)"
new_user bob
BOB="$(new_token bob --role write)"
start_server "$DATA" || die "hangar serve did not start"
pass "server listening on $BASE"
HA="$(cred_helper alice "$ALICE")"
AUTH=(-H "Authorization: Bearer $ALICE")
JSON=(-H 'Content-Type: application/json')

must_create "$ALICE" hdr alice model false
W="$T/work"
gitc "" clone -q "$BASE/alice/hdr" "$W" 2>"$T/clone.err" || die "git clone $BASE/alice/hdr" "$(brief "$T/clone.err" 600)"
add_model_commits "$W" || die "local commits"
git -C "$W" tag v1.0 HEAD~2
git -C "$W" tag -a v1.0-annotated -m "annotated" HEAD~1
git -C "$W" checkout -q -b feat/x
printf 'feature\n' >"$W/feat.txt"
git -C "$W" add feat.txt && git -C "$W" commit -q -m "Feature branch"
FEAT_SHA="$(git -C "$W" rev-parse HEAD)"
git -C "$W" checkout -q main
git -C "$W" checkout -q -b pr
printf 'proposal\n' >"$W/pr.txt"
git -C "$W" add pr.txt && git -C "$W" commit -q -m "Proposal"
PR_SHA="$(git -C "$W" rev-parse HEAD)"
git -C "$W" checkout -q main
gitc "$HA" -C "$W" push -q origin main feat/x v1.0 v1.0-annotated "$PR_SHA:refs/pr/1" >"$T/push.out" 2>&1 ||
  die "git push main feat/x v1.0 refs/pr/1" "$(brief "$T/push.out" 1500)"
pass "pushed main, feat/x, tags v1.0 and v1.0-annotated, refs/pr/1"
HEAD_SHA="$(git -C "$W" rev-parse main)"
TAG_SHA="$(git -C "$W" rev-parse 'v1.0^{commit}')"
ATAG_SHA="$(git -C "$W" rev-parse 'v1.0-annotated^{commit}')"
COUNT="$(git -C "$W" rev-list --count main)"
CFG_OID="$(git -C "$W" rev-parse main:config.json)"
CFG_SIZE="$(stat -c %s "$W/config.json")"
TESS_PTR_OID="$(git -C "$W" rev-parse main:tessdata/eng.traineddata)"
R="$BASE/alice/hdr"
A="$BASE/api/models/alice/hdr"

# ---------------------------------------------------------------------------------------
section "resolve: regular file headers"
req GET "$R/resolve/main/config.json"
check_status "GET /alice/hdr/resolve/main/config.json -> 200" 200
check_true "  body is the file" cmp -s "$BODY" "$W/config.json"
check_hdr "  ETag = quoted git blob id" ETag "\"$CFG_OID\""
check_no_hdr "  no X-Linked-Etag on a regular file" X-Linked-Etag
check_hdr "  X-Repo-Commit = full head sha" X-Repo-Commit "$HEAD_SHA"
check_hdr "  Content-Length" Content-Length "$CFG_SIZE"
check_hdr "  Accept-Ranges: bytes" Accept-Ranges bytes
check_hdr_match "  Content-Disposition names the file" Content-Disposition 'filename="?config\.json'
check_no_hdr "  no Location on a 200" Location
check_hdr_match "  X-Request-Id present" X-Request-Id '.+'
req HEAD "$R/resolve/main/config.json" -H 'Accept-Encoding: identity'
check_status "HEAD .../resolve/main/config.json -> 200" 200
check_hdr "  HEAD: real Content-Length" Content-Length "$CFG_SIZE"
check_hdr "  HEAD: ETag" ETag "\"$CFG_OID\""
check_hdr "  HEAD: X-Repo-Commit" X-Repo-Commit "$HEAD_SHA"
check_no_hdr "  HEAD: not compressed" Content-Encoding

section "resolve: LFS file headers"
req HEAD "$R/resolve/main/tessdata/eng.traineddata"
check_status "HEAD .../resolve/main/tessdata/eng.traineddata -> 200" 200
check_hdr "  ETag = quoted sha256" ETag "\"$TESS_SHA\""
check_hdr "  X-Linked-Etag = quoted sha256" X-Linked-Etag "\"$TESS_SHA\""
check_hdr "  X-Linked-Size" X-Linked-Size "$TESS_SIZE"
check_hdr "  Content-Length = object size" Content-Length "$TESS_SIZE"
check_hdr "  X-Repo-Commit" X-Repo-Commit "$HEAD_SHA"
req GET "$R/resolve/main/tessdata/eng.traineddata"
check_eq "GET LFS file: 200 and the real bytes" "200 $TESS_SHA" "$ST $(sha256_of "$BODY")"
req GET "$R/raw/main/tessdata/eng.traineddata"
check_status "GET .../raw/main/tessdata/eng.traineddata -> 200" 200
check_true "  raw gives the pointer file" cmp -s "$BODY" <(git -C "$W" cat-file blob "$TESS_PTR_OID")
check_hdr "  raw ETag = quoted pointer blob id" ETag "\"$TESS_PTR_OID\""
req HEAD "$R/raw/main/config.json"
check_status "HEAD .../raw/main/config.json -> 200 (JS fileExists)" 200

section "ranges"
req GET "$R/resolve/main/config.json" -H 'Range: bytes=10-19'
check_status "Range bytes=10-19 on a regular file -> 206" 206
check_hdr "  Content-Range" Content-Range "bytes 10-19/$CFG_SIZE"
check_hdr "  Content-Length: 10" Content-Length 10
check_true "  exactly bytes 10..19" cmp -s "$BODY" <(tail -c +11 "$W/config.json" | head -c 10)
req GET "$R/resolve/main/tessdata/eng.traineddata" -H 'Range: bytes=10-19'
check_status "Range bytes=10-19 on an LFS file -> 206" 206
check_hdr "  Content-Range" Content-Range "bytes 10-19/$TESS_SIZE"
check_true "  exactly bytes 10..19" cmp -s "$BODY" <(tail -c +11 "$TESS" | head -c 10)
check_hdr "  X-Linked-Etag on the 206" X-Linked-Etag "\"$TESS_SHA\""
req GET "$R/resolve/main/tessdata/eng.traineddata" -H 'Range: bytes=-16'
check_status "Range bytes=-16 (suffix) -> 206" 206
check_hdr "  Content-Range" Content-Range "bytes $((TESS_SIZE - 16))-$((TESS_SIZE - 1))/$TESS_SIZE"
check_true "  the last 16 bytes" cmp -s "$BODY" <(tail -c 16 "$TESS")
OPEN_FROM=$((TESS_SIZE - 5000))
req GET "$R/resolve/main/tessdata/eng.traineddata" -H "Range: bytes=$OPEN_FROM-"
check_status "Range bytes=$OPEN_FROM- (open end) -> 206" 206
check_hdr "  Content-Range" Content-Range "bytes $OPEN_FROM-$((TESS_SIZE - 1))/$TESS_SIZE"
check_true "  bytes from $OPEN_FROM to the end" cmp -s "$BODY" <(tail -c 5000 "$TESS")
req GET "$R/resolve/main/config.json" -H 'Range: bytes=0-0' -H 'Accept: application/vnd.xet-fileinfo+json, */*'
check_status "JS probe (Range bytes=0-0, xet Accept) -> 206" 206
check_hdr "  Content-Range bytes 0-0/N" Content-Range "bytes 0-0/$CFG_SIZE"
check_true "  Content-Type is not the xet one" test "${ST}" = 206 -a -z "$(hdr Content-Type | grep -i xet)"
req GET "$R/resolve/main/config.json" -H "Range: bytes=$CFG_SIZE-"
check_status "unsatisfiable Range bytes=SIZE- -> 416" 416
check_hdr "  Content-Range: bytes */SIZE" Content-Range "bytes */$CFG_SIZE"
req GET "$R/resolve/main/tessdata/eng.traineddata" -H 'Range: bytes=999999999-1000000000'
check_status "unsatisfiable Range on an LFS file -> 416" 416
check_hdr "  Content-Range: bytes */SIZE" Content-Range "bytes */$TESS_SIZE"

# ---------------------------------------------------------------------------------------
section "revisions"
SHORT="${HEAD_SHA:0:7}"
for spec in "main $HEAD_SHA" "HEAD $HEAD_SHA" "v1.0 $TAG_SHA" "v1.0-annotated $ATAG_SHA" \
  "$HEAD_SHA $HEAD_SHA" "$SHORT $HEAD_SHA" "refs%2Fpr%2F1 $PR_SHA" "refs/pr/1 $PR_SHA" \
  "feat%2Fx $FEAT_SHA" "refs%2Fheads%2Fmain $HEAD_SHA" "refs%2Ftags%2Fv1.0 $TAG_SHA"; do
  rev="${spec% *}"
  want="${spec#* }"
  req GET "$R/resolve/$rev/config.json"
  check_eq "resolve/$rev/config.json -> 200, X-Repo-Commit $want" "200 $want" "$ST $(hdr X-Repo-Commit)"
  req GET "$A/revision/$rev"
  check_eq "GET /api/models/alice/hdr/revision/$rev -> sha $want" "200 $want" "$ST $(jbody .sha)"
done
req GET "$R/resolve/feat%2Fx/feat.txt"
check_eq "resolve/feat%2Fx/feat.txt: the branch's file" "200 feature" "$ST $(cat "$BODY")"
req GET "$R/resolve/refs%2Fpr%2F1/pr.txt"
check_eq "resolve/refs%2Fpr%2F1/pr.txt: the PR's file" "200 proposal" "$ST $(cat "$BODY")"
req GET "$R/resolve/main/feat.txt"
check_hf_error "resolve/main/feat.txt (only on feat/x) -> 404 EntryNotFound" 404 EntryNotFound
req GET "$A/tree/feat%2Fx?recursive=false"
check_json_true "tree/feat%2Fx lists feat.txt" 'any(.[]; .path == "feat.txt")'
req GET "$A/tree/refs%2Fpr%2F1?recursive=false"
check_json_true "tree/refs%2Fpr%2F1 lists pr.txt" 'any(.[]; .path == "pr.txt")'
req GET "$A/tree/refs/pr/1?recursive=false"
check_json_true "tree/refs/pr/1 (unencoded, as JS sends it) lists pr.txt" 'any(.[]; .path == "pr.txt")'
req GET "$A/commits/refs%2Fpr%2F1"
check_json "commits/refs%2Fpr%2F1 starts at the PR commit" '.[0].id' "$PR_SHA"
req GET "$A/commits/feat%2Fx"
check_json "commits/feat%2Fx starts at the branch commit" '.[0].id' "$FEAT_SHA"

req GET "$A/refs"
check_status "GET .../refs -> 200" 200
check_json "refs: branches main and feat/x with targets" \
  '[.branches[] | "\(.name)=\(.ref)=\(.targetCommit)"] | sort | join(" ")' \
  "feat/x=refs/heads/feat/x=$FEAT_SHA main=refs/heads/main=$HEAD_SHA"
check_json "refs: tags with targets (commit of the annotated tag)" \
  '[.tags[] | "\(.name)=\(.ref)=\(.targetCommit)"] | sort | join(" ")' \
  "v1.0-annotated=refs/tags/v1.0-annotated=$ATAG_SHA v1.0=refs/tags/v1.0=$TAG_SHA"
check_json "refs: converts is an array" '.converts | type' array
req GET "$A/refs?include_prs=1"
check_json "refs?include_prs=1: pullRequests has refs/pr/1" \
  '[.pullRequests[] | "\(.ref)=\(.targetCommit)"] | join(" ")' "refs/pr/1=$PR_SHA"

# ---------------------------------------------------------------------------------------
section "commits and tree pagination"
req GET "$A/commits/main?limit=2"
check_status "GET .../commits/main?limit=2 -> 200" 200
check_hdr "  X-Total-Count = $COUNT" X-Total-Count "$COUNT"
check_json "  2 items" length 2
check_match "  Link rel=\"next\" absolute on this host" "^<$BASE/[^>]*>;[[:space:]]+rel=\"next\"" "$(hdr Link)"
check_match "  commit date ends in Z" 'Z$' "$(jbody '.[0].date')"
check_match "  authors[].user present" '.+' "$(jbody '.[0].authors[0].user // empty')"
if get_all_pages "$A/commits/main?limit=2"; then
  pass "followed every commits page ($PAGE_COUNT pages)"
else
  _fail_http "follow commits Link pages"
fi
check_eq "  pages concatenated == git rev-list main" "$(git -C "$W" rev-list main | tr '\n' ' ')" "$(pjq '[.[].id] | join(" ")') "
check_true "  more than one page was served" test "$PAGE_COUNT" -gt 1

if get_all_pages "$A/tree/main?recursive=true&limit=2"; then
  pass "followed every tree page ($PAGE_COUNT pages; the server picks page sizes)"
else
  _fail_http "follow tree Link pages"
fi
check_eq "  recursive tree pages == git ls-tree -r -t" \
  "$(git -C "$W" ls-tree -r -t --name-only main | sort | tr '\n' '|')" "$(pjq '[.[].path] | sort | join("|")')|"
check_eq "  no duplicate entries across pages" "$(pjq 'length')" "$(pjq '[.[].path] | unique | length')"
req GET "$A/tree/main?recursive=false&expand=true"
check_status "GET .../tree/main?expand=true -> 200" 200
check_json "  expand=true: lastCommit of README.md is the head" '.[] | select(.path == "README.md") | .lastCommit.id' "$HEAD_SHA"
check_json "  expand=true: lastCommit of config.json" '.[] | select(.path == "config.json") | .lastCommit.id' \
  "$(git -C "$W" log -1 --format=%H main -- config.json)"
check_json_true "  every entry has type, path, oid, size" 'all(.[]; has("type") and has("path") and has("oid") and has("size"))'
check_json_true "  no xetHash" 'all(.[]; has("xetHash") | not)'

section "paths-info"
req POST "$A/paths-info/main" "${AUTH[@]}" -H 'Content-Type: application/x-www-form-urlencoded' \
  --data-binary 'paths=config.json&paths=tessdata%2Feng.traineddata&paths=missing.txt&expand=false'
check_status "POST .../paths-info/main (form) -> 200" 200
check_json "  form: existing paths only" '[.[].path] | sort | join(",")' "config.json,tessdata/eng.traineddata"
check_json "  form: LFS entry has lfs.oid and object size" \
  '.[] | select(.path == "tessdata/eng.traineddata") | "\(.lfs.oid) \(.size)"' "$TESS_SHA $TESS_SIZE"
req POST "$A/paths-info/main" "${JSON[@]}" --data-binary '{"paths": ["config.json", "configs", "nope"], "expand": true}'
check_status "POST .../paths-info/main (JSON, anonymous) -> 200" 200
check_json "  JSON: file and directory" '[.[] | "\(.path):\(.type)"] | sort | join(",")' "config.json:file,configs:directory"
check_match "  JSON expand: lastCommit.id" '^[0-9a-f]{40}$' "$(jbody '.[] | select(.path == "config.json") | .lastCommit.id')"

# ---------------------------------------------------------------------------------------
section "errors"
req GET "$BASE/api/models/alice/nope"
check_hf_error "GET /api/models/alice/nope -> 404 RepoNotFound" 404 RepoNotFound
req GET "$BASE/alice/nope/resolve/main/config.json"
check_hf_error "GET /alice/nope/resolve/main/config.json -> 404 RepoNotFound" 404 RepoNotFound
req HEAD "$BASE/alice/nope/resolve/main/config.json"
check_hf_error "HEAD /alice/nope/resolve/... -> 404 RepoNotFound (headers only)" 404 RepoNotFound
req GET "$BASE/api/models/alice/nope/tree/main"
check_hf_error "tree of an unknown repo -> 404 RepoNotFound" 404 RepoNotFound
req GET "$BASE/api/models/alice/nope/commits/main"
check_hf_error "commits of an unknown repo -> 404 RepoNotFound" 404 RepoNotFound
req GET "$BASE/api/models/alice/nope/refs"
check_hf_error "refs of an unknown repo -> 404 RepoNotFound" 404 RepoNotFound
req GET "$BASE/api/datasets/alice/hdr"
check_hf_error "the model is not a dataset: /api/datasets/alice/hdr -> 404 RepoNotFound" 404 RepoNotFound

req GET "$R/resolve/v9/config.json"
check_hf_error "resolve/v9 -> 404 RevisionNotFound" 404 RevisionNotFound
check_match "  X-Error-Message names the revision" 'v9' "$(hdr X-Error-Message)"
req HEAD "$R/resolve/v9/config.json"
check_hf_error "HEAD resolve/v9 -> 404 RevisionNotFound" 404 RevisionNotFound
req GET "$R/resolve/refs%252Fpr%252F1/config.json"
check_hf_error "double-encoded refs%252Fpr%252F1 -> 404 RevisionNotFound" 404 RevisionNotFound
req GET "$R/resolve/0000000000000000000000000000000000000000/config.json"
check_hf_error "unknown full sha -> 404 RevisionNotFound" 404 RevisionNotFound
req GET "$A/revision/v9"
check_hf_error "/api/.../revision/v9 -> 404 RevisionNotFound" 404 RevisionNotFound
req GET "$A/tree/v9"
check_hf_error "tree/v9 -> 404 RevisionNotFound" 404 RevisionNotFound
req GET "$A/commits/v9"
check_hf_error "commits/v9 -> 404 RevisionNotFound" 404 RevisionNotFound
req POST "$A/paths-info/v9" "${JSON[@]}" --data-binary '{"paths": ["config.json"]}'
check_hf_error "paths-info/v9 -> 404 RevisionNotFound" 404 RevisionNotFound

req GET "$R/resolve/main/missing.txt"
check_hf_error "resolve/main/missing.txt -> 404 EntryNotFound" 404 EntryNotFound
check_hdr "  with X-Repo-Commit" X-Repo-Commit "$HEAD_SHA"
req HEAD "$R/resolve/main/missing.txt"
check_hf_error "HEAD resolve/main/missing.txt -> 404 EntryNotFound" 404 EntryNotFound
check_hdr "  with X-Repo-Commit" X-Repo-Commit "$HEAD_SHA"
req HEAD "$R/raw/main/missing.txt"
check_hf_error "HEAD raw/main/missing.txt -> 404 EntryNotFound (JS fileExists false)" 404 EntryNotFound
req GET "$R/resolve/main/configs"
check_hf_error "resolve of a directory -> 404 EntryNotFound" 404 EntryNotFound
req GET "$A/tree/main/config.json"
check_hf_error "tree on a file path -> 404 EntryNotFound" 404 EntryNotFound
req GET "$A/tree/main/no/such/dir"
check_hf_error "tree on a missing path -> 404 EntryNotFound" 404 EntryNotFound

section "auth errors"
api_create "" anon-repo alice model false
check_hf_error "create without a token -> 401" 401 '?'
api_create "$ALICE_RO" ro-repo alice model false
check_hf_error "create with a read-only token -> 403" 403 '?'
api_create "$BOB" bobs-in-alice alice model false
check_hf_error "bob creating in alice's namespace -> 403" 403 '?'
api_create "$ALICE" hdr alice model false
check_status "create an existing repo -> 409" 409
check_json "  409 body still has url" .url "$BASE/alice/hdr"
check_json "  409 body has an error message" '.error | type' string
req PUT "$A/settings" "${JSON[@]}" --data-binary '{"private": true}'
check_hf_error "settings without a token -> 401" 401 '?'
req PUT "$A/settings" -H "Authorization: Bearer $BOB" "${JSON[@]}" --data-binary '{"private": true}'
check_hf_error "settings with bob's token -> 403" 403 '?'
req PUT "$A/settings" -H "Authorization: Bearer $ALICE_RO" "${JSON[@]}" --data-binary '{"private": true}'
check_hf_error "settings with alice's read-only token -> 403" 403 '?'
req GET "$A"
check_json "  visibility unchanged by refused settings calls" .private false
req DELETE "$BASE/api/repos/delete" "${JSON[@]}" --data-binary '{"name": "hdr", "organization": "alice", "type": "model"}'
check_hf_error "delete without a token -> 401" 401 '?'
req DELETE "$BASE/api/repos/delete" -H "Authorization: Bearer $BOB" "${JSON[@]}" \
  --data-binary '{"name": "hdr", "organization": "alice", "type": "model"}'
check_hf_error "delete with bob's token -> 403" 403 '?'
req GET "$A"
check_status "  repo still there after refused deletes" 200

req GET "$BASE/api/whoami-v2" "${AUTH[@]}"
check_status "GET /api/whoami-v2 -> 200" 200
check_json "  name, type, orgs, auth.accessToken" \
  '"\(.name) \(.type) \(.orgs | type) \(.auth.accessToken.role) \(.auth.accessToken.displayName)"' \
  "alice user array write laptop"
req GET "$BASE/api/whoami-v2"
check_status "whoami-v2 without a token -> 401" 401
BAD=hf_ThisIsNotAValidTokenAtAll0123456789
for url in "$BASE/api/whoami-v2" "$A" "$R/resolve/main/config.json"; do
  req GET "$url" -H "Authorization: Bearer $BAD"
  check_hf_error "invalid token on ${url#"$BASE"} -> 401, no X-Error-Code" 401 -
  check_hdr "  X-Error-Message" X-Error-Message "Invalid credentials in Authorization header"
done
req GET "$R/info/refs?service=git-upload-pack" -u "hf_user:$BAD"
check_status "invalid token as git Basic password -> 401" 401

if "$HANGAR_BIN" admin token --help 2>&1 | grep -qi revoke; then
  info "hangar admin token revoke exists: testing revocation"
  "$HANGAR_BIN" admin token revoke --help >"$T/revoke.help" 2>&1
  TMP_TOKEN="$(new_token alice --name to-revoke --role write)"
  req GET "$BASE/api/whoami-v2" -H "Authorization: Bearer $TMP_TOKEN"
  check_status "fresh token works" 200
  # `token list USER` prints "ID<TAB>NAME<TAB>ROLE"; `token revoke USER ID`.
  TID="$(admin token list alice 2>/dev/null | awk -F'\t' '$2 == "to-revoke" { print $1 }')"
  if [[ -n "$TID" ]] && admin token revoke alice "$TID" >"$T/revoke.out" 2>&1; then
    pass "hangar admin token revoke alice $TID (id from token list)"
  else
    fail "hangar admin token revoke" "$(cat "$T/revoke.out" "$T/revoke.help" | head -c 800)"
  fi
  # The server caches token lookups (documented: a revoked token stops working within the
  # auth cache TTL, 5 s), so poll for up to 15 s.
  revoked_now() { req GET "$BASE/api/whoami-v2" -H "Authorization: Bearer $TMP_TOKEN"; [[ "$ST" == 401 ]]; }
  wait_until 15 revoked_now
  info "revoked token refused after ${WAITED_MS} ms"
  check_hf_error "revoked token -> 401 (within 15 s)" 401 -
  check_hdr "  X-Error-Message" X-Error-Message "Invalid credentials in Authorization header"
  req GET "$A" -H "Authorization: Bearer $ALICE"
  check_status "other tokens still work after a revocation" 200
else
  info "no 'hangar admin token revoke': revocation not tested"
fi

# ---------------------------------------------------------------------------------------
section "repo management and listing"
for n in list-a list-b list-c list-d list-e; do must_create "$ALICE" "$n" alice model false; done
must_create "$ALICE" list-private alice model true
pass "created alice/list-{a..e} and private alice/list-private"

req GET "$BASE/api/models?author=alice&limit=2"
check_status "GET /api/models?author=alice&limit=2 -> 200" 200
check_json "  page 1 has 2 items" length 2
check_match "  Link rel=\"next\" (absolute, this host, JS regex)" "^<$BASE/api/models\\?[^>]*>;[[:space:]]+rel=\"next\"" "$(hdr Link)"
if get_all_pages "$BASE/api/models?author=alice&limit=2"; then
  pass "followed every listing page ($PAGE_COUNT pages)"
else
  _fail_http "follow listing Link pages"
fi
check_eq "  anonymous: all public repos of alice, once each, no private one" \
  "alice/hdr alice/list-a alice/list-b alice/list-c alice/list-d alice/list-e" "$(pjq '[.[].id] | sort | join(" ")')"
check_true "  pages of 2: at least 3 pages" test "$PAGE_COUNT" -ge 3
check_true "  every Link kept limit=2 and author=alice" \
  bash -c 'for u in "$@"; do [[ "$u" == *limit=2* && "$u" == *author=alice* ]] || exit 1; done' _ "${LINK_URLS[@]:-none}"
if get_all_pages "$BASE/api/models?author=alice&limit=2" "${AUTH[@]}"; then
  check_eq "  as alice: her private repo is listed too" \
    "alice/hdr alice/list-a alice/list-b alice/list-c alice/list-d alice/list-e alice/list-private" \
    "$(pjq '[.[].id] | sort | join(" ")')"
else
  _fail_http "listing as alice"
fi
req GET "$BASE/api/models?search=LIST-&author=alice&limit=100"
check_eq "search=LIST- (case-insensitive substring)" "alice/list-a alice/list-b alice/list-c alice/list-d alice/list-e" \
  "$(jbody '[.[].id] | sort | join(" ")')"
req GET "$BASE/api/models?author=bob"
check_json "author=bob -> empty list" length 0
req GET "$BASE/api/models?author=alice&sort=lastModified&direction=-1&limit=100&expand=lastModified"
check_status "sort=lastModified&direction=-1 -> 200" 200
check_json_true "  every item has lastModified, descending" '(length > 0) and all(.[]; .lastModified != null) and ([.[].lastModified] | . == (sort | reverse))'
req GET "$BASE/api/models?author=alice&sort=nonsense&limit=100"
check_status "unknown sort key is tolerated -> 200" 200
req GET "$BASE/api/datasets?author=alice"
check_json "GET /api/datasets?author=alice -> no models in it" length 0

req POST "$BASE/api/repos/move" "${AUTH[@]}" "${JSON[@]}" \
  --data-binary '{"fromRepo": "alice/list-d", "toRepo": "alice/list-moved", "type": "model"}'
check_status "POST /api/repos/move alice/list-d -> alice/list-moved -> 200" 200
req GET "$BASE/api/models/alice/list-moved"
check_eq "  new name answers with its id" "200 alice/list-moved" "$ST $(jbody .id)"
req GET "$BASE/api/models/alice/list-d"
check_status "  old name no longer a repo (404, or a redirect)" '404|301|307|308'

req DELETE "$BASE/api/repos/delete" "${AUTH[@]}" "${JSON[@]}" \
  --data-binary '{"name": "list-e", "organization": "alice", "type": "model"}'
check_status "DELETE /api/repos/delete alice/list-e -> 200" 200
req GET "$BASE/api/models/alice/list-e"
check_hf_error "  deleted repo -> 404 RepoNotFound" 404 RepoNotFound
req DELETE "$BASE/api/repos/delete" "${AUTH[@]}" "${JSON[@]}" \
  --data-binary '{"name": "list-e", "organization": "alice", "type": "model"}'
check_hf_error "  deleting it again -> 404 RepoNotFound" 404 RepoNotFound
must_create "$ALICE" list-e alice model false
pass "  the name can be created again after the delete"

req PUT "$BASE/api/models/alice/list-c/settings" "${AUTH[@]}" "${JSON[@]}" --data-binary '{"private": true}'
check_status "PUT settings {private: true} -> 200" 200
check_json_true "  answers a JSON object" 'type == "object"'
req GET "$BASE/api/models/alice/list-c"
check_hf_error "  now invisible anonymously -> RepoNotFound" '401|404' RepoNotFound
req GET "$BASE/api/models/alice/list-c" -H "Authorization: Bearer $BOB"
check_hf_error "  and to bob -> 404 RepoNotFound" 404 RepoNotFound
req GET "$BASE/alice/list-c/resolve/main/.gitattributes" -H "Authorization: Bearer $BOB"
check_hf_error "  bob's resolve -> 404 RepoNotFound" 404 RepoNotFound
req GET "$BASE/api/models/alice/list-c" -H "Authorization: Bearer $ALICE_RO"
check_status "  alice's read-only token still reads it" 200
req PUT "$BASE/api/models/alice/list-c/settings" "${AUTH[@]}" "${JSON[@]}" --data-binary '{"visibility": "public"}'
check_status "PUT settings {visibility: public} -> 200" 200
req GET "$BASE/api/models/alice/list-c"
check_json "  public again" .private false

# ---------------------------------------------------------------------------------------
section "bad input: clear 4xx, nothing written"
# What requests wrote: the files repository maintenance and the search snapshot keep in a
# repo (hangar-maintenance*, hangar-search/) are written by background jobs on their own
# clock, so they are left out.
snapshot() {
  (cd "$DATA" && find repos blobs -print 2>/dev/null | grep -v '/hangar-maintenance\|/hangar-search' |
    LC_ALL=C sort)
}
snapshot >"$T/snap.before"
req GET "$BASE/api/models?author=alice&limit=1000" "${AUTH[@]}"
jbody '[.[].id] | sort | join(" ")' >"$T/repos.before"

bad_get() {  # bad_get DESC URL_PATH [curl args]: any 4xx, HF error shape, no file contents
  local desc="$1" path="$2"; shift 2
  req GET "$BASE$path" "$@"
  check_hf_error "$desc: GET $path -> 4xx" '4[0-9][0-9]' '?'
  if grep -q 'root:\|SQLite format' "$BODY" 2>/dev/null; then
    fail "$desc: response leaks a file" "$(head -c 200 "$BODY")"
  fi
}
bad_get "'..' in a file path" "/alice/hdr/resolve/main/../../../../etc/passwd"
bad_get "'..' in a file path inside the repo" "/alice/hdr/resolve/main/configs/../config.json"
bad_get "%2e%2e in a file path" "/alice/hdr/resolve/main/%2e%2e/%2e%2e/%2e%2e/hangar.db"
bad_get "%2e%2e%2f in a file path" "/alice/hdr/resolve/main/%2e%2e%2f%2e%2e%2fhangar.db"
bad_get "absolute file path (//)" "/alice/hdr/resolve/main//etc/passwd"
bad_get "absolute file path (%2F)" "/alice/hdr/resolve/main/%2Fetc%2Fpasswd"
bad_get "NUL in a file path" "/alice/hdr/resolve/main/config.json%00.txt"
bad_get "backslash in a file path" "/alice/hdr/resolve/main/..%5C..%5Changar.db"
bad_get "'..' in a tree path" "/api/models/alice/hdr/tree/main/..%2F..%2F.."
bad_get "'..' as the repo name" "/api/models/alice/%2e%2e"
bad_get "'..' as namespace and name" "/api/models/%2e%2e/%2e%2e"
bad_get "NUL in a repo name" "/api/models/alice/hd%00r"
bad_get "backslash in a repo name" "/api/models/alice/..%5Chdr"
bad_get "backslash in a repo name (resolve)" "/alice/hd%5Cr/resolve/main/config.json"
bad_get "NUL in a repo name (resolve)" "/alice/hd%00r/resolve/main/config.json"
bad_get "'..' in the namespace (resolve)" "/%2e%2e/hdr/resolve/main/config.json"
bad_get ".git component in a file path" "/alice/hdr/resolve/main/.git/config"
req GET "$BASE/alice/%2e%2e/info/refs?service=git-upload-pack"
check_status "'..' as the repo name on git info/refs -> 4xx" '4[0-9][0-9]'
req GET "$BASE/%2e%2e/%2e%2e/info/refs?service=git-upload-pack"
check_status "'..' as namespace and name on git info/refs -> 4xx" '4[0-9][0-9]'
req POST "$A/paths-info/main" "${JSON[@]}" --data-binary '{"paths": ["../../hangar.db", "/etc/passwd", "a\u0000b"]}'
check_true "paths-info with '..', absolute and NUL paths: 4xx or an empty list" \
  bash -c '[[ "$1" =~ ^4 ]] || [[ "$1" == 200 && "$(jq -r length <"$2")" == 0 ]]' _ "$ST" "$BODY"

bad_create() {  # bad_create DESC JSON_BODY STATUS_ERE
  req POST "$BASE/api/repos/create" "${AUTH[@]}" "${JSON[@]}" --data-binary "$2"
  check_hf_error "create with $1 -> ${3:-400}" "${3:-400}" '?'
}
bad_create "name '..'" '{"name": "..", "organization": "alice", "type": "model"}'
bad_create "name '.'" '{"name": ".", "organization": "alice", "type": "model"}'
bad_create "name '-bad'" '{"name": "-bad", "organization": "alice", "type": "model"}'
bad_create "name 'bad-'" '{"name": "bad-", "organization": "alice", "type": "model"}'
bad_create "name 'a--b'" '{"name": "a--b", "organization": "alice", "type": "model"}'
bad_create "name 'a..b'" '{"name": "a..b", "organization": "alice", "type": "model"}'
bad_create "name 'x.git'" '{"name": "x.git", "organization": "alice", "type": "model"}'
bad_create "empty name" '{"name": "", "organization": "alice", "type": "model"}'
bad_create "name with a space" '{"name": "has space", "organization": "alice", "type": "model"}'
bad_create "name with '/'" '{"name": "a/b", "organization": "alice", "type": "model"}'
bad_create "name '../../etc'" '{"name": "../../etc", "organization": "alice", "type": "model"}'
bad_create "name with NUL" '{"name": "nul\u0000x", "organization": "alice", "type": "model"}'
bad_create "name with a backslash" '{"name": "back\\slash", "organization": "alice", "type": "model"}'
bad_create "name with non-ASCII" '{"name": "modèle", "organization": "alice", "type": "model"}'
bad_create "a 97-character name" "{\"name\": \"$(printf 'a%.0s' {1..97})\", \"organization\": \"alice\", \"type\": \"model\"}"
bad_create "organization '../alice'" '{"name": "ok-name", "organization": "../alice", "type": "model"}' '400|403|404'
bad_create "organization with a backslash" '{"name": "ok-name", "organization": "alice\\..", "type": "model"}' '400|403|404'
bad_create "unknown type" '{"name": "ok-name", "organization": "alice", "type": "weights"}'
bad_create "a malformed JSON body" '{"name": "ok-name", "organization": '
bad_create "a JSON array body" '["ok-name"]'
req POST "$BASE/api/repos/move" "${AUTH[@]}" "${JSON[@]}" \
  --data-binary '{"fromRepo": "alice/list-a", "toRepo": "alice/../../x", "type": "model"}'
check_hf_error "move to 'alice/../../x' -> 400" 400 '?'
req GET "$BASE/api/models/alice/list-a"
check_status "  alice/list-a still there" 200

section "bad input: LFS"
LFS=(-H 'Accept: application/vnd.git-lfs+json' -H 'Content-Type: application/vnd.git-lfs+json' -u "hf_user:$ALICE")
BATCH="$R.git/info/lfs/objects/batch"
check_lfs_error() {  # check_lfs_error DESC STATUS_ERE: status + LFS JSON {"message": ...}
  local problems=()
  [[ "$ST" =~ ^($2)$ ]] || problems+=("expected status: $2")
  [[ "$(jbody '.message | type')" == string ]] || problems+=("expected a JSON body with a \"message\"")
  if ((${#problems[@]} == 0)); then pass "$1"; else _fail_http "$1" "${problems[@]}"; fi
}
req POST "$BATCH" "${LFS[@]}" --data-binary '{"operation": "upload", "objects": ['
check_lfs_error "malformed LFS batch body -> 4xx with {message}" '400|422'
req POST "$BATCH" "${LFS[@]}" --data-binary '{"operation": "steal", "objects": []}'
check_lfs_error "LFS batch with an unknown operation -> 4xx" '400|422'
req POST "$BATCH" "${LFS[@]}" \
  --data-binary '{"operation": "upload", "transfers": ["basic"], "objects": [{"oid": "../../../../etc/passwd", "size": 1}]}'
check_true "LFS batch with a bad oid: 422, or 200 with a per-object 422 and no actions" \
  bash -c '[[ "$1" == 422 ]] || [[ "$1" == 200 && "$(jq -r ".objects[0].error.code // empty" <"$2")" == 422 && "$(jq -r ".objects[0].actions // empty" <"$2")" == "" ]]' _ "$ST" "$BODY"
req POST "$BATCH" "${LFS[@]}" \
  --data-binary "{\"operation\": \"upload\", \"objects\": [{\"oid\": \"$(printf '%064d' 0)\", \"size\": -5}]}"
check_true "LFS batch with a negative size: 422 (whole or per object)" \
  bash -c '[[ "$1" == 422 ]] || [[ "$1" == 200 && "$(jq -r ".objects[0].error.code // empty" <"$2")" == 422 ]]' _ "$ST" "$BODY"
python3 - "$T/big.json" <<'EOF'
import sys
n = 20 * 1024 * 1024 // 60 + 1
with open(sys.argv[1], "w") as f:
    f.write('{"operation": "upload", "transfers": ["basic"], "objects": [')
    f.write(",".join('{"oid": "%064x", "size": 1}' % i for i in range(n)))
    f.write("]}")
EOF
info "oversized batch body: $(stat -c %s "$T/big.json") bytes"
req POST "$BATCH" "${LFS[@]}" --data-binary "@$T/big.json"
check_lfs_error "oversized (20 MB) LFS batch body -> 4xx (413 best) with an LFS {message}" '400|413|422'
req GET "$BASE/healthz"
check_status "  server still healthy after the oversized body" 200

# A real upload offer, then PUTs that lie about the bytes.
head -c 300000 "$ONNX" >"$T/obj.bin"
printf 'salt-%s' "$$" >>"$T/obj.bin"
OBJ_SHA="$(sha256_of "$T/obj.bin")"
OBJ_SIZE="$(stat -c %s "$T/obj.bin")"
head -c "$OBJ_SIZE" "$TESS" >"$T/wrong.bin"
WRONG_SHA="$(sha256_of "$T/wrong.bin")"
req POST "$BATCH" "${LFS[@]}" \
  --data-binary "{\"operation\": \"upload\", \"transfers\": [\"basic\"], \"ref\": {\"name\": \"refs/heads/main\"}, \"objects\": [{\"oid\": \"$OBJ_SHA\", \"size\": $OBJ_SIZE}], \"hash_algo\": \"sha256\"}"
check_status "LFS batch upload offer -> 200" 200
check_hdr_match "  Content-Type application/vnd.git-lfs+json" Content-Type '^application/vnd\.git-lfs\+json'
HREF="$(jbody '.objects[0].actions.upload.href // empty')"
check_match "  upload href is absolute on this host" "^$BASE/" "$HREF"
mapfile -t UP_HDRS < <(jbody '.objects[0].actions.upload.header // {} | to_entries[] | "\(.key): \(.value)"')
UP=()
for h in "${UP_HDRS[@]}"; do UP+=(-H "$h"); done
blob_files() { (cd "$DATA" && find blobs -type f 2>/dev/null | LC_ALL=C sort); }
tmp_files() { (cd "$DATA" && find tmp -type f 2>/dev/null | LC_ALL=C sort); }
tmp_empty_soon() {  # bounded poll: tmp/ has no files within ~5 s
  local i
  for ((i = 0; i < 100; i++)); do [[ -z "$(tmp_files)" ]] && return 0; sleep 0.05; done
  return 1
}
blob_files >"$T/blobs.before"
if [[ -n "$HREF" ]]; then
  req PUT "$HREF" "${UP[@]}" -H 'Content-Type: application/octet-stream' --data-binary "@$T/wrong.bin"
  check_status "PUT with bytes whose sha256 differs (same size) -> 4xx" '400|422'
  check_true "  nothing new under blobs/" cmp -s "$T/blobs.before" <(blob_files)
  check_true "  tmp/ left empty" tmp_empty_soon
  head -c 1000 "$T/obj.bin" >"$T/short.bin"
  req PUT "$HREF" "${UP[@]}" -H 'Content-Type: application/octet-stream' --data-binary "@$T/short.bin"
  check_status "PUT with fewer bytes than the object size -> 4xx" '400|422'
  cat "$T/obj.bin" "$T/obj.bin" >"$T/long.bin"
  req PUT "$HREF" "${UP[@]}" -H 'Content-Type: application/octet-stream' --data-binary "@$T/long.bin"
  check_status "PUT with more bytes than the object size -> 4xx" '400|422|413'
  check_true "  nothing new under blobs/" cmp -s "$T/blobs.before" <(blob_files)

  python3 - "$HREF" "$T/obj.bin" "${UP_HDRS[@]}" <<'EOF' >"$T/cut.out" 2>&1
import socket, sys, urllib.parse
href, path, hdrs = sys.argv[1], sys.argv[2], sys.argv[3:]
data = open(path, "rb").read()
u = urllib.parse.urlsplit(href)
target = u.path + ("?" + u.query if u.query else "")
head = [f"PUT {target} HTTP/1.1", f"Host: {u.netloc}", f"Content-Length: {len(data)}",
        "Content-Type: application/octet-stream"] + hdrs
s = socket.create_connection((u.hostname, u.port), timeout=10)
s.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + data[: len(data) // 2])
s.close()  # cut short: half the announced bytes, then the connection goes away
print("sent", len(data) // 2, "of", len(data))
EOF
  info "cut-short upload: $(cat "$T/cut.out")"
  req GET "$BASE/healthz"
  check_status "  server healthy after an upload cut short" 200
  check_true "  upload cut short: tmp/ cleaned up" tmp_empty_soon
  check_true "  upload cut short: nothing new under blobs/" cmp -s "$T/blobs.before" <(blob_files)

  req PUT "$HREF" "${UP[@]}" -H 'Content-Type: application/octet-stream' --data-binary "@$T/obj.bin"
  check_status "control: PUT with the right bytes -> 2xx" '200|201|204'
  check_true "  the object is now under blobs/" bash -c 'grep -q "$1" <<<"$2"' _ "$OBJ_SHA" "$(blob_files)"
  check_false "  the wrong bytes' digest was never stored" bash -c 'grep -q "$1" <<<"$2"' _ "$WRONG_SHA" "$(blob_files)"
  req PUT "$HREF" -H 'Content-Type: application/octet-stream' --data-binary "@$T/obj.bin" -H 'Authorization:'
  info "PUT without the action headers -> $ST (must not be 5xx)"
  check_status "PUT without the action's headers: not a 5xx" '[1-4][0-9][0-9]'
else
  fail "LFS upload checks skipped: no upload href in the batch answer"
fi
req PUT "$R.git/info/lfs/objects/$(printf '%064d' 7)" -H 'Content-Type: application/octet-stream' --data-binary 'x'
check_status "anonymous PUT to a made-up LFS object URL -> 4xx" '4[0-9][0-9]'
check_true "  nothing new under blobs/ (besides the control object)" \
  bash -c 'diff <(grep -v "$1" "$2") <(grep -v "$1" <<<"$3") >/dev/null' _ "$OBJ_SHA" "$T/blobs.before" "$(blob_files)"

snapshot | grep -v "$OBJ_SHA" | grep -v '^blobs/sha256/[0-9a-f]\{2\}$\|^blobs/sha256/[0-9a-f]\{2\}/[0-9a-f]\{2\}$' >"$T/snap.after"
grep -v '^blobs/sha256/[0-9a-f]\{2\}$\|^blobs/sha256/[0-9a-f]\{2\}/[0-9a-f]\{2\}$' "$T/snap.before" >"$T/snap.before2"
if diff "$T/snap.before2" "$T/snap.after" >"$T/snap.diff"; then
  pass "bad input wrote nothing under repos/ or blobs/"
else
  fail "bad input wrote nothing under repos/ or blobs/" "$(head -n 20 "$T/snap.diff")"
fi
req GET "$BASE/api/models?author=alice&limit=1000" "${AUTH[@]}"
check_eq "repo list unchanged by bad input" "$(cat "$T/repos.before")" "$(jbody '[.[].id] | sort | join(" ")')"

section "shutdown"
stop_server
check_eq "SIGTERM: server exits 0" 0 "$SERVER_RC"
finish
