#!/usr/bin/env bash
# Issue 19 §5: webhooks end to end. The routes huggingface_hub's create_webhook family calls
# (the same requests, by curl: the Python client is not in Debian), answered field by field;
# a receiver on 127.0.0.1 (webhook_receiver.py) gets one delivery per event — git pushes,
# a new branch and tag, repo settings, discussions and comments — in the public hub's
# payload shape with the secret in X-Webhook-Secret; domains and watched users filter what
# is sent, and a private repo's events reach only webhooks whose owner may read it; a
# receiver answering 500 is retried with back-off and every attempt is in the delivery log;
# a hanging one is given up on while the push it came from has long returned; a disabled
# or deleted webhook gets nothing more; and every bad body, URL, id and token is a clear
# 4xx that changes nothing. Push speed with such receivers is measured by
# bench/webhook_push.sh, not here.
# Usage: webhooks.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup: ann owns ann/m and ann/priv; bob and carl are other users"
DATA="$T/data"
mkdir -p "$DATA"
new_user ann
new_user bob
ANN="$(new_token ann --role write)"
ANN_READ="$(new_token ann --role read)"
BOB="$(new_token bob --role write)"
RLOG="$T/received.jsonl"
: >"$RLOG"
python3 "$REPO_ROOT/tests/integration/webhook_receiver.py" "$RLOG" "$T/rport" 6 &
EXTRA_PIDS+=($!)
wait_until 10 test -s "$T/rport" || die "the webhook receiver did not start"
RPORT="$(cat "$T/rport")"
RECV="http://127.0.0.1:$RPORT"
# A second receiver for the one that hangs: a receiver that did not answer is paused as a
# whole (host and port), and the first must stay reachable.
RLOG2="$T/received2.jsonl"
: >"$RLOG2"
python3 "$REPO_ROOT/tests/integration/webhook_receiver.py" "$RLOG2" "$T/rport2" 6 &
EXTRA_PIDS+=($!)
wait_until 10 test -s "$T/rport2" || die "the second webhook receiver did not start"
RECV2="http://127.0.0.1:$(cat "$T/rport2")"
RL="$RLOG"  # the log the helpers below read
# Loopback receivers are allowed by name; retries after 1 s, 2 s, 4 s; a hang given up at 2 s.
start_server "$DATA" --set webhooks.allow_private_hosts=127.0.0.1 \
  --set webhooks.retry_base_s=1 --set webhooks.timeout_s=2 --set webhooks.max_attempts=4 ||
  die "hangar serve did not start"
A=(-H "Authorization: Bearer $ANN")
B=(-H "Authorization: Bearer $BOB")
J=(-H 'Content-Type: application/json')
must_create "$ANN" m ann model false
must_create "$ANN" priv ann model true
HA="$(cred_helper ann "$ANN")"
W="$T/work"
gitc "$HA" clone -q "$BASE/ann/m" "$W" 2>"$T/clone.err" || die "clone ann/m" "$(brief "$T/clone.err")"
WP="$T/work-priv"
gitc "$HA" clone -q "$BASE/ann/priv" "$WP" 2>"$T/clone.err" || die "clone ann/priv" "$(brief "$T/clone.err")"
HOOKS="$BASE/api/settings/webhooks"

# received PATH_PREFIX [JQ_FILTER]: the bodies POSTed under PATH_PREFIX (one JSON per line),
# each filtered by JQ_FILTER (default: the whole entry).
received() { jq -c --arg p "$1" "select(.path | startswith(\$p)) | ${2:-.}" <"$RL"; }
# count PATH_PREFIX [EVENT]: how many deliveries came under PATH_PREFIX (of scope.action EVENT).
count() {
  jq -r --arg p "$1" --arg e "${2:-}" \
    'select(.path | startswith($p)) | select($e == "" or (.body.event.scope + "." + .body.event.action) == $e) | 1' \
    <"$RL" | wc -l
}
# has_count N PATH_PREFIX [EVENT]: for wait_until.
has_count() { [[ "$(count "${@:2}")" -ge "$1" ]]; }
# last PATH_PREFIX EVENT JQ: JQ on the last delivery of EVENT under PATH_PREFIX.
last() {
  jq -r --arg p "$1" --arg e "$2" \
    'select(.path | startswith($p)) | select((.body.event.scope + "." + .body.event.action) == $e)' \
    <"$RL" | jq -rs "last | $3"
}
# create TOKEN JSON: POST a webhook.
create() { req POST "$HOOKS" -H "Authorization: Bearer $1" "${J[@]}" --data-binary "$2"; }
# settle: long enough for a queued delivery to have run (the job threads poll every 1 s).
settle() { sleep 2.5; }

