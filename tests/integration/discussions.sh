#!/usr/bin/env bash
# Issue 19 §2: discussions and pull requests end to end. A pull request opened by the real
# @huggingface/hub client (commit with isPullRequest, create_pr=1), a second commit pushed
# to refs/pr/N with git, comments (edited, hidden), a title change, the diff, a merge that
# moves the target branch and closes it; a conflicting pull request answers 409 and changes
# nothing; a merge commit when the target moved; listings with their filters and pages; and
# every bad input a clear 4xx that changes nothing. Answers are checked field by field in
# the shapes huggingface_hub's community.py reads.
# Usage: discussions.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup: ann owns ann/m; bob may read it"
DATA="$T/data"
mkdir -p "$DATA"
new_user ann
new_user bob
ANN="$(new_token ann --role write)"
BOB="$(new_token bob --role write)"
BOB_READ="$(new_token bob --role read)"
start_server "$DATA" || die "hangar serve did not start"
A=(-H "Authorization: Bearer $ANN")
B=(-H "Authorization: Bearer $BOB")
J=(-H 'Content-Type: application/json')
must_create "$ANN" m ann model false
must_create "$ANN" priv ann model true
HA="$(cred_helper ann "$ANN")"
W="$T/work"
gitc "$HA" clone -q "$BASE/ann/m" "$W" 2>"$T/clone.err" || die "clone ann/m" "$(brief "$T/clone.err")"
printf 'line one\nline two\n' >"$W/README.md"
printf 'alpha\n' >"$W/a.txt"
commit_push "$HA" "$W" "first files"
MAIN0="$HEAD_SHA"

# details NUM [curl args]: GET the discussion with its diff.
details() { req GET "$BASE/api/models/ann/m/discussions/$1?diff=1" "${@:2}"; }
# main_head: the commit main names, as the API says.
main_head() { req GET "$BASE/api/models/ann/m/revision/main"; jbody .sha; }
# post NUM WHAT JSON [curl args]: POST …/discussions/NUM/WHAT with a JSON body.
post() { req POST "$BASE/api/models/ann/m/discussions/$1/$2" "${J[@]}" --data-binary "$3" "${@:4}"; }

section "create_pr through @huggingface/hub's commit (isPullRequest)"
browser_setup
cat >"$T/pr.mjs" <<'JS'
const { commit } = await import(process.env.HUB_MODULE);
const res = await commit({
  repo: "ann/m", hubUrl: process.env.HUB, accessToken: process.env.TOKEN,
  title: "Add b.txt", description: "Adds **b**.",
  operations: [{ operation: "addOrUpdate", path: "b.txt", content: new Blob(["bravo\n"]) }],
  isPullRequest: true,
});
console.log(JSON.stringify(res));
JS
OUT="$(HUB="$BASE" TOKEN="$ANN" HUB_MODULE="file://$JS_DIR/node_modules/@huggingface/hub/dist/index.mjs" \
  "$NODE" "$T/pr.mjs" 2>"$T/node.err")" || fail "node ran commit(isPullRequest)" "$(brief "$T/node.err")"
PR_URL="$(jq -r .pullRequestUrl <<<"$OUT")"
C1="$(jq -r .commit.oid <<<"$OUT")"
check_match "pullRequestUrl ends with /discussions/1" '/ann/m/discussions/1$' "$PR_URL"
check_eq "  main did not move" "$MAIN0" "$(main_head)"
req GET "$PR_URL"
check_status "  the pullRequestUrl is a real page → 200" 200
check_match "  which shows the title" 'Add b.txt' "$(cat "$BODY")"
details 1
check_status "get_discussion_details(1) → 200" 200
check_json "  num" .num 1
check_json "  title (the commit's summary)" .title "Add b.txt"
check_json "  status open" .status open
check_json "  isPullRequest" .isPullRequest true
check_json "  author.name" .author.name ann
check_json "  repo.name" .repo.name ann/m
check_json "  repo.type" .repo.type model
check_json "  changes.base" .changes.base refs/heads/main
check_json "  filesWithConflicts is []" '.filesWithConflicts | tostring' '[]'
check_json "  createdAt parses as ISO 8601" '.createdAt | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T")' true
check_json "  first event: the description as a comment" '.events[0] | "\(.type) \(.data.latest.raw)"' "comment Adds **b**."
check_json "  then the commit event with its oid and subject" \
  '.events[1] | "\(.type) \(.data.oid) \(.data.subject)"' "commit $C1 Add b.txt"
