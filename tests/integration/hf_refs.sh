#!/usr/bin/env bash
# Issue #3: branches and tags over HTTP (hf-api.md §6.5, §6.6), commits with create_pr=1
# (§7.6), and concurrent commits to one branch (the issue's concurrency acceptance point).
# Every 4xx is checked to leave all refs as they were.
# Usage: hf_refs.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user cora
CORA="$(new_token cora --role write)"
new_user rex
REX="$(new_token rex --role read)"
start_server "$DATA" || die "hangar serve did not start"
AUTH=(-H "Authorization: Bearer $CORA")
JS=(-H 'Content-Type: application/json')
ND=(-H 'Content-Type: application/x-ndjson')
must_create "$CORA" rr cora model false
API="$BASE/api/models/cora/rr"
GD="$DATA/repos/models/cora/rr.git"

b64() { printf '%s' "$1" | base64 -w0; }
head_of() { git --git-dir="$GD" rev-parse --verify -q "${1:-main}^{commit}"; }
refs_now() { git --git-dir="$GD" for-each-ref --format='%(refname) %(objectname)'; }
# commit_body FILE PATH CONTENT [PARENT]: an NDJSON commit adding one file.
commit_body() {
  local parent=""
  [[ -n "${4:-}" ]] && parent=",\"parentCommit\":\"$4\""
  printf '{"key":"header","value":{"summary":"add %s"%s}}\n{"key":"file","value":{"path":"%s","content":"%s","encoding":"base64"}}\n' \
    "$2" "$parent" "$2" "$(b64 "$3")" >"$1"
}
commit_body "$T/c0.ndjson" base.txt base
req POST "$API/commit/main" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/c0.ndjson"
check_status "a first commit on main → 200" 200
M0="$(head_of)"

section "branches (§6.5)"
req POST "$API/branch/dev" "${AUTH[@]}" "${JS[@]}" --data-binary '{}'
check_status "create dev from the default branch ({}) → 200" 200
check_eq "  dev points at main's head" "$M0" "$(head_of refs/heads/dev)"
req POST "$API/branch/dev" "${AUTH[@]}" "${JS[@]}" --data-binary '{}'
check_hf_error "create dev again → 409" 409 "?"
commit_body "$T/d.ndjson" dev.txt dev
req POST "$API/commit/dev" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/d.ndjson"
check_status "commit on dev → 200" 200
D1="$(jbody .commitOid)"
req POST "$API/branch/feat%2Fx" "${AUTH[@]}" "${JS[@]}" --data-binary '{"startingPoint":"dev"}'
check_status "create feat/x (encoded) from dev → 200" 200
check_eq "  feat/x points at dev's head" "$D1" "$(head_of refs/heads/feat/x)"
req GET "$BASE/cora/rr/resolve/feat%2Fx/dev.txt"
check_status "  /resolve/feat%2Fx/dev.txt → 200" 200
check_eq "  its bytes" "dev" "$(cat "$BODY")"
req POST "$API/branch/dev" "${AUTH[@]}" "${JS[@]}" --data-binary "{\"startingPoint\":\"$M0\",\"overwrite\":true}"
check_status "overwrite dev to main's head → 200" 200
check_eq "  dev moved back" "$M0" "$(head_of refs/heads/dev)"
req DELETE "$API/branch/feat%2Fx" "${AUTH[@]}"
check_status "delete feat/x → 200" 200
check_eq "  feat/x is gone" "" "$(head_of refs/heads/feat/x)"
req DELETE "$API/branch/feat%2Fx" "${AUTH[@]}"
check_hf_error "delete it again → 404" 404 RevisionNotFound

section "tags (§6.6)"
req POST "$API/tag/main" "${AUTH[@]}" "${JS[@]}" --data-binary '{"tag":"v1"}'
check_status "lightweight tag v1 on main → 200" 200
check_eq "  refs/tags/v1 is the commit itself" "$M0" "$(git --git-dir="$GD" rev-parse refs/tags/v1)"
req POST "$API/tag/$D1" "${AUTH[@]}" "${JS[@]}" --data-binary '{"tag":"v2","message":"release 2"}'
check_status "annotated tag v2 on a commit id → 200" 200
check_eq "  v2 is a tag object" "tag" "$(git --git-dir="$GD" cat-file -t refs/tags/v2)"
check_eq "  with the message and tagger" "release 2|cora" \
  "$(git --git-dir="$GD" for-each-ref --format='%(contents:subject)|%(taggername)' refs/tags/v2)"