section "create_webhook: POST /api/settings/webhooks as huggingface_hub sends it"
create "$ANN" "{\"watched\":[{\"type\":\"model\",\"name\":\"ann/m\"}],\"url\":\"$RECV/ok/w1\",\"domains\":[\"repo\",\"discussion\"],\"secret\":\"s3cret\"}"
check_status "create → 200" 200
W1="$(jbody .webhook.id)"
check_match "  webhook.id is 24 hex" '^[0-9a-f]{24}$' "$W1"
check_json "  webhook.url" .webhook.url "$RECV/ok/w1"
check_json "  webhook.watched" '.webhook.watched | tostring' '[{"type":"model","name":"ann/m"}]'
check_json "  webhook.domains" '.webhook.domains | tostring' '["repo","discussion"]'
check_json "  webhook.secret" .webhook.secret s3cret
check_json "  webhook.disabled" .webhook.disabled false
check_json "  webhook.job is null (Hangar runs no jobs)" .webhook.job null
create "$ANN" "{\"watched\":[{\"type\":\"user\",\"name\":\"ann\"}],\"url\":\"$RECV/ok/w2\",\"domains\":[\"discussions\"]}"
check_status "create (user watch, domain 'discussions' as the client's type names it) → 200" 200
W2="$(jbody .webhook.id)"
check_json "  domains normalized to the hub's 'discussion'" '.webhook.domains | tostring' '["discussion"]'
check_json "  no secret → null" .webhook.secret null
create "$BOB" "{\"watched\":[{\"type\":\"user\",\"name\":\"ann\"}],\"url\":\"$RECV/ok/bob\"}"
check_status "bob watches user ann (no domains: every domain) → 200" 200
WB="$(jbody .webhook.id)"
check_json "  domains default to repo and discussion" '.webhook.domains | tostring' '["repo","discussion"]'

section "list_webhooks / get_webhook"
req GET "$HOOKS" "${A[@]}"
check_status "list → 200" 200
check_json "  a JSON array of ann's two webhooks, oldest first" '[.[].id] | tostring' "[\"$W1\",\"$W2\"]"
check_json "  each with id, url, watched, domains, secret, disabled" \
  '.[0] | [.url, (.watched|length), (.domains|length), .secret, .disabled] | tostring' \
  "[\"$RECV/ok/w1\",1,2,\"s3cret\",false]"
req GET "$HOOKS/$W1" "${A[@]}"
check_status "get → 200" 200
check_json "  {webhook: …} with its id" .webhook.id "$W1"
req GET "$HOOKS" "${B[@]}"
check_json "bob's list holds only his" '[.[].id] | tostring' "[\"$WB\"]"

section "a git push: one repo.content delivery, signed, in the public hub's shape"
BEFORE="$(git -C "$W" rev-parse HEAD)"
printf 'hello\n' >"$W/a.txt"
commit_push "$HA" "$W" "first"
P1="$HEAD_SHA"
wait_until 15 has_count 1 /ok/w1 repo.content.update || fail "w1 got the push within 15 s"
settle
check_eq "  exactly one delivery to w1 for the push" 1 "$(count /ok/w1 repo.content.update)"
check_eq "  X-Webhook-Secret is the secret" s3cret "$(last /ok/w1 repo.content.update '.headers["x-webhook-secret"]')"
check_eq "  Content-Type application/json" application/json "$(last /ok/w1 repo.content.update '.headers["content-type"]')"
check_eq "  event" '{"action":"update","scope":"repo.content"}' "$(last /ok/w1 repo.content.update '.body.event | tostring')"
check_eq "  repo.type, name, private" '["model","ann/m",false]' \
  "$(last /ok/w1 repo.content.update '.body.repo | [.type, .name, .private] | tostring')"