check_json "  the diff adds b.txt" '.diff | contains("+++ b/b.txt") and contains("+bravo")' true

section "a second commit pushed to refs/pr/1 with git"
gitc "$HA" -C "$W" fetch -q origin refs/pr/1:refs/remotes/origin/pr1 2>"$T/f.err" || fail "fetch refs/pr/1" "$(brief "$T/f.err")"
git -C "$W" checkout -q -b pr1 origin/pr1
printf 'bravo\ncharlie\n' >"$W/b.txt"
git -C "$W" commit -qam "Second commit of the PR"
C2="$(git -C "$W" rev-parse HEAD)"
gitc "$HA" -C "$W" push -q origin HEAD:refs/pr/1 2>"$T/p.err" || fail "push to refs/pr/1" "$(brief "$T/p.err")"
git -C "$W" checkout -q main
details 1
check_json "  a second commit event, oid and subject" \
  '[.events[] | select(.type == "commit")] | length, (last | .data.oid + " " + .data.subject)' \
  "$(printf '2\n%s Second commit of the PR' "$C2")"
check_json "  the diff now holds charlie" '.diff | contains("+charlie")' true
check_eq "  main still did not move" "$MAIN0" "$(main_head)"

section "comments: post, edit, hide"
post 1 comment '{"comment":"Looks good, one nit."}' "${B[@]}"
check_status "bob comments → 200" 200
check_json "  newMessage.type" .newMessage.type comment
check_json "  newMessage.author.name" .newMessage.author.name bob
check_json "  newMessage.data.latest.raw" .newMessage.data.latest.raw "Looks good, one nit."
check_json "  not edited, not hidden" '.newMessage.data | "\(.edited) \(.hidden)"' "false false"
check_json "  html is escaped paragraphs" .newMessage.data.latest.html "<p>Looks good, one nit.</p>"
CID="$(jbody .newMessage.id)"
check_match "  its id is 24 hex digits" '^[0-9a-f]{24}$' "$CID"
post 1 "comment/$CID/edit" '{"content":"Looks good."}' "${A[@]}"
check_hf_error "ann edits bob's comment → 403" 403 Forbidden
post 1 "comment/$CID/edit" '{"content":"Looks good."}' "${B[@]}"
check_status "bob edits his comment → 200" 200
check_json "  updatedComment raw" .updatedComment.data.latest.raw "Looks good."
check_json "  edited" .updatedComment.data.edited true
check_json "  history: both versions, newest first" '[.updatedComment.data.history[].raw] | join("|")' "Looks good.|Looks good, one nit."
post 1 comment '{"comment":"<script>alert(1)</script>\nsecond line"}' "${B[@]}"
check_json "  markup in a comment is escaped in html" .newMessage.data.latest.html \
  "<p>&lt;script&gt;alert(1)&lt;/script&gt;<br>second line</p>"
HID="$(jbody .newMessage.id)"
req POST "$BASE/api/models/ann/m/discussions/1/comment/$HID/hide" "${A[@]}"
check_status "ann (a writer) hides bob's comment → 200" 200
check_json "  hidden, its text gone" '.updatedComment.data | "\(.hidden) [\(.latest.raw)] \(.history | length)"' "true [] 0"
details 1
check_json "  details show it hidden without its text" \
  '[.events[] | select(.type == "comment" and .data.hidden) | .data.latest.raw] | tostring' '[""]'
check_eq "  its text is in no answer" 0 "$(grep -c 'alert(1)' "$BODY")"