req GET "$API/refs"
check_json "  GET refs lists v1" '[.tags[] | select(.name == "v1") | .targetCommit] | .[0]' "$M0"
check_json "  GET refs lists v2 peeled" '[.tags[] | select(.name == "v2") | .targetCommit] | .[0]' "$D1"
req GET "$BASE/cora/rr/resolve/v2/dev.txt"
check_status "  /resolve/v2/dev.txt → 200" 200
check_hdr "  X-Repo-Commit is the tagged commit" X-Repo-Commit "$D1"
req POST "$API/tag/main" "${AUTH[@]}" "${JS[@]}" --data-binary '{"tag":"v1"}'
check_hf_error "tag v1 again → 409" 409 "?"
req POST "$API/branch/from-tag" "${AUTH[@]}" "${JS[@]}" --data-binary '{"startingPoint":"v2"}'
check_status "create a branch from tag v2 → 200" 200
check_eq "  it points at the tagged commit" "$D1" "$(head_of refs/heads/from-tag)"
req DELETE "$API/tag/v1" "${AUTH[@]}"
check_status "delete v1 → 200" 200
check_eq "  v1 is gone" "" "$(head_of refs/tags/v1)"
req DELETE "$API/tag/v1" "${AUTH[@]}"
check_hf_error "delete it again → 404" 404 RevisionNotFound

section "bad input: a 4xx and no ref changed"
BEFORE="$(refs_now)"
bad() {  # bad DESC STATUS CODE METHOD URL [CURL ARGS...]
  local desc="$1" st="$2" code="$3" method="$4" url="$5"; shift 5
  req "$method" "$url" "$@"
  check_hf_error "$desc → $st" "$st" "$code"
  check_eq "  refs unchanged" "$BEFORE" "$(refs_now)"
}
bad "bad starting point" 404 RevisionNotFound POST "$API/branch/b1" "${AUTH[@]}" --data-binary '{"startingPoint":"nope"}'
bad "tag an unknown revision" 404 RevisionNotFound POST "$API/tag/nope" "${AUTH[@]}" --data-binary '{"tag":"t1"}'
for name in 'a..b' '-x' 'x.lock' ' ' 'HEAD' 'a~1' 'x/' '.hidden' '@' 'refs/pr/5' 'refs/tags/v2'; do
  bad "branch name '$name'" 400 BadRequest POST "$API/branch/$(urlenc "$name")" "${AUTH[@]}" --data-binary '{}'
done
for name in 'a..b' '-x' 'x.lock' ' ' 'refs/heads/x'; do
  bad "tag name '$name'" 400 BadRequest POST "$API/tag/main" "${AUTH[@]}" --data-binary "$(jq -cn --arg t "$name" '{tag: $t}')"
done
bad "tag without a name" 400 BadRequest POST "$API/tag/main" "${AUTH[@]}" --data-binary '{}'
bad "malformed body" 400 BadRequest POST "$API/branch/b2" "${AUTH[@]}" --data-binary '{"startingPoint":'
bad "emptyBranch with a startingPoint" 400 BadRequest POST "$API/branch/b3" "${AUTH[@]}" --data-binary '{"emptyBranch":true,"startingPoint":"main"}'
bad "delete the default branch" 403 Forbidden DELETE "$API/branch/main" "${AUTH[@]}"
bad "delete a missing tag" 404 RevisionNotFound DELETE "$API/tag/nope" "${AUTH[@]}"
RA=(-H "Authorization: Bearer $REX")
bad "create a branch with a read token" 403 Forbidden POST "$API/branch/b4" "${RA[@]}" --data-binary '{}'
bad "delete a branch with a read token" 403 Forbidden DELETE "$API/branch/dev" "${RA[@]}"
bad "create a tag with a read token" 403 Forbidden POST "$API/tag/main" "${RA[@]}" --data-binary '{"tag":"t2"}'
bad "delete a tag with a read token" 403 Forbidden DELETE "$API/tag/v2" "${RA[@]}"
bad "create a branch anonymously" 401 "?" POST "$API/branch/b5" --data-binary '{}'
bad "delete a branch anonymously" 401 "?" DELETE "$API/branch/dev"
bad "create a tag anonymously" 401 "?" POST "$API/tag/main" --data-binary '{"tag":"t3"}'
bad "delete a tag anonymously" 401 "?" DELETE "$API/tag/v2"
commit_body "$T/pr.ndjson" pr1.txt one
bad "create_pr with a read token" 403 Forbidden POST "$API/commit/main?create_pr=1" "${RA[@]}" "${ND[@]}" --data-binary @"$T/pr.ndjson"

section "emptyBranch"
req POST "$API/branch/blank" "${AUTH[@]}" --data-binary '{"emptyBranch":true}'
check_status "emptyBranch → 200" 200
BLANK="$(head_of refs/heads/blank)"
check_json "  answers the new commit" .targetCommit "$BLANK"
check_eq "  a root commit (no parents)" "" "$(git --git-dir="$GD" log -1 --format=%P "$BLANK")"
check_eq "  with the empty tree" 4b825dc642cb6eb9a060e54bf8d69288fbee4904 "$(git --git-dir="$GD" rev-parse "$BLANK^{tree}")"
req GET "$API/tree/blank"
check_json "  the tree API lists nothing" 'length' 0
commit_body "$T/blank.ndjson" first.txt first
req POST "$API/commit/blank" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/blank.ndjson"
check_status "  commits land on it" 200
req POST "$API/branch/blank" "${AUTH[@]}" --data-binary '{"emptyBranch":true}'
check_hf_error "  again → 409" 409 Conflict