check_match "  repo.id and repo.owner.id are 24 hex" '^[0-9a-f]{24} [0-9a-f]{24}$' \
  "$(last /ok/w1 repo.content.update '.body.repo | "\(.id) \(.owner.id)"')"
check_eq "  repo.url" "{\"web\":\"$BASE/ann/m\",\"api\":\"$BASE/api/models/ann/m\"}" \
  "$(last /ok/w1 repo.content.update '.body.repo.url | tostring')"
check_eq "  repo.headSha is the pushed commit" "$P1" "$(last /ok/w1 repo.content.update .body.repo.headSha)"
check_eq "  updatedRefs: main from the old head to the new" \
  "[{\"ref\":\"refs/heads/main\",\"oldSha\":\"$BEFORE\",\"newSha\":\"$P1\"}]" \
  "$(last /ok/w1 repo.content.update '.body.updatedRefs | tostring')"
check_eq "  webhook: its id, version 3" "{\"id\":\"$W1\",\"version\":3}" \
  "$(last /ok/w1 repo.content.update '.body.webhook | tostring')"
check_eq "  w2 (discussion domain only) got no repo event" 0 "$(count /ok/w2)"
check_eq "  bob (watching ann) got the public repo's push once" 1 "$(count /ok/bob repo.content.update)"
check_eq "  bob's copy names bob's webhook" "$WB" "$(last /ok/bob repo.content.update .body.webhook.id)"
req GET "$HOOKS/$W1/deliveries" "${A[@]}"
check_status "deliveries log → 200" 200
check_json "  the newest: repo.content.update of models/ann/m, attempt 1, 200, ok" \
  '.[0] | [.event, .repo, .attempt, .status, .ok, .error] | tostring' \
  '["repo.content.update","models/ann/m",1,200,true,""]'
check_json_true "  with a latency and a time" '.[0] | (.latencyMs >= 0) and (.createdAt | test("^[0-9-]+T"))'

section "a new branch (API) and a tag (git): updatedRefs with oldSha null"
req POST "$BASE/api/models/ann/m/branch/dev" "${A[@]}" "${J[@]}" --data-binary '{}'
check_status "create_branch dev → 200" 200
wait_until 15 has_count 2 /ok/w1 repo.content.update || fail "w1 got the branch within 15 s"
check_eq "  refs/heads/dev created at main's head" "[{\"ref\":\"refs/heads/dev\",\"oldSha\":null,\"newSha\":\"$P1\"}]" \
  "$(last /ok/w1 repo.content.update '.body.updatedRefs | tostring')"
git -C "$W" tag v1
gitc "$HA" -C "$W" push -q origin v1 2>"$T/push.err" || fail "push tag v1" "$(brief "$T/push.err")"
wait_until 15 has_count 3 /ok/w1 repo.content.update || fail "w1 got the tag within 15 s"
check_eq "  refs/tags/v1 created" "[{\"ref\":\"refs/tags/v1\",\"oldSha\":null,\"newSha\":\"$P1\"}]" \
  "$(last /ok/w1 repo.content.update '.body.updatedRefs | tostring')"
req DELETE "$BASE/api/models/ann/m/branch/dev" "${A[@]}"
check_status "delete_branch dev → 200" 200
wait_until 15 has_count 4 /ok/w1 repo.content.update || fail "w1 got the deletion within 15 s"
check_eq "  refs/heads/dev deleted: newSha null" "[{\"ref\":\"refs/heads/dev\",\"oldSha\":\"$P1\",\"newSha\":null}]" \
  "$(last /ok/w1 repo.content.update '.body.updatedRefs | tostring')"