section "title and status"
post 1 title '{"title":"Add b.txt (renamed)"}' "${B[@]}"
check_hf_error "bob (neither author nor writer) renames → 403" 403 Forbidden
post 1 title '{"title":"Add b.txt and charlie"}' "${A[@]}"
check_status "ann renames → 200" 200
check_json "  newTitle from/to" '.newTitle | "\(.type): \(.data.from) → \(.data.to)"' "title-change: Add b.txt → Add b.txt and charlie"
post 1 status '{"status":"closed","comment":"Closing for now"}' "${A[@]}"
check_status "ann closes it with a comment → 200" 200
check_json "  newStatus" '.newStatus | "\(.type) \(.data.status)"' "status-change closed"
post 1 merge '{}' "${A[@]}"
check_hf_error "merging a closed pull request → 400" 400 "?"
check_eq "  main did not move" "$MAIN0" "$(main_head)"
post 1 status '{"status":"closed"}' "${A[@]}"
check_hf_error "closing it again → 400" 400 "?"
post 1 status '{"status":"open"}' "${A[@]}"
check_status "reopening → 200" 200
details 1
check_json "  status open again; the closing comment is an event" \
  '"\(.status) \([.events[] | select(.type == "comment") | .data.latest.raw] | index("Closing for now") != null)"' "open true"

section "merge: fast-forward"
post 1 merge '{}' "${B[@]}"
check_hf_error "bob (no write access) merges → 403" 403 Forbidden
post 1 merge '{"comment":"Thanks!"}' "${A[@]}"
check_status "ann merges → 200" 200
check_json "  newStatus merged" '.newStatus.data.status' merged
check_eq "  main moved to the pull request's head (a fast-forward)" "$C2" "$(main_head)"
details 1
check_json "  status merged" .status merged
check_json "  changes.mergeCommitId" .changes.mergeCommitId "$C2"
req GET "$BASE/ann/m/resolve/main/b.txt"
check_eq "  main has the file" "$(printf 'bravo\ncharlie')" "$(cat "$BODY")"
post 1 merge '{}' "${A[@]}"
check_hf_error "merging it again → 400" 400 "?"
post 1 status '{"status":"open"}' "${A[@]}"
check_hf_error "reopening a merged pull request → 400" 400 "?"

section "a conflicting pull request answers 409 and changes nothing"
req POST "$BASE/api/models/ann/m/discussions" "${A[@]}" "${J[@]}" \
  --data-binary '{"title":"Reword README","description":"","pullRequest":true}'
check_status "create_pull_request → 200" 200
check_json "  num 2" .num 2
details 2
check_json "  a draft" .status draft
gitc "$HA" -C "$W" pull -q origin main 2>/dev/null
gitc "$HA" -C "$W" fetch -q origin refs/pr/2:refs/remotes/origin/pr2
git -C "$W" checkout -q -b pr2 origin/pr2
printf 'line ONE\nline two\n' >"$W/README.md"
git -C "$W" commit -qam "README: shout"
gitc "$HA" -C "$W" push -q origin HEAD:refs/pr/2 2>"$T/p.err" || fail "push to refs/pr/2" "$(brief "$T/p.err")"
git -C "$W" checkout -q main
printf 'line uno\nline two\n' >"$W/README.md"
commit_push "$HA" "$W" "README: in Italian"
MAIN_BEFORE="$HEAD_SHA"
details 2
check_json "  open once it has a commit" .status open
check_json "  filesWithConflicts names README.md" '.filesWithConflicts | tostring' '["README.md"]'
post 2 merge '{}' "${A[@]}"
check_hf_error "merge → 409" 409 "?"
check_match "  the message names the file" 'README.md' "$(jbody .error)"
check_eq "  main did not move" "$MAIN_BEFORE" "$(main_head)"
details 2
check_json "  still open" .status open

section "a merge commit when main moved without conflict"
req POST "$BASE/api/models/ann/m/discussions" "${A[@]}" "${J[@]}" \
  --data-binary '{"title":"Add d.txt","pullRequest":true}'
