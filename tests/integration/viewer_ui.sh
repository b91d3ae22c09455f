#!/usr/bin/env bash
# Issue #15's dataset viewer in a browser: headless Debian Chromium driven by playwright-core
# (as browser_ui.sh) over a dataset repo pushed with git + git-lfs whose README declares
# three configs: birdstrikes.csv and boston.csv of shared/REAL-INPUTS.md (fetched by
# scripts/fetch-inputs.sh) and a small notes.csv written here (a long non-ASCII cell, an
# empty one). Once the export is done, tests/js/viewer_ui.test.mjs pages, searches,
# filters and switches splits in place through hangar.js and the JSON API, checks each
# table against the API's answer and against the page the server renders for the same URL,
# the column histograms, the page without JavaScript and the embed. This wrapper makes
# the data, starts the server and runs `node --test` on it.
#
# Screenshots, one full page per step (NN-step-name.png), are kept after the run in
#   ${HANGAR_ARTIFACTS:-<cmake build dir>/test-artifacts}/viewer_ui/
#
# Usage: viewer_ui.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

browser_setup

fetch_inputs
TABLES="$INPUTS/tables"
for f in birdstrikes.csv boston.csv; do
  [[ -f "$TABLES/$f" ]] || die "input $TABLES/$f missing"
done

SHOTS="${HANGAR_ARTIFACTS:-$(dirname "$HANGAR_BIN")/test-artifacts}/viewer_ui"
mkdir -p "$SHOTS" || die "cannot create the artifact dir $SHOTS"
rm -f "$SHOTS"/*.png

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice --email alice@example.org
ALICE="$(new_token alice --name laptop --role write)"
start_server "$DATA" || die "hangar serve did not start"
pass "server listening on $BASE"
HA="$(cred_helper alice "$ALICE")"

must_create "$ALICE" tables alice dataset false
W="$T/tables"
lfs_clone "$HA" "$BASE/datasets/alice/tables" "$W" '*.csv'
cp "$TABLES/birdstrikes.csv" "$TABLES/boston.csv" "$W/"
# notes: a cell of 1 + 2 × 150 bytes, so the 200-byte cut falls inside an "é"; an empty cell.
LONG="a$(printf 'é%.0s' $(seq 150))"
printf 'id,text\n1,%s\n2,\n3,short\n' "$LONG" >"$W/notes.csv"
cat >"$W/README.md" <<'YAML'
---
license: mit
configs:
- config_name: birdstrikes
  data_files: birdstrikes.csv
- config_name: boston
  data_files: boston.csv
- config_name: notes
  data_files: notes.csv
---
# Tables for the viewer's browser test
YAML
commit_push "$HA" "$W" tables
pass "pushed birdstrikes.csv, boston.csv and notes.csv with git-lfs"

exported() {
  req GET "$BASE/size?dataset=alice/tables"
  [[ "$ST" == 200 ]] && [[ "$(jbody '.pending | length')" == 0 ]] &&
    [[ "$(hdr X-Revision)" == "$HEAD_SHA" ]]
}
wait_until 240 exported || die "the export did not finish within 240 s" "$(exchange)"
pass "exported within ${WAITED_MS} ms of the push"
check_json "no config failed" '.failed | length' 0

section "node --test tests/js/viewer_ui.test.mjs"
(cd "$JS_DIR" && HANGAR_URL="$BASE" HANGAR_SHOTS="$SHOTS" HANGAR_LONG_CELL="$LONG" timeout 240 "$NODE" --test --test-reporter=tap viewer_ui.test.mjs) \
  >"$T/node.out" 2>&1
NODE_RC=$?
node_tap_report "$T/node.out" viewer_ui.test.mjs "$NODE_RC"
info "screenshots: $SHOTS ($(find "$SHOTS" -name '*.png' | wc -l) files)"

section "shutdown"
stop_server
check_eq "SIGTERM: server exits 0" 0 "$SERVER_RC"
finish