section "repo settings: repo.config update"
req PUT "$BASE/api/models/ann/m/settings" "${A[@]}" "${J[@]}" --data-binary '{"gated":"manual"}'
check_status "settings {gated: manual} → 200" 200
wait_until 15 has_count 1 /ok/w1 repo.config.update || fail "w1 got the settings change within 15 s"
check_eq "  updatedConfig" '{"gated":"manual"}' "$(last /ok/w1 repo.config.update '.body.updatedConfig | tostring')"
req PUT "$BASE/api/models/ann/m/settings" "${A[@]}" "${J[@]}" --data-binary '{"gated":false}'
wait_until 15 has_count 2 /ok/w1 repo.config.update || fail "w1 got the second change within 15 s"
check_eq "  gated off → updatedConfig.gated false" '{"gated":false}' "$(last /ok/w1 repo.config.update '.body.updatedConfig | tostring')"

section "discussions: discussion and discussion.comment events"
req POST "$BASE/api/models/ann/m/discussions" "${B[@]}" "${J[@]}" \
  --data-binary '{"title":"Hello","description":"First words","pullRequest":false}'
check_status "bob opens discussion 1 → 200" 200
wait_until 15 has_count 1 /ok/w2 discussion.create || fail "w2 got the discussion within 15 s"
check_eq "  w1 got it too (both domains)" 1 "$(count /ok/w1 discussion.create)"
check_eq "  discussion num, title, status, isPullRequest" '[1,"Hello","open",false]' \
  "$(last /ok/w2 discussion.create '.body.discussion | [.num, .title, .status, .isPullRequest] | tostring')"
check_eq "  discussion.url" "{\"web\":\"$BASE/ann/m/discussions/1\",\"api\":\"$BASE/api/models/ann/m/discussions/1\"}" \
  "$(last /ok/w2 discussion.create '.body.discussion.url | tostring')"
check_match "  discussion.id and author.id are 24 hex" '^[0-9a-f]{24} [0-9a-f]{24}$' \
  "$(last /ok/w2 discussion.create '.body.discussion | "\(.id) \(.author.id)"')"
check_eq "  comment: the description" '["First words",false]' \
  "$(last /ok/w2 discussion.create '.body.comment | [.content, .hidden] | tostring')"
check_eq "  repo is there too" ann/m "$(last /ok/w2 discussion.create .body.repo.name)"
req POST "$BASE/api/models/ann/m/discussions/1/comment" "${A[@]}" "${J[@]}" --data-binary '{"comment":"Thanks!"}'
check_status "ann comments → 200" 200
CID="$(jbody .newMessage.id)"
wait_until 15 has_count 1 /ok/w2 discussion.comment.create || fail "w2 got the comment within 15 s"
check_eq "  comment content, id as the API shows it" "[\"Thanks!\",\"$CID\"]" \
  "$(last /ok/w2 discussion.comment.create '.body.comment | [.content, .id] | tostring')"
check_match "  comment.url.web points into the thread" "^$BASE/ann/m/discussions/1#" \
  "$(last /ok/w2 discussion.comment.create .body.comment.url.web)"
req POST "$BASE/api/models/ann/m/discussions/1/status" "${A[@]}" "${J[@]}" --data-binary '{"status":"closed"}'
check_status "ann closes it → 200" 200
wait_until 15 has_count 1 /ok/w2 discussion.update || fail "w2 got the status change within 15 s"
check_eq "  discussion.update with status closed" closed "$(last /ok/w2 discussion.update .body.discussion.status)"

section "privacy: a private repo's events reach only owners who may read it"
printf 'secret\n' >"$WP/s.txt"
commit_push "$HA" "$WP" "private work"
wait_until 15 has_count 5 /ok/w1 || true
settle
check_eq "bob (cannot read ann/priv) got nothing of it" 0 \
  "$(received /ok/bob '.body.repo.name' | grep -c 'ann/priv')"
check_eq "w2 (ann's, discussion only) got no push" 0 "$(count /ok/w2 repo.content.update)"
create "$BOB" "{\"watched\":[{\"type\":\"model\",\"name\":\"ann/priv\"}],\"url\":\"$RECV/ok/bob2\"}"
check_hf_error "bob cannot watch ann/priv by name → 400" 400 "?"
check_match "  said as not found (its existence is not told)" 'not found' "$(jbody .error)"