check_json "create_pull_request → num 3" .num 3
gitc "$HA" -C "$W" fetch -q origin refs/pr/3:refs/remotes/origin/pr3
git -C "$W" checkout -q -b pr3 origin/pr3
printf 'delta\n' >"$W/d.txt"
git -C "$W" add d.txt && git -C "$W" commit -qm "Add d.txt"
gitc "$HA" -C "$W" push -q origin HEAD:refs/pr/3 2>"$T/p.err" || fail "push to refs/pr/3" "$(brief "$T/p.err")"
git -C "$W" checkout -q main
printf 'echo\n' >"$W/e.txt"
commit_push "$HA" "$W" "Add e.txt on main"
post 3 merge '{}' "${A[@]}"
check_status "merge → 200" 200
MERGED="$(main_head)"
details 3
check_json "  mergeCommitId is main's new head" .changes.mergeCommitId "$MERGED"
gitc "$HA" -C "$W" pull -q origin main 2>/dev/null
check_eq "  main's head is a merge of two parents" 2 "$(git -C "$W" rev-list --parents -n 1 "$MERGED" | wc -w | awk '{print $1 - 1}')"
check_true "  main has d.txt and e.txt" test -f "$W/d.txt" -a -f "$W/e.txt"

section "listings: filters and pages"
req POST "$BASE/api/models/ann/m/discussions" "${B[@]}" "${J[@]}" \
  --data-binary '{"title":"Question about the license","description":"Is it MIT?"}'
check_status "bob opens a discussion → 200" 200
check_json "  num 4, not a pull request" '"\(.num) \(.pullRequest)"' "4 false"
req GET "$BASE/api/models/ann/m/discussions"
check_status "get_repo_discussions → 200" 200
check_json "  count 4, start 0" '"\(.count) \(.start)"' "4 0"
check_json "  newest first" '[.discussions[].num] | join(",")' "4,3,2,1"
check_json "  item fields" '.discussions[0] | "\(.title)|\(.status)|\(.isPullRequest)|\(.author.name)|\(.repo.name)|\(.repo.type)|\(.numComments)"' \
  "Question about the license|open|false|bob|ann/m|model|1"
req GET "$BASE/api/models/ann/m/discussions?type=pull_request"
check_json "type=pull_request" '[.discussions[].num] | join(",")' "3,2,1"
req GET "$BASE/api/models/ann/m/discussions?type=discussion"
check_json "type=discussion" '[.discussions[].num] | join(",")' "4"
req GET "$BASE/api/models/ann/m/discussions?status=closed"
check_json "status=closed (merged counts)" '[.discussions[].num] | join(",")' "3,1"
req GET "$BASE/api/models/ann/m/discussions?status=open&author=bob"
check_json "status=open&author=bob" '[.discussions[].num] | join(",")' "4"
for i in $(seq 1 48); do
  req POST "$BASE/api/models/ann/m/discussions" "${B[@]}" "${J[@]}" --data-binary "{\"title\":\"t$i\"}"
done
req GET "$BASE/api/models/ann/m/discussions?p=1"
check_json "page 1 of 52: start 50, the 2 oldest" '"\(.count) \(.start) \([.discussions[].num] | join(","))"' "52 50 2,1"
req GET "$BASE/api/models/ann/m/discussions?status=nope"
check_hf_error "status=nope → 400" 400 "?"
req GET "$BASE/api/models/ann/m/discussions?type=issue"
check_hf_error "type=issue → 400" 400 "?"
req GET "$BASE/api/models/ann/m/discussions?p=-1"
check_hf_error "p=-1 → 400" 400 "?"

section "who may"
req GET "$BASE/api/models/ann/priv/discussions" "${B[@]}"
check_hf_error "bob lists a private repo's discussions → 404" 404 RepoNotFound
req POST "$BASE/api/models/ann/priv/discussions" "${B[@]}" "${J[@]}" --data-binary '{"title":"x"}'
check_hf_error "bob opens one there → 404" 404 RepoNotFound
# Refused from the head: the repo bob may not read is answered before the body is read.
P="$(python3 "$LIB_DIR/slow_bodies.py" probe "$PORT" "POST /api/models/ann/priv/discussions/1/comment HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer $BOB\r\nContent-Type: application/json\r\nContent-Length: 400000\r\nExpect: 100-continue\r\n\r\n" --wait 5)"
check_match "bob's 400 kB comment in ann's private repo → 404 with only the head sent" \
  '^HTTP/1.1 404' "$(jq -r .status_line <<<"$P")"
