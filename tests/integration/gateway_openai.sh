#!/usr/bin/env bash
# Issue 16: the gateway through the real `openai` npm client (pinned in tests/js/package.json).
# This wrapper starts `hangar serve` (health checks every 200 ms), makes a site admin and a
# second user with tokens, and a model repo with two commits; then
# `node --test tests/js/gateway_openai.test.mjs` registers the model, starts its test
# backends (tests/js/gateway_backend.mjs) and creates the routes it drives.
#
# Usage: gateway_openai.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

JS_DIR="$REPO_ROOT/tests/js"
[[ -d "$JS_DIR/node_modules/openai" ]] ||
  (cd "$JS_DIR" && npm ci --silent >"$T/npm.out" 2>&1) ||
  die "tests/js/node_modules missing and npm ci failed" "$(brief "$T/npm.out" 500)"

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice --admin
ALICE="$(new_token alice --role write)"
new_user bob
BOB="$(new_token bob --role write)"
HANGAR_GATEWAY_HEALTH_INTERVAL_MS=200 start_server "$DATA" || die "hangar serve did not start"
pass "server listening on $BASE"
HA="$(cred_helper alice "$ALICE")"
must_create "$ALICE" gw-model alice model false
W="$T/model"
gitc "" clone -q "$BASE/alice/gw-model" "$W" 2>"$T/c.err" || die "clone" "$(brief "$T/c.err" 500)"
printf '{"model_type": "test", "step": 1}\n' >"$W/config.json"
(cd "$W" && git add -A && git commit -q -m "Step 1")
FIRST="$(git -C "$W" rev-parse HEAD)"
printf '{"model_type": "test", "step": 2}\n' >"$W/config.json"
(cd "$W" && git add -A && git commit -q -m "Step 2")
SECOND="$(git -C "$W" rev-parse HEAD)"
gitc "$HA" -C "$W" push -q origin main >"$T/p.out" 2>&1 || die "push" "$(brief "$T/p.out" 1000)"
pass "pushed alice/gw-model (two commits)"

FIX="$T/fixture.json"
jq -n --arg url "$BASE" --arg admin "$ALICE" --arg other "$BOB" --arg first "$FIRST" \
  --arg second "$SECOND" --arg backend "$JS_DIR/gateway_backend.mjs" \
  '{url: $url, adminToken: $admin, otherToken: $other, repo: "alice/gw-model",
    commits: [$first, $second], backend: $backend}' >"$FIX" || die "writing the fixture"

section "node --test tests/js/gateway_openai.test.mjs"
(cd "$JS_DIR" && HANGAR_FIXTURE="$FIX" timeout 600 node --test --test-reporter=tap \
  gateway_openai.test.mjs) >"$T/node.out" 2>&1
node_tap_report "$T/node.out" gateway_openai.test.mjs $?

section "shutdown"
stop_server
check_eq "SIGTERM: server exits 0" 0 "$SERVER_RC"
finish