section "a receiver answering 500: retried with back-off, each attempt logged"
create "$ANN" "{\"watched\":[{\"type\":\"model\",\"name\":\"ann/m\"}],\"url\":\"$RECV/fail/w3\",\"domains\":[\"repo\"]}"
check_status "create w3 (→ /fail) → 200" 200
W3="$(jbody .webhook.id)"
printf 'two\n' >"$W/b.txt"
commit_push "$HA" "$W" "second"
wait_until 20 has_count 4 /fail/w3 || fail "w3 was tried 4 times within 20 s" "tries: $(count /fail/w3)"
settle
check_eq "  exactly max_attempts (4) tries" 4 "$(count /fail/w3)"
mapfile -t TS < <(received /fail/w3 .t)
GAPS="$(python3 -c "import sys; t=[float(x) for x in sys.argv[1:]]; print(' '.join('%.2f' % (b-a) for a, b in zip(t, t[1:])))" "${TS[@]}")"
info "gaps between tries (s): $GAPS"
read -r G1 G2 G3 <<<"$GAPS"
check_true "  the waits grow: the third gap (~4 s) is longer than the first (~1 s)" \
  python3 -c "import sys; sys.exit(0 if float('$G3') > float('$G1') and float('$G1') >= 0.7 else 1)"
check_eq "  every try carried the same payload" 1 "$(received /fail/w3 '.body.updatedRefs | tostring' | sort -u | wc -l)"
req GET "$HOOKS/$W3/deliveries" "${A[@]}"
check_json "  the log: attempts 4,3,2,1, each status 500 and not ok" \
  '[.[] | [.attempt, .status, .ok]] | tostring' '[[4,500,false],[3,500,false],[2,500,false],[1,500,false]]'
check_json "  each with the error" '.[0].error' 'the receiver answered 500'
req DELETE "$HOOKS/$W3" "${A[@]}"
check_status "delete w3 → 200" 200

section "a receiver that hangs: the push returns at once; the delivery times out, is logged, and the receiver is paused"
RL="$RLOG2"
create "$ANN" "{\"watched\":[{\"type\":\"model\",\"name\":\"ann/m\"}],\"url\":\"$RECV2/hang/w4\",\"domains\":[\"repo\"]}"
check_status "create w4 (→ /hang, answered after 6 s) → 200" 200
W4="$(jbody .webhook.id)"
printf 'three\n' >"$W/c.txt"
commit_push "$HA" "$W" "third"
wait_until 15 has_count 1 /hang/w4 || fail "w4 was reached within 15 s"
check_true "  the push had returned while the receiver still held its request" test 1 -eq "$(count /hang/w4)"
wait_until 15 bash -c "curl -s -H 'Authorization: Bearer $ANN' '$HOOKS/$W4/deliveries' | jq -e 'length >= 1' >/dev/null" ||
  fail "w4's first attempt was logged within 15 s"
req GET "$HOOKS/$W4/deliveries" "${A[@]}"
check_json "  its attempt: no status, not ok" '.[-1] | [.attempt, .status, .ok] | tostring' '[1,0,false]'
check_match "  the error says it timed out" '[Tt]ime' "$(jbody '.[-1].error')"
check_true "  given up at the 2 s timeout" test "$(jbody '.[-1].latencyMs')" -lt 4000
wait_until 15 bash -c "curl -s -H 'Authorization: Bearer $ANN' '$HOOKS/$W4/deliveries' | jq -e 'length >= 2' >/dev/null" ||
  fail "w4's second attempt was logged within 15 s"
req GET "$HOOKS/$W4/deliveries" "${A[@]}"
check_json "  tried again after its back-off: attempt 2" '.[0].attempt' 2
check_match "  not sent: the receiver is paused after it did not answer" '^not sent: the receiver did not answer' "$(jbody '.[0].error')"
check_eq "  so it held no thread again (one request reached it)" 1 "$(count /hang/w4)"
RL="$RLOG"
req DELETE "$HOOKS/$W4" "${A[@]}"
check_status "delete w4 → 200" 200