check_eq "  without a 100 Continue first" false "$(jq -r .continue_first <<<"$P")"
req POST "$BASE/api/models/ann/m/discussions" "${J[@]}" --data-binary '{"title":"x"}'
check_hf_error "anonymous → 401" 401 "?"
req POST "$BASE/api/models/ann/m/discussions" -H "Authorization: Bearer $BOB_READ" "${J[@]}" --data-binary '{"title":"x"}'
check_hf_error "a read token → 403" 403 Forbidden
req GET "$BASE/api/models/ann/m/discussions/4"
check_status "anonymous reads a public discussion → 200" 200

section "bad input changes nothing"
req GET "$BASE/api/models/ann/m/discussions"
COUNT="$(jbody .count)"
bad() {  # DESC STATUS PATH BODY
  req POST "$BASE/api/models/ann/m/discussions$3" "${B[@]}" "${J[@]}" --data-binary "$4"
  check_hf_error "$1 → $2" "$2" "?"
}
bad "malformed JSON" 400 "" '{"title":'
bad "a JSON array" 400 "" '["title"]'
bad "no title" 400 "" '{"description":"d"}'
bad "a title that is a number" 400 "" '{"title":5}'
bad "pullRequest that is a string" 400 "" '{"title":"t","pullRequest":"yes"}'
bad "a blank title" 400 "" '{"title":"   "}'
bad "a title of 201 characters" 400 "" "{\"title\":\"$(head -c 201 /dev/zero | tr '\0' x)\"}"
bad "a title with a newline" 400 "" '{"title":"a\nb"}'
bad "a title with an escape sequence" 400 "" '{"title":"a\u001b[31mb"}'
req POST "$BASE/api/models/ann/m/discussions" "${B[@]}" "${J[@]}" --data-binary $'{"title":"a\xffb"}'
check_hf_error "a title that is not UTF-8 → 400" 400 "?"
bad "a comment of 64 KiB + 1" 400 /4/comment "{\"comment\":\"$(head -c 65537 /dev/zero | tr '\0' x)\"}"
bad "an empty comment" 400 /4/comment '{"comment":""}'
bad "a comment that is an object" 400 /4/comment '{"comment":{}}'
bad "an unknown status" 400 /4/status '{"status":"merged"}'
bad "a status of 'draft'" 400 /4/status '{"status":"draft"}'
req POST "$BASE/api/models/ann/m/discussions/4/merge" "${A[@]}" "${J[@]}" --data-binary '{}'
check_hf_error "merging a discussion (not a pull request) → 400" 400 "?"
bad "a discussion that does not exist" 404 /999/comment '{"comment":"hi"}'
bad "a discussion number that is not a number" 400 /abc/comment '{"comment":"hi"}'
bad "a comment id that is not one" 404 /4/comment/zzz/edit '{"content":"x"}'
bad "a comment id of another discussion" 404 "/3/comment/$CID/edit" '{"content":"x"}'
req POST "$BASE/api/models/ann/m/discussions/4/comment" "${B[@]}" "${J[@]}" \
  -H 'Content-Length: 600000' --max-time 5 --data-binary ''
check_status "a body declared over 512 KiB → 413 from the head" 413
req GET "$BASE/api/models/ann/m/discussions/999"
check_hf_error "details of a discussion that does not exist → 404" 404 "?"
req GET "$BASE/api/models/ann/m/discussions"
check_eq "  no discussion was added" "$COUNT" "$(jbody .count)"
req GET "$BASE/api/models/ann/m/discussions/4"
check_json "  discussion 4 has only its first comment" '[.events[] | select(.type == "comment")] | length' 1

