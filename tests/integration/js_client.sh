#!/usr/bin/env bash
# Issue #2: the real JS client (@huggingface/hub 2.15.0, pinned in tests/js/package.json)
# against `hangar serve`. This wrapper starts the server, makes users, tokens and repos,
# pushes content with git + git-lfs (the model of git_lfs_e2e.sh: the real Tesseract eng
# model and Silero VAD ONNX model over LFS, a non-ASCII config path), writes what the
# client should see to a fixture file, and runs `node --test tests/js/hf_client.test.mjs`
# with HANGAR_FIXTURE pointing at it.
#
# Usage: js_client.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

JS_DIR="$REPO_ROOT/tests/js"
[[ -d "$JS_DIR/node_modules/@huggingface/hub" ]] ||
  (cd "$JS_DIR" && npm ci --silent >"$T/npm.out" 2>&1) ||
  die "tests/js/node_modules missing and npm ci failed" "$(brief "$T/npm.out" 500)"
fetch_inputs

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice --email alice@example.org
ALICE="$(new_token alice --name laptop --role write)"
new_user bob
BOB="$(new_token bob --role write)"
start_server "$DATA" || die "hangar serve did not start"
pass "server listening on $BASE"
HA="$(cred_helper alice "$ALICE")"

must_create "$ALICE" js-model alice model false
W="$T/model"
gitc "" clone -q "$BASE/alice/js-model" "$W" 2>"$T/c.err" || die "clone alice/js-model" "$(brief "$T/c.err" 500)"
add_model_commits "$W" || die "model commits"
gitc "$HA" -C "$W" push -q origin main >"$T/p.out" 2>&1 || die "push alice/js-model" "$(brief "$T/p.out" 1000)"
pass "pushed alice/js-model"

must_create "$ALICE" js-private alice model true
P="$T/private"
gitc "$HA" clone -q "$BASE/alice/js-private" "$P" 2>"$T/c2.err" || die "clone alice/js-private" "$(brief "$T/c2.err" 500)"
printf 'only for alice\n' >"$P/secret.txt"
(cd "$P" && git lfs track "*.onnx" >/dev/null && cp "$ONNX" model.onnx && git add -A && git commit -q -m "Private files")
gitc "$HA" -C "$P" push -q origin main >"$T/p2.out" 2>&1 || die "push alice/js-private" "$(brief "$T/p2.out" 1000)"
pass "pushed alice/js-private"

must_create "$ALICE" js-data alice dataset false
D="$T/dataset"
gitc "" clone -q "$BASE/datasets/alice/js-data" "$D" 2>"$T/c3.err" || die "clone alice/js-data" "$(brief "$T/c3.err" 500)"
printf 'id,text\n1,héllo\n2,wörld\n' >"$D/train.csv"
(cd "$D" && git add train.csv && git commit -q -m "Add train split")
gitc "$HA" -C "$D" push -q origin main >"$T/p3.out" 2>&1 || die "push alice/js-data" "$(brief "$T/p3.out" 1000)"
pass "pushed datasets/alice/js-data"

FIX="$T/fixture.json"
jq -n \
  --arg url "$BASE" --arg token "$ALICE" --arg other "$BOB" --arg cache "$T/hf-cache" \
  --arg head "$(git -C "$W" rev-parse HEAD)" \
  --argjson commits "$(git -C "$W" rev-list HEAD | jq -R . | jq -s .)" \
  --argjson files "$(git -C "$W" ls-tree -r --name-only HEAD | jq -R . | jq -s .)" \
  --argjson dirs "$(git -C "$W" ls-tree -r -d --name-only HEAD | jq -R . | jq -s .)" \
  --argjson top "$(git -C "$W" ls-tree --name-only HEAD | jq -R . | jq -s .)" \
  --arg cfgsha "$(sha256_of "$W/config.json")" --arg cfgoid "$(git -C "$W" rev-parse HEAD:config.json)" \
  --argjson cfgsize "$(stat -c %s "$W/config.json")" \
  --arg nonascii "$NONASCII_FILE" --arg nonasciidir "$NONASCII_DIR" --arg nasha "$(sha256_of "$W/$NONASCII_FILE")" \
  --arg tsha "$TESS_SHA" --argjson tsize "$TESS_SIZE" --arg osha "$ONNX_SHA" --argjson osize "$ONNX_SIZE" \
  --arg phead "$(git -C "$P" rev-parse HEAD)" --arg dhead "$(git -C "$D" rev-parse HEAD)" \
  --arg csvsha "$(sha256_of "$D/train.csv")" --arg wdir "$W" \
  '{url: $url, token: $token, otherToken: $other, cacheDir: $cache,
    model: {repo: "alice/js-model", dir: $wdir, head: $head, commits: $commits, files: $files, dirs: $dirs, top: $top,
            regular: {path: "config.json", sha256: $cfgsha, size: $cfgsize, oid: $cfgoid},
            nonAscii: {path: $nonascii, dir: $nonasciidir, sha256: $nasha},
            lfs: {path: "tessdata/eng.traineddata", sha256: $tsha, size: $tsize},
            onnx: {path: "onnx/silero_vad_legacy.onnx", sha256: $osha, size: $osize}},
    private: {repo: "alice/js-private", head: $phead, file: "secret.txt", lfs: "model.onnx", lfsSha256: $osha},
    dataset: {repo: "alice/js-data", head: $dhead, file: "train.csv", sha256: $csvsha}}' >"$FIX" ||
  die "writing the fixture"

section "node --test tests/js/hf_client.test.mjs"
(cd "$JS_DIR" && HANGAR_FIXTURE="$FIX" node --test --test-reporter=tap hf_client.test.mjs) >"$T/node.out" 2>&1
NODE_RC=$?
# One line per JS test, in this script's format.
while IFS= read -r line; do
  if [[ "$line" =~ ^[[:space:]]*(not\ )?ok\ [0-9]+\ -\ (.*)$ ]]; then
    name="${BASH_REMATCH[2]}"
    [[ "$name" == *"hf_client.test.mjs"* ]] && continue
    if [[ -n "${BASH_REMATCH[1]}" ]]; then
      # The YAML block after "not ok N - name", up to its stack trace.
      mapfile -t detail < <(awk -v n="$name" '
        f && (/^[[:space:]]*(not )?ok [0-9]+ - / || /^[[:space:]]*stack:/ || /^[[:space:]]*\.\.\.$/) { exit }
        !f && /^[[:space:]]*not ok [0-9]+ - / && index($0, "- " n) { f = 1; next }
        f && !/^[[:space:]]*(---|duration_ms:|location:|failureType:)/' "$T/node.out" | head -n 30)
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

section "shutdown"
stop_server
check_eq "SIGTERM: server exits 0" 0 "$SERVER_RC"
finish