section "disable, enable, delete"
req POST "$HOOKS/$W1/disable" "${A[@]}"
check_status "disable_webhook → 200" 200
check_json "  disabled true" .webhook.disabled true
N1="$(count /ok/w1 repo.content.update)"
printf 'four\n' >"$W/d.txt"
commit_push "$HA" "$W" "fourth"
wait_until 15 has_count "$(($(count /ok/bob repo.content.update) + 0))" /ok/bob repo.content.update
settle
check_eq "  a disabled webhook gets nothing" "$N1" "$(count /ok/w1 repo.content.update)"
req POST "$HOOKS/$W1/enable" "${A[@]}"
check_status "enable_webhook → 200" 200
check_json "  disabled false" .webhook.disabled false
printf 'five\n' >"$W/e.txt"
commit_push "$HA" "$W" "fifth"
wait_until 15 has_count "$((N1 + 1))" /ok/w1 repo.content.update || fail "enabled w1 got the push"
check_eq "  enabled again: the push arrives" "$((N1 + 1))" "$(count /ok/w1 repo.content.update)"
req POST "$HOOKS/$W1" "${A[@]}" "${J[@]}" \
  --data-binary "{\"watched\":[{\"type\":\"model\",\"name\":\"ann/m\"},{\"type\":\"model\",\"name\":\"ann/priv\"}],\"url\":\"$RECV/ok/w1b\",\"secret\":\"\"}"
check_status "update_webhook (url, watched, secret removed) → 200" 200
check_json "  the new url" .webhook.url "$RECV/ok/w1b"
check_json "  the new watched list" '[.webhook.watched[].name] | tostring' '["ann/m","ann/priv"]'
check_json "  secret removed" .webhook.secret null
check_json "  domains kept" '.webhook.domains | tostring' '["repo","discussion"]'
printf 'six\n' >"$WP/t.txt"
commit_push "$HA" "$WP" "private two"
wait_until 15 has_count 1 /ok/w1b repo.content.update || fail "w1 got ann/priv's push at its new url"
check_eq "  ann/priv's push, marked private" '["ann/priv",true]' \
  "$(last /ok/w1b repo.content.update '.body.repo | [.name, .private] | tostring')"
check_eq "  no X-Webhook-Secret without a secret" null "$(last /ok/w1b repo.content.update '.headers["x-webhook-secret"]')"
req DELETE "$HOOKS/$W1" "${A[@]}"
check_status "delete_webhook → 200" 200
N1B="$(count /ok/w1b)"
printf 'seven\n' >"$WP/u.txt"
commit_push "$HA" "$WP" "private three"
settle
check_eq "  a deleted webhook gets nothing more" "$N1B" "$(count /ok/w1b)"
req GET "$HOOKS/$W1" "${A[@]}"
check_hf_error "  get of the deleted one → 404" 404 "?"

section "a URL's password never reaches a log"
create "$ANN" '{"watched":[{"type":"model","name":"ann/m"}],"url":"http://u:hunter2@127.0.0.1:1/x","domains":["repo"]}'
check_status "create w5 (→ a closed port, with a password) → 200" 200
W5="$(jbody .webhook.id)"
printf 'eight\n' >"$W/f.txt"
commit_push "$HA" "$W" "eighth"
wait_until 15 bash -c "curl -s -H 'Authorization: Bearer $ANN' '$HOOKS/$W5/deliveries' | jq -e 'length >= 1' >/dev/null" ||
  fail "w5's attempt was logged within 15 s"
req GET "$HOOKS/$W5/deliveries" "${A[@]}"
check_json "  refused: no status, not ok" '.[-1] | [.status, .ok] | tostring' '[0,false]'
check_false "  the delivery log does not show the password" grep -q hunter2 "$BODY"
check_false "  nor does the server's log" grep -q hunter2 "$SERVER_ERR"
req DELETE "$HOOKS/$W5" "${A[@]}"
check_status "delete w5 → 200" 200