section "what a breaker found: unrelated histories, merged pull requests, odd bytes"
req POST "$BASE/api/models/ann/m/discussions" "${A[@]}" "${J[@]}" --data-binary '{"title":"Unrelated","pullRequest":true}'
UN="$(jbody .num)"
git -C "$W" checkout -q --orphan orphan && git -C "$W" rm -rqf . && printf 'z\n' >"$W/z.txt" &&
  git -C "$W" add z.txt && git -C "$W" commit -qm "an unrelated root"
gitc "$HA" -C "$W" push -qf origin "HEAD:refs/pr/$UN" 2>"$T/p.err" || fail "push an unrelated root" "$(brief "$T/p.err")"
git -C "$W" checkout -q -f main
details "$UN"
check_status "a pull request with an unrelated history: details → 200" 200
check_json "  filesWithConflicts is true, no diff" '"\(.filesWithConflicts) \(has("diff"))"' "true false"
req GET "$BASE/ann/m/discussions/$UN"
check_status "  its page → 200" 200
check_match "  which says it cannot be merged" 'shares no history' "$(cat "$BODY")"
MAIN_NOW="$(main_head)"
post "$UN" merge '{}' "${A[@]}"
check_hf_error "  merging it → 409" 409 "?"
check_eq "  main did not move" "$MAIN_NOW" "$(main_head)"
printf '{"key":"header","value":{"summary":"late"}}\n{"key":"file","value":{"path":"late.txt","content":"bGF0ZQo=","encoding":"base64"}}\n' >"$T/late.ndjson"
req POST "$BASE/api/models/ann/m/commit/refs%2Fpr%2F1" "${A[@]}" -H 'Content-Type: application/x-ndjson' --data-binary @"$T/late.ndjson"
check_hf_error "a commit to merged pull request #1 → 400" 400 "?"
details 1
check_json "  #1's diff is still what it merged" '.diff | contains("+++ b/b.txt") and (contains("late.txt") | not)' true
git -C "$W" checkout -q -b latin origin/main 2>/dev/null || git -C "$W" checkout -q -b latin main
printf 'x\n' >"$W/latin.txt" && git -C "$W" add latin.txt
GIT_AUTHOR_NAME=$'Jos\xe9 \e[2J' git -C "$W" -c i18n.commitEncoding=ISO-8859-1 commit -qm $'Caf\xe9 \e[31mred'
req POST "$BASE/api/models/ann/m/discussions" "${A[@]}" "${J[@]}" --data-binary '{"title":"Latin-1","pullRequest":true}'
LN="$(jbody .num)"
gitc "$HA" -C "$W" push -qf origin "HEAD:refs/pr/$LN" 2>"$T/p.err" || fail "push a Latin-1 commit" "$(brief "$T/p.err")"
git -C "$W" checkout -q -f main
details "$LN"
check_json "  a Latin-1 commit's event is valid JSON, its bytes mended" \
  '[.events[] | select(.type == "commit")] | last | (.data.subject | test("^Caf. .\\[31mred$")) and (.author.name | test("^Jos. .\\[2J$"))' true
req POST "$BASE/api/models/ann/m/discussions" "${B[@]}" "${J[@]}" --data-binary '{"title":"bob PR","pullRequest":true}'
check_hf_error "bob (a reader) opens a pull request → 403" 403 Forbidden
post 1 comment '{"comment":"\n\r\n\t "}' "${B[@]}"
check_hf_error "a comment of only line breaks → 400" 400 "?"
req GET "$BASE/api/models/ann/m/discussions/01"
check_hf_error "discussion number 01 → 400" 400 "?"
req GET "$BASE/api/models/ann/m/discussions?author=%00"
check_hf_error "author=%00 → 400" 400 "?"
req POST "$BASE/api/models/ann/m/discussions" "${B[@]}" "${J[@]}" --data-binary '{"title":"abc\u202etxt.exe"}'
check_hf_error "a title with a direction override → 400" 400 "?"
post 1 title '{"title":"Add b.txt and charlie"}' "${A[@]}"
check_hf_error "renaming to the same title → 400" 400 "?"

finish