section "create_pr=1 (§7.6)"
req POST "$API/commit/main?create_pr=1" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/pr.ndjson"
check_status "commit with create_pr=1 → 200" 200
P1="$(jbody .commitOid)"
check_json "  pullRequestUrl" .pullRequestUrl "$BASE/cora/rr/discussions/1"
check_eq "  refs/pr/1 holds the commit" "$P1" "$(head_of refs/pr/1)"
check_eq "  its parent is main's head" "$M0" "$(git --git-dir="$GD" rev-parse "$P1^")"
check_eq "  main unchanged" "$M0" "$(head_of)"
req GET "$BASE/cora/rr/resolve/refs%2Fpr%2F1/pr1.txt"
check_status "  /resolve/refs%2Fpr%2F1/pr1.txt → 200" 200
check_eq "  serves the new file" "one" "$(cat "$BODY")"
req GET "$BASE/cora/rr/resolve/main/pr1.txt"
check_hf_error "  not on main" 404 EntryNotFound
commit_body "$T/pr2.ndjson" pr2.txt two
req POST "$API/commit/main?create_pr=1" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/pr2.ndjson"
check_status "a second create_pr=1 → 200" 200
check_json "  pullRequestUrl names PR 2" .pullRequestUrl "$BASE/cora/rr/discussions/2"
check_eq "  refs/pr/2 exists" "$(jbody .commitOid)" "$(head_of refs/pr/2)"
check_eq "  main still unchanged" "$M0" "$(head_of)"
commit_body "$T/pr1b.ndjson" pr1b.txt more
req POST "$API/commit/refs%2Fpr%2F1" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/pr1b.ndjson"
check_status "a commit to refs%2Fpr%2F1 (an open PR) → 200" 200
check_eq "  refs/pr/1 moved to it" "$(jbody .commitOid)" "$(head_of refs/pr/1)"
check_eq "  on top of the PR's first commit" "$P1" "$(git --git-dir="$GD" rev-parse "$(head_of refs/pr/1)^")"
check_eq "  main unchanged" "$M0" "$(head_of)"
req POST "$API/commit/refs/pr/1" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/pr2.ndjson"
check_status "  unencoded refs/pr/1 works too" 200
BEFORE="$(refs_now)"
bad "a commit to a PR that does not exist" 404 RevisionNotFound POST "$API/commit/refs%2Fpr%2F99" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/pr2.ndjson"
bad "a commit to refs/tags/… " 404 RevisionNotFound POST "$API/commit/refs%2Ftags%2Fv1" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/pr2.ndjson"
bad "create_pr=1 from a PR ref" 400 BadRequest POST "$API/commit/refs%2Fpr%2F1?create_pr=1" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/pr2.ndjson"
req GET "$API/refs?include_prs=1"
check_json "  GET refs lists both PRs" '[.pullRequests[].ref] | sort | join(",")' "refs/pr/1,refs/pr/2"
req POST "$API/commit/main" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/pr.ndjson"
check_json "  without create_pr: no pullRequestUrl" '.pullRequestUrl // "none"' none
M1="$(head_of)"

section "concurrency: 8 commits to main at once, no parentCommit"
pids=()
for i in 1 2 3 4 5 6 7 8; do
  commit_body "$T/cc$i.ndjson" "c/$i.txt" "c$i"
  curl -sS -o "$T/cc$i.out" -w '%{http_code}' -X POST "${AUTH[@]}" "${ND[@]}" \
    --data-binary @"$T/cc$i.ndjson" "$API/commit/main" >"$T/cc$i.st" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
check_eq "  all 8 answered 200" "200 200 200 200 200 200 200 200" \
  "$(for i in 1 2 3 4 5 6 7 8; do cat "$T/cc$i.st"; echo; done | paste -sd' ')"
check_eq "  main advanced by exactly 8 commits" 8 "$(git --git-dir="$GD" rev-list --count "$M1..main")"
check_eq "  all 8 files exist" "c/1.txt c/2.txt c/3.txt c/4.txt c/5.txt c/6.txt c/7.txt c/8.txt" \
  "$(git --git-dir="$GD" ls-tree -r --name-only main c | paste -sd' ')"

section "concurrency: two commits with the same parentCommit"
M2="$(head_of)"
for i in 1 2; do
  commit_body "$T/st$i.ndjson" "s$i.txt" "s$i" "$M2"
  curl -sS -o "$T/st$i.out" -w '%{http_code}' -X POST "${AUTH[@]}" "${ND[@]}" \
    --data-binary @"$T/st$i.ndjson" "$API/commit/main" >"$T/st$i.st" 2>&1 &
  pids[$i]=$!
done
wait "${pids[1]}" "${pids[2]}"
check_eq "  one 200 and one 412" "200 412" "$( (cat "$T/st1.st"; echo; cat "$T/st2.st"; echo) | sort | paste -sd' ')"
check_eq "  main has exactly one new commit" 1 "$(git --git-dir="$GD" rev-list --count "$M2..main")"
check_eq "  git fsck clean" 0 "$(git --git-dir="$GD" fsck --no-progress >"$T/fsck.out" 2>&1; echo $?)"

section "shutdown"
stop_server
check_eq "SIGTERM: server exits 0" 0 "$SERVER_RC"
finish