section "bad input: a clear 4xx that changes nothing"
req GET "$HOOKS"
check_hf_error "list without a token → 401" 401 "?"
create "$ANN_READ" "{\"watched\":[{\"type\":\"model\",\"name\":\"ann/m\"}],\"url\":\"$RECV/ok/x\"}"
check_hf_error "create with a read token → 403" 403 "?"
bad() {  # bad DESC JSON: a create that must be refused with 400
  create "$ANN" "$2"
  check_hf_error "$1 → 400" 400 "?"
}
WATCH='"watched":[{"type":"model","name":"ann/m"}]'
bad "malformed JSON" '{"watched": ['
bad "a JSON array" '[]'
bad "no url" "{$WATCH}"
bad "no watched" "{\"url\":\"$RECV/ok/x\"}"
bad "url not a string" "{$WATCH,\"url\":42}"
bad "watched not an array" "{\"watched\":\"ann/m\",\"url\":\"$RECV/ok/x\"}"
bad "a watched item without a name" "{\"watched\":[{\"type\":\"model\"}],\"url\":\"$RECV/ok/x\"}"
bad "watched empty" "{\"watched\":[],\"url\":\"$RECV/ok/x\"}"
bad "an unknown watched type" "{\"watched\":[{\"type\":\"paper\",\"name\":\"x\"}],\"url\":\"$RECV/ok/x\"}"
bad "a repo that does not exist" "{\"watched\":[{\"type\":\"model\",\"name\":\"ann/nope\"}],\"url\":\"$RECV/ok/x\"}"
bad "a user that does not exist" "{\"watched\":[{\"type\":\"user\",\"name\":\"nobody\"}],\"url\":\"$RECV/ok/x\"}"
bad "a user named as an org" "{\"watched\":[{\"type\":\"org\",\"name\":\"ann\"}],\"url\":\"$RECV/ok/x\"}"
bad "domains not an array" "{$WATCH,\"url\":\"$RECV/ok/x\",\"domains\":\"repo\"}"
bad "an unknown domain" "{$WATCH,\"url\":\"$RECV/ok/x\",\"domains\":[\"billing\"]}"
bad "domains empty" "{$WATCH,\"url\":\"$RECV/ok/x\",\"domains\":[]}"
bad "an ftp:// url" "{$WATCH,\"url\":\"ftp://127.0.0.1/x\"}"
bad "a file:// url" "{$WATCH,\"url\":\"file:///etc/passwd\"}"
bad "a url that is not one" "{$WATCH,\"url\":\"http//nohost\"}"
bad "a url with a space" "{$WATCH,\"url\":\"$RECV/ok/a b\"}"
bad "the hub itself" "{$WATCH,\"url\":\"$BASE/api/settings/webhooks\"}"
check_match "  said so" "this hub" "$(jbody .error)"
bad "the hub itself as localhost" "{$WATCH,\"url\":\"http://localhost:$PORT/x\"}"
bad "a private address not allowed" "{$WATCH,\"url\":\"http://10.1.2.3/x\"}"
bad "a loopback host not allowed by name" "{$WATCH,\"url\":\"http://127.0.0.2:$RPORT/ok/x\"}"
bad "a secret with a line break" "{$WATCH,\"url\":\"$RECV/ok/x\",\"secret\":\"a\\nb\"}"
bad "a secret over 256 bytes" "{$WATCH,\"url\":\"$RECV/ok/x\",\"secret\":\"$(printf 'x%.0s' {1..257})\"}"
bad "a job instead of a url" "{$WATCH,\"jobSourceId\":\"abc\"}"
bad "an unknown field" "{$WATCH,\"url\":\"$RECV/ok/x\",\"events\":[\"push\"]}"
req GET "$HOOKS" "${A[@]}"
check_json "  none of them made a webhook (ann has w2 only)" '[.[].id] | tostring' "[\"$W2\"]"
req POST "$HOOKS/$W2" "${A[@]}" "${J[@]}" --data-binary "{\"watched\":[],\"url\":\"$RECV/ok/changed\"}"
check_hf_error "update with watched empty → 400" 400 "?"
req GET "$HOOKS/$W2" "${A[@]}"
check_json "  w2 unchanged (url and watched)" '.webhook | [.url, (.watched | length)] | tostring' "[\"$RECV/ok/w2\",1]"
for m in GET DELETE; do
  req "$m" "$HOOKS/$W2" "${B[@]}"
  check_hf_error "bob $m ann's webhook → 404" 404 "?"
