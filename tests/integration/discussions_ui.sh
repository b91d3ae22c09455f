#!/usr/bin/env bash
# Issue 19 §2 in a browser: headless Debian Chromium driven by playwright-core walks the
# Community tab as a person does — a pull request's page with its commits and its diff, a
# comment posted through the form (Markdown rendered), the merge button moving main and
# closing the pull request, a conflicting pull request shown with its files and no merge
# button (a forged merge POST answers 409 and changes nothing), close and reopen, a new
# discussion through its form, and what an anonymous visitor sees. The steps are in
# tests/js/discussions_ui.test.mjs; this wrapper starts the server and makes the pull
# requests: one by create_pr=1 plus a commit pushed to refs/pr/1 with git, one that
# conflicts with main.
#
# Screenshots, one full page per step, are kept after the run in
#   ${HANGAR_ARTIFACTS:-<cmake build dir>/test-artifacts}/discussions_ui/
# Usage: discussions_ui.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

browser_setup
SHOTS="${HANGAR_ARTIFACTS:-$(dirname "$HANGAR_BIN")/test-artifacts}/discussions_ui"
mkdir -p "$SHOTS" || die "cannot create the artifact dir $SHOTS"
rm -f "$SHOTS"/*.png

section "setup: ann/ui with pull request #1 (clean) and #2 (conflicting)"
DATA="$T/data"
mkdir -p "$DATA"
PASSWORD="discussions-ui-$RANDOM-$RANDOM"
printf '%s\n' "$PASSWORD" | admin user create ann --password-stdin >"$T/admin.out" 2>&1 ||
  die "hangar admin user create ann" "$(head -c 500 "$T/admin.out")"
ANN="$(new_token ann --role write)"
start_server "$DATA" || die "hangar serve did not start"
must_create "$ANN" ui ann model false
HA="$(cred_helper ann "$ANN")"
W="$T/work"
gitc "$HA" clone -q "$BASE/ann/ui" "$W" 2>"$T/clone.err" || die "clone ann/ui" "$(brief "$T/clone.err")"
printf 'line one\nline two\n' >"$W/README.md"
commit_push "$HA" "$W" "first files"

# commit_to REV QUERY NDJSON_OPERATION_LINE SUMMARY: one commit through the HF API.
commit_to() {
  printf '%s\n%s\n' "{\"key\":\"header\",\"value\":{\"summary\":\"$4\",\"description\":\"\"}}" "$3" >"$T/c.ndjson"
  req POST "$BASE/api/models/ann/ui/commit/$1$2" -H "Authorization: Bearer $ANN" \
    -H 'Content-Type: application/x-ndjson' --data-binary @"$T/c.ndjson"
  [[ "$ST" == 200 ]] || { mapfile -t _ex < <(exchange); die "commit to $1" "${_ex[@]}"; }
}
commit_to main '?create_pr=1' \
  '{"key":"file","value":{"path":"b.txt","content":"YnJhdm8K","encoding":"base64"}}' "Add b.txt"
check_json "create_pr=1 → pull request #1" .pullRequestUrl "$BASE/ann/ui/discussions/1"
gitc "$HA" -C "$W" fetch -q origin refs/pr/1:refs/remotes/origin/pr1 || die "fetch refs/pr/1"
git -C "$W" checkout -q -b pr1 origin/pr1
printf 'bravo\ncharlie\n' >"$W/b.txt"
git -C "$W" commit -qam "Add charlie to b.txt"
PR1_HEAD="$(git -C "$W" rev-parse HEAD)"
gitc "$HA" -C "$W" push -q origin HEAD:refs/pr/1 2>"$T/p.err" || die "push to refs/pr/1" "$(brief "$T/p.err")"
git -C "$W" checkout -q main
req POST "$BASE/api/models/ann/ui/discussions" -H "Authorization: Bearer $ANN" \
  -H 'Content-Type: application/json' --data-binary '{"title":"Shout in the README","pullRequest":true}'
check_json "create_pull_request → #2" .num 2
commit_to refs%2Fpr%2F2 '' \
  '{"key":"file","value":{"path":"README.md","content":"bGluZSBPTkUKbGluZSB0d28K","encoding":"base64"}}' "README: shout"
commit_to main '' \
  '{"key":"file","value":{"path":"README.md","content":"bGluZSB1bm8KbGluZSB0d28K","encoding":"base64"}}' "README: in Italian"
MAIN_BEFORE="$(jbody .commitOid)"

section "node --test tests/js/discussions_ui.test.mjs"
(cd "$JS_DIR" && HANGAR_URL="$BASE" HANGAR_USER=ann HANGAR_PASSWORD="$PASSWORD" \
  HANGAR_WORK="$T" HANGAR_SHOTS="$SHOTS" HANGAR_PR1_HEAD="$PR1_HEAD" HANGAR_MAIN="$MAIN_BEFORE" \
  timeout 240 "$NODE" --test --test-reporter=tap discussions_ui.test.mjs) >"$T/node.out" 2>&1
NODE_RC=$?
node_tap_report "$T/node.out" discussions_ui.test.mjs "$NODE_RC"
info "screenshots: $SHOTS ($(find "$SHOTS" -name '*.png' | wc -l) files)"

section "shutdown"
stop_server
finish
