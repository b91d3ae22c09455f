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

browser_setup

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
node_tap_report "$T/node.out" browser_ui.test.mjs "$NODE_RC"
info "screenshots: $SHOTS ($(find "$SHOTS" -name '*.png' | wc -l) files)"

section "shutdown"
stop_server
check_eq "SIGTERM: server exits 0" 0 "$SERVER_RC"
finish