done
req POST "$HOOKS/$W2/disable" "${B[@]}"
check_hf_error "bob disables ann's webhook → 404" 404 "?"
req GET "$HOOKS/$W2/deliveries" "${B[@]}"
check_hf_error "bob reads ann's delivery log → 404" 404 "?"
# Refused from the head: bob's update of ann's webhook is answered before its body is read
# (no 100 Continue, the 404 with only the head sent).
P="$(python3 "$LIB_DIR/slow_bodies.py" probe "$PORT" "PUT /api/settings/webhooks/$W2 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer $BOB\r\nContent-Type: application/json\r\nContent-Length: 60000\r\nExpect: 100-continue\r\n\r\n" --wait 5)"
check_match "bob's 60 kB update of ann's webhook → 404 with only the head sent" '^HTTP/1.1 404' \
  "$(jq -r .status_line <<<"$P")"
check_eq "  without a 100 Continue first" false "$(jq -r .continue_first <<<"$P")"
req GET "$HOOKS/$W2" "${A[@]}"
check_json "  w2 still enabled" .webhook.disabled false
req GET "$HOOKS/0123456789abcdef01234567" "${A[@]}"
check_hf_error "an id that does not exist → 404" 404 "?"
req GET "$HOOKS/$W2/deliveries?limit=0" "${A[@]}"
check_hf_error "deliveries ?limit=0 → 400" 400 "?"
req POST "$HOOKS" "${A[@]}" "${J[@]}" -H 'Content-Length: 9999999' --data-binary '{}'
check_status "a declared body over 64 KiB → 413" 413

section "webhooks of a deleted repo's watcher: repo.delete is told"
must_create "$ANN" gone ann model false
wait_until 15 has_count 1 /ok/bob repo.create || fail "bob got ann/gone's creation"
check_eq "  repo.create for ann/gone" ann/gone "$(last /ok/bob repo.create .body.repo.name)"
req DELETE "$BASE/api/repos/delete" "${A[@]}" "${J[@]}" --data-binary '{"name":"gone","organization":"ann","type":"model"}'
check_status "delete ann/gone → 200" 200
wait_until 15 has_count 1 /ok/bob repo.delete || fail "bob got ann/gone's deletion"
check_eq "  repo.delete for ann/gone" ann/gone "$(last /ok/bob repo.delete .body.repo.name)"

section "a stopping hub does not wait for a receiver that hangs"
stop_server
check_eq "the hub stopped cleanly" 0 "$SERVER_RC"
start_server "$DATA" --set webhooks.allow_private_hosts=127.0.0.1 --set webhooks.timeout_s=120 ||
  die "hangar serve did not start again"
HOOKS="$BASE/api/settings/webhooks"
git -C "$W" remote set-url origin "$BASE/ann/m"
RLOG3="$T/received3.jsonl"
: >"$RLOG3"
python3 "$REPO_ROOT/tests/integration/webhook_receiver.py" "$RLOG3" "$T/rport3" 120 &
EXTRA_PIDS+=($!)
wait_until 10 test -s "$T/rport3" || die "the third webhook receiver did not start"
create "$ANN" "{\"watched\":[{\"type\":\"model\",\"name\":\"ann/m\"}],\"url\":\"http://127.0.0.1:$(cat "$T/rport3")/hang/w6\",\"domains\":[\"repo\"]}"
check_status "create w6 (→ a receiver that answers after 120 s; timeout 120 s) → 200" 200
printf 'nine\n' >"$W/g.txt"
commit_push "$HA" "$W" "ninth"
wait_until 15 test -s "$RLOG3" || fail "w6's receiver was reached within 15 s"
STOP_START="$(date +%s%N)"
stop_server
STOP_MS=$((($(date +%s%N) - STOP_START) / 1000000))
info "SIGTERM to exit: ${STOP_MS} ms with a delivery in flight"
check_eq "  the hub stopped cleanly" 0 "$SERVER_RC"
check_true "  within 10 s, not the receiver's 120 s (the request is aborted)" test "$STOP_MS" -lt 10000

finish
